"""The terminal client's words, from the catalogues the browser uses (``locales/``).

A small gettext: :func:`tr` looks a key up in the chosen language (else English, else the
key itself) and fills in its ``{placeholders}``; ``n`` also picks a plural form (CLDR's
``one``/``other``, as the browser's Intl.PluralRules does). The language is chosen once at
start: ``--lang CODE``, else ``ALUETTE_LANG``, else the first of gettext's variables
(``LANGUAGE``, ``LC_ALL``, ``LC_MESSAGES``, ``LANG``) that names a catalogue we have, else
English. Adding a language is adding ``locales/<code>.json`` (README, "Languages").
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import locales

if TYPE_CHECKING:       # rich is imported where it is used: `aluette-record verify` needs none
    from rich.text import Text

_state = {"language": "en"}


def language() -> str:
    """The language the terminal speaks now."""
    return _state["language"]


def set_language(code: str) -> str:
    """Speak ``code`` from now on (an unknown one: English); returns the code in use."""
    code = code.strip().lower()
    _state["language"] = code if code in locales.languages() else "en"
    return _state["language"]


def from_environment(environ: Mapping[str, str] | None = None) -> str:
    """The language the environment asks for, among the catalogues (else ``en``).

    ``fr_FR.UTF-8`` and ``fr`` both give ``fr``; ``LANGUAGE`` may list several
    (``fr:en``); ``C`` and ``POSIX`` mean no preference (English)."""
    env = os.environ if environ is None else environ
    have = locales.languages()
    for var in ("ALUETTE_LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        for tag in env.get(var, "").split(":"):
            code = tag.split(".")[0].split("@")[0].split("_")[0].split("-")[0].lower()
            if code in have:
                return code
            if code in ("c", "posix"):
                return "en"
    return "en"


def choose(flag: str | None, environ: Mapping[str, str] | None = None) -> str:
    """At start: the ``--lang`` flag if given, else the environment's language."""
    return set_language(flag if flag else from_environment(environ))


def tr(key: str, /, **params: Any) -> str:
    """The text of ``key`` in the current language, filled in from ``params`` (any names:
    ``key`` is positional-only)."""
    return locales.text(_state["language"], key, **params)


def tr_text(key: str, style: str = "", /, **params: Any) -> Text:
    """:func:`tr` as a rich ``Text`` in ``style`` whose ``Text`` parameters keep their own
    styles (a name in bold stays bold wherever the language puts it). ``key`` and ``style``
    are positional-only, so a placeholder may have any name."""
    from rich.text import Text

    marks = {k: f"\x00{k}\x00" for k, v in params.items() if isinstance(v, Text)}
    plain = {k: v for k, v in params.items() if k not in marks}
    out = Text(style=style)
    for i, piece in enumerate(tr(key, **plain, **marks).split("\x00")):
        if i % 2 and piece in marks:
            out.append_text(params[piece])
        else:
            out.append(piece)
    return out


def add_lang_flag(parser: argparse.ArgumentParser) -> None:
    """``--lang CODE`` on a command line (``aluette``, ``aluette-record``)."""
    codes = sorted(locales.languages())
    parser.add_argument("--lang", choices=codes, metavar="CODE", default=None,
                        help=tr("cli.lang.help", codes=", ".join(codes)))


def card_words(code: str) -> str:
    """A card's name in the current language: its own name for the named cards (R3's
    Monsieur, Madame…, the same in every language), else its rank and suit."""
    from server.game.cards import MAJEURES

    if code in MAJEURES:
        return MAJEURES[code][1]
    return tr(f"card.of.{code[1:2]}", rank=tr(f"rank.{code[:1]}"))


def contributed(n: int) -> str:
    """How many players the seed took a contribution from (R8a): the words of
    :func:`server.game.fair.contributed_words`, in the current language."""
    return tr("fair.contributed", n=n) if n else tr("fair.contributed.none")
