"""The message catalogues of Aluette Online's interfaces, one JSON file per language.

``<code>.json`` (``en.json``, ``fr.json``...) maps message keys to texts with ``{name}``
placeholders; a text that depends on a number is ``{"one": ..., "other": ...}`` (CLDR
plural categories); ``_language`` is the language's own name. The browser client reads the
same files (the server serves them, ``server/web``); the terminal client can read them
here. Adding a language is adding one file (README, "Languages").
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from importlib import resources
from typing import Any


def _one_is_0_or_1(n: float) -> bool:
    return n in (0, 1)


def _one_is_1(n: float) -> bool:
    return n == 1


_PLACEHOLDER = re.compile(r"\{(\w+)\}")

#: Plural rules of the languages whose "one" is not exactly n == 1 (CLDR).
_ONE: dict[str, Callable[[float], bool]] = {"fr": _one_is_0_or_1}


def languages() -> dict[str, str]:
    """Every catalogue there is: code -> the language's own name."""
    out = {}
    for entry in sorted(resources.files(__name__).iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".json"):
            code = entry.name[:-5]
            out[code] = str(catalogue(code).get("_language", code))
    return out


@cache
def catalogue(code: str) -> dict[str, Any]:
    """One language's catalogue (an unknown code: English)."""
    node = resources.files(__name__) / f"{code}.json"
    if not code.isalpha() or not node.is_file():
        node = resources.files(__name__) / "en.json"
    data = json.loads(node.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def text(code: str, key: str, /, **params: Any) -> str:
    """The text of ``key`` in language ``code`` (else English, else the key), filled in;
    ``n`` also chooses a plural form. ``code`` and ``key`` are positional-only, so a
    placeholder may have any name (``meta.private.code``'s ``{code}`` is a join code)."""
    value = catalogue(code).get(key, catalogue("en").get(key, key))
    if isinstance(value, dict):
        n = params.get("n", 0)
        one = _ONE.get(code, _one_is_1)(n)
        value = value.get("one" if one else "other", value.get("other", ""))
    # One pass, as the browser's i18n.mjs: a value is never read again for placeholders
    # (a player called "{name}" stays so).
    return _PLACEHOLDER.sub(lambda m: str(params[m[1]]) if m[1] in params else m[0], str(value))
