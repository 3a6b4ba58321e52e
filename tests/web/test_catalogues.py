"""Issue 31, Languages (and issue 28's replay and fair-deal texts): the message catalogues
(locales/*.json) are complete and agree.

- every catalogue has exactly English's keys, each text with English's placeholders (a
  translation that drops ``{name}`` or invents ``{nom}`` would show a hole or a brace);
- every key the browser client (server/web/static: ``t("key")``, ``t(`prefix.${x}`)``,
  ``data-i18n*``) or the terminal client (``client_cli``: ``tr("key")``) asks for exists in
  English, so no screen shows a bare key;
- the replay and fair-deal words (issue 28) are in the catalogues, not in the code.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import locales

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "server" / "web" / "static"
PLACEHOLDER = re.compile(r"\{(\w+)\}")


def load(code: str) -> dict[str, object]:
    data = json.loads((ROOT / "locales" / f"{code}.json").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def placeholders(value: object) -> set[str]:
    texts = value.values() if isinstance(value, dict) else [value]
    return {p for text in texts for p in PLACEHOLDER.findall(str(text))}


@pytest.mark.parametrize("code", sorted(set(locales.languages()) - {"en"}))
def test_every_catalogue_has_englishs_keys_and_placeholders(code: str) -> None:
    english, other = load("en"), load(code)
    assert sorted(set(english) - set(other)) == [], f"{code} lacks these"
    assert sorted(set(other) - set(english)) == [], f"{code} has keys English lacks"
    wrong = {k: (placeholders(english[k]), placeholders(other[k])) for k in english
             if k != "_language" and placeholders(english[k]) != placeholders(other[k])}
    assert wrong == {}
    for key, value in other.items():
        if isinstance(value, dict):
            assert "other" in value, key                 # CLDR: every language has "other"


def test_a_placeholder_may_have_any_name() -> None:
    """``locales.text``'s own parameters are positional-only: ``meta.private.code``'s
    ``{code}`` (a private table's join code) is filled like any placeholder, not taken for
    the language (it raised "multiple values for argument 'code'")."""
    assert locales.text("fr", "meta.private.code", code="AB12") == "privée, code AB12"
    assert locales.text("en", "meta.private.code", code="AB12", key="k") \
        == "private, join code AB12"


def js_keys() -> tuple[set[str], set[str]]:
    """Keys the browser asks for: literal keys, and patterns of keys built from a variable."""
    literal: set[str] = set()
    patterns: set[str] = set()
    for js in (STATIC / "js").glob("*.mjs"):
        src = js.read_text(encoding="utf-8")
        literal.update(re.findall(r"\bt\(\s*\"([^\"]+)\"", src))
        literal.update(re.findall(r"\bt\(\s*'([^']+)'", src))
        # Template keys: `replay.key.${word}.label`, wherever they are written.
        for tpl in re.findall(r"`([a-z_]+\.[\w.]*\$\{[^`]*)`", src):
            patterns.add(tpl)
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    literal.update(re.findall(r"data-i18n(?:-\w+)?=\"([^\"]+)\"", html))
    return literal, patterns


def test_every_key_the_browser_uses_is_in_english() -> None:
    english = load("en")
    literal, patterns = js_keys()
    assert len(literal) > 300, len(literal)             # the scan finds the client's words
    assert sorted(k for k in literal if k not in english) == []
    for tpl in patterns:
        regex = re.compile(re.sub(r"\\\$\\\{[^}]*\\\}", r"[\\w.]+", re.escape(tpl)) + r"\Z")
        assert any(regex.match(k) for k in english), f"no key fits `{tpl}`"


def test_every_key_the_terminal_uses_is_in_english() -> None:
    english = load("en")
    used: set[str] = set()
    for py in (ROOT / "client_cli").glob("*.py"):
        used.update(re.findall(r"\btr\(\s*\"([^\"]+)\"", py.read_text(encoding="utf-8")))
    assert used, "the terminal client asks the catalogues for nothing"
    assert sorted(k for k in used if k not in english) == []


def test_the_replay_and_fair_deal_words_are_the_catalogues() -> None:
    """Issue 28's screens speak through t(): no English sentence is left in their code."""
    english = load("en")
    assert {"replay.meta", "replay.review.done", "fair.checked", "fair.copy"} <= set(english)
    sentence = re.compile(r"[\"`][A-Z][a-z]+ [a-z]+ [a-z]+")
    for name in ("replay.mjs", "fair.mjs", "tablextra.mjs"):
        code = [line for line in (STATIC / "js" / name).read_text().splitlines()
                if not line.lstrip().startswith(("//", "*", "/*"))]
        assert [line for line in code if sentence.search(line)] == [], name


def test_the_page_downloads_its_own_words_only() -> None:
    """The page weight target (issue 31): the served catalogue leaves out the terminal's
    ``cli.`` keys, and keeps everything the page asks for."""
    from server.web import Site

    served = json.loads(Site.from_package().assets["locales/fr.json"].body)
    french = load("fr")
    assert not [k for k in served if k.startswith("cli.")]
    assert served == {k: v for k, v in french.items() if not k.startswith("cli.")}
