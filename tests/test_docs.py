"""The project's documents are in the project (issue 14, item 14).

A fresh clone has nothing but the repository: every markdown link must reach a file in it
(or the web), every path a docstring or comment cites must exist in it, and nothing may
cite the documents that lived next to the repository while it was written. The rule book
must hold every rule id the code cites and the table options exactly as the protocol
defines them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

import protocol

REPO = Path(__file__).resolve().parent.parent
SKIP_DIRS = {".git", ".venv", "venv", "__pycache__", ".pytest_cache", ".ruff_cache",
             ".mypy_cache", ".hypothesis", "build", "dist", "data", "node_modules"}
TEXT_SUFFIXES = {".py", ".md", ".toml", ".sh", ".yml", ".yaml", ".cfg", ".ini", ".txt"}
TEXT_NAMES = {"Dockerfile", "run"}
THIS = Path(__file__).resolve()

#: ``[text](target)`` (an optional "title" after the target).
MD_LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
#: A path-like mention of a markdown file: ``docs/RULES.md``, ``../x/README.md`` (not the
#: last part of a path joined in code, ``... / "docs" / "PROTOCOL.md"``).
MD_PATH = re.compile(
    r"(?<![\w/.\-])(?<!/ \")((?:\.{1,2}/)*(?:[\w\-]+/)*[\w\-]+\.md)(?![\w/])")
#: What used to be cited and is not in the repository.
OUTSIDE = re.compile(r"shared/|\bDESIGN\.md")
RULE_ID = re.compile(r"\bR(1[0-8]|[1-9])(a?)\b")


def repo_files() -> Iterator[Path]:
    for path in sorted(REPO.rglob("*")):
        rel = path.relative_to(REPO)
        if any(part in SKIP_DIRS or part.endswith(".egg-info") for part in rel.parts[:-1]):
            continue
        if path.is_file() and (path.suffix in TEXT_SUFFIXES or path.name in TEXT_NAMES):
            yield path


def text_of(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]|<[^>]+>", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    out: set[str] = set()
    in_code = False
    for line in text_of(path).splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and line.startswith("#"):
            base = slug(line.lstrip("#"))
            name, n = base, 1
            while name in out:                      # repeated headings get -1, -2, ...
                name, n = f"{base}-{n}", n + 1
            out.add(name)
    return out


def link_problem(source: Path, target: str) -> str | None:
    """Why ``target``, linked from ``source``, does not stay inside the repository."""
    if re.match(r"(https?|mailto):", target):
        return None
    if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):
        return f"a {target.split(':')[0]}: link"
    path_part, _, anchor = target.partition("#")
    if path_part.startswith("/"):
        return "an absolute path"
    dest = (source.parent / path_part).resolve() if path_part else source
    if not dest.is_relative_to(REPO):
        return "points outside the repository"
    if not dest.exists():
        return "no such file in the repository"
    if anchor and dest.suffix == ".md" and anchor not in anchors(dest):
        return f"no heading #{anchor} in {dest.relative_to(REPO)}"
    return None


def test_every_markdown_link_stays_inside_the_repository() -> None:
    problems = []
    checked = 0
    for path in repo_files():
        if path.suffix != ".md":
            continue
        for number, line in enumerate(text_of(path).splitlines(), start=1):
            for target in MD_LINK.findall(line):
                checked += 1
                why = link_problem(path, target)
                if why:
                    problems.append(f"{path.relative_to(REPO)}:{number}: {target} ({why})")
    assert checked > 20                              # the check did look at links
    assert not problems, "\n".join(problems)


def test_no_citation_points_outside_the_repository() -> None:
    problems = []
    for path in repo_files():
        if path == THIS:
            continue
        for number, line in enumerate(text_of(path).splitlines(), start=1):
            if OUTSIDE.search(line):
                problems.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert not problems, "cites documents that are not in the repository:\n" + "\n".join(
        problems)


def test_every_cited_markdown_path_exists() -> None:
    """``docs/RULES.md`` in a docstring resolves from the repository root or the file."""
    problems = []
    checked = 0
    for path in repo_files():
        if path == THIS:
            continue
        for number, line in enumerate(text_of(path).splitlines(), start=1):
            for cited in MD_PATH.findall(line):
                checked += 1
                here, root = (path.parent / cited).resolve(), (REPO / cited).resolve()
                if not any(p.is_relative_to(REPO) and p.exists() for p in (here, root)):
                    problems.append(f"{path.relative_to(REPO)}:{number}: {cited}")
    assert checked > 20
    assert not problems, "cites files that are not in the repository:\n" + "\n".join(problems)


def test_readme_links_the_rules_and_the_architecture() -> None:
    links = set(MD_LINK.findall(text_of(REPO / "README.md")))
    assert "docs/RULES.md" in links and "docs/ARCHITECTURE.md" in links
    assert "docs/PROTOCOL.md" in links


def test_the_rule_book_has_every_rule_the_code_cites() -> None:
    rules = text_of(REPO / "docs" / "RULES.md")
    defined = {f"R{n}{a}" for n, a in re.findall(r"^R(\d+)(a?)\. ", rules, re.M)}
    assert {f"R{n}" for n in range(1, 19)} | {"R13a", "R14a"} <= defined
    cited = set()
    for path in repo_files():
        if path.suffix == ".py":
            cited |= {f"R{n}{a}" for n, a in RULE_ID.findall(text_of(path))}
    assert cited, "the code cites rules by id"
    assert cited <= defined, sorted(cited - defined)


def _options_table(rules: str) -> dict[str, str]:
    section = rules[rules.index("## 10. Table options"):]
    return dict(re.findall(r"^\| `(\w+)` \| `([^`]*)` \|", section, re.M))


def test_the_rule_book_lists_the_table_options_as_the_protocol_defines_them() -> None:
    documented = _options_table(text_of(REPO / "docs" / "RULES.md"))
    defaults = msgspec.to_builtins(protocol.TableOptions())
    assert list(documented) == list(defaults), "same options, same order"
    for name, default in defaults.items():
        assert json.loads(documented[name]) == default, name
        assert documented[name] == json.dumps(default), name


@pytest.mark.parametrize("target, ok", [
    ("docs/RULES.md", True), ("https://example.org/x", True), ("#the-shape", False),
    ("../shared/RULES.md", False), ("/etc/passwd", False), ("docs/NOPE.md", False),
    ("file:///etc/passwd", False), ("docs/RULES.md#10-table-options", True),
    ("docs/RULES.md#no-such-heading", False),
])
def test_the_link_check_itself(target: str, ok: bool) -> None:
    assert (link_problem(REPO / "README.md", target) is None) is ok


def _table_names(doc: str, heading: str) -> set[str]:
    """The `type` column of the first table after ``heading`` in docs/PROTOCOL.md."""
    section = doc[doc.index(heading):]
    rows = re.findall(r"^\| `([a-z_]+)` \|", section[:section.index("\n## ", 1)], re.M)
    return set(rows)


def test_the_protocol_reference_lists_every_command_event_and_result() -> None:
    """A new command or event (1.3: rematch, chat, mute, deals_committed, rematch_accepted)
    is documented where a client writer looks for it, with the version that added it."""
    doc = text_of(REPO / "docs" / "PROTOCOL.md")
    assert _table_names(doc, "## Client commands") == set(protocol.CLIENT_TYPES)
    assert _table_names(doc, "## Events") == set(protocol.EVENT_TYPES)
    assert set(protocol.RESULT_TYPES) <= set(protocol.CLIENT_TYPES)
    revisions = doc[doc.index("| revision |"):]
    for added in ("rematch", "chat", "mute", "deals_committed", "rematch_accepted",
                  "next_commitment", "contribution"):
        assert f"`{added}`" in revisions.split("\n| 1.3 |")[1].split("\n")[0], added
    # 1.5 (issue 33): what counts as malformed, spectated tables, honest bots
    row = revisions.split("\n| 1.5 |")[1].split("\n")[0]
    for added in ("list_tables.watching", "hello.bot", "SeatInfo.bot", "bots"):
        assert f"`{added}`" in row, added
    assert "(#malformed-frames)" in row
    # 1.6 (issue 32): a table's home
    assert "`home`" in revisions.split("\n| 1.6 |")[1].split("\n")[0]
    assert doc.startswith("# Aluette Online wire protocol, version 1 (revision 1.6)")


#: A sentence of the documents that tells what SIGTERM does, up to its full stop.
SIGTERM_SENTENCE = re.compile(r"SIGTERM[^.]*?\.(?:\s|$)", re.S)


def test_every_document_gives_sigterm_the_close_code_the_server_sends() -> None:
    """Issue 33, finding 1: README.md said 1012 where the server sends 1001.

    ``server/app.py`` closes every client with ``CloseCode.GOING_AWAY`` when it stops;
    tests/durability/test_restart.py proves that code on the wire after a real SIGTERM.
    Any four-digit close code a document names next to SIGTERM must be that one (1012 is
    only ever named as reserved, in PROTOCOL.md's table, where it says so).
    """
    sent = int(protocol.CloseCode.GOING_AWAY)
    named: list[tuple[str, int]] = []
    for path in repo_files():
        if path.suffix != ".md":
            continue
        text = " ".join(text_of(path).split())
        for sentence in SIGTERM_SENTENCE.findall(text):
            for code in re.findall(r"\b(1\d{3}|4\d{3})\b", sentence):
                named.append((f"{path.relative_to(REPO)}: {sentence.strip()}", int(code)))
    assert named, "some document says how SIGTERM closes clients"
    wrong = [where for where, code in named if code != sent]
    assert not wrong, "\n".join(wrong)
