"""Account names: what makes two names the same, and which names nobody may register.

Three forms of a name, each for one job:

- the **display** name, as the player typed it once cleaned (``protocol.clean_text``);
- the **key**: NFKC, then Unicode case folding, then NFKC again (the "NFKC_Casefold" of
  UAX #31's identifier matching), so ``Ana``, ``ANA`` and ``Ａｎａ`` are one account;
- the **skeleton** (UTS #39 section 4, "confusable detection"): every character replaced
  by the representative of the characters it can be mistaken for, so ``Ana`` and
  ``Аna`` (a Cyrillic A) or ``Il1`` and ``lll`` collide although their keys differ.

The confusable pairs are Unicode's own ``confusables.txt``, as shipped and kept up to date
by the ``confusable_homoglyphs`` package; the package answers "is this string confusable"
but has no skeleton, so the groups of mutually confusable characters are built here once
(a union of its pairs) and each character maps to its group's smallest member. Two names
with one skeleton are one name: the second is refused (``name_taken``, reason
``confusable``).

Everything here is pure: no store, no event loop.
"""

from __future__ import annotations

import functools
import unicodedata
from dataclasses import dataclass

from confusable_homoglyphs import confusables

from protocol import clean_text, limits

#: Shortest account name (code points, once cleaned).
MIN_NAME_LEN = 2

#: Names (by skeleton) nobody may register: the server's own voices, the bots' seat names
#: (``server/table/mutations.py`` BOT_NAMES, held equal by tests/accounts), and words that
#: would pass for staff.
RESERVED_NAMES = frozenset({
    "admin", "administrator", "root", "server", "system", "moderator", "mod", "staff",
    "support", "aluette", "official", "bot", "anonymous", "nobody", "null", "none",
    "you", "me", "spectator", "everyone",
    "Anne", "Yann", "Soizic", "Loïc",
})
#: Prefixes (by skeleton) reserved too: the names the clients give guests ("Guest 1234",
#: "Invité 1234") and anything that reads as a bot or as staff.
RESERVED_PREFIXES = ("guest", "invité", "invite", "bot ", "bot-", "bot_", "admin", "mod ")

#: Punctuation allowed inside a name besides letters, marks, digits and single spaces.
_PUNCTUATION = frozenset("-_.'")


class NameRefused(ValueError):
    """The name may not be registered; ``reason`` is the wire's ``details.reason``."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class AccountName:
    display: str
    key: str
    skeleton: str


def name_key(name: str) -> str:
    """The account key: NFKC_Casefold of the cleaned name (one account per key)."""
    text = unicodedata.normalize("NFKC", clean_text(name))
    return unicodedata.normalize("NFKC", text.casefold())


def _strip_marks(text: str) -> str:
    return text.replace("\u200e", "").replace("\u200f", "")


@functools.cache
def _prototypes() -> tuple[dict[str, str], tuple[tuple[str, str], ...]]:
    """Each confusable character's representative, and the multi-character sequences
    (``rn`` for ``m``) rewritten first."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        root = x
        while parent.setdefault(root, root) != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    sequences: dict[str, str] = {}
    for source, glyphs in confusables.confusables_data.items():
        for glyph in glyphs:
            target = _strip_marks(glyph["c"])
            if len(source) == 1 and len(target) == 1:
                a, b = find(source), find(target)
                if a != b:
                    parent[max(a, b)] = min(a, b)
            elif len(source) > 1 and len(target) == 1 and (source + target).isascii():
                sequences.setdefault(source, target)
    table = {ch: find(ch) for ch in parent if find(ch) != ch}
    # Longest sequences first, so that a longer look-alike wins over its own start.
    return table, tuple(sorted(sequences.items(), key=lambda kv: (-len(kv[0]), kv[0])))


def _map(text: str) -> str:
    table, sequences = _prototypes()
    for seq, single in sequences:
        text = text.replace(seq, single)
    return "".join(table.get(ch, ch) for ch in text)


def skeleton(name: str) -> str:
    """UTS #39's skeleton of the name, case-insensitive: mapped before and after case
    folding, so ``I`` and ``l`` (alike in capitals) and ``Ο``/``O``/``0`` all meet."""
    text = unicodedata.normalize("NFKC", clean_text(name))
    text = _map(unicodedata.normalize("NFD", text))
    text = unicodedata.normalize("NFKC", text).casefold()
    return unicodedata.normalize("NFD", _map(unicodedata.normalize("NFD", text)))


def _forms(name: str) -> set[str]:
    """The skeletons of a name as typed, in small letters and in capitals: a reserved word
    is refused in any case ("ADMIN" has the skeleton of "ADM1N", not of "admin")."""
    return {skeleton(name), skeleton(name_key(name)), skeleton(name.upper())}


@functools.cache
def _reserved() -> tuple[frozenset[str], tuple[str, ...]]:
    names = frozenset(f for n in RESERVED_NAMES for f in _forms(n))
    prefixes = tuple(f + (" " if p.endswith(" ") else "")
                     for p in RESERVED_PREFIXES for f in _forms(p.rstrip()))
    return names, prefixes


def is_reserved(name: str) -> bool:
    names, prefixes = _reserved()
    forms = _forms(name)
    return bool(forms & names) or any(f.startswith(p) for f in forms for p in prefixes)


def _allowed(ch: str) -> bool:
    category = unicodedata.category(ch)
    return category[0] in "LMN" or ch == " " or ch in _PUNCTUATION


def check_account_name(name: str) -> AccountName:
    """The three forms of a name one may register, or :class:`NameRefused` saying why."""
    display = clean_text(name)
    key = name_key(display)
    if not MIN_NAME_LEN <= len(display) <= limits.MAX_NAME_LEN or not key:
        raise NameRefused("length", f"a name has {MIN_NAME_LEN} to {limits.MAX_NAME_LEN} "
                          "characters")
    if not all(_allowed(ch) for ch in display) or unicodedata.category(display[0])[0] not in "LN":
        raise NameRefused("characters", "a name is letters, digits, spaces and - _ . ' "
                          "and starts with a letter or a digit")
    if confusables.is_mixed_script(display, allowed_aliases=["COMMON", "INHERITED"]) and \
            confusables.is_dangerous(display):
        raise NameRefused("mixed_scripts", "a name may not mix look-alike letters of "
                          "different scripts")
    if is_reserved(display):
        raise NameRefused("reserved", "this name is reserved")
    return AccountName(display=display, key=key, skeleton=skeleton(display))
