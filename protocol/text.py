"""Cleaning of user-supplied text (player and table names).

Names are shown to other players' terminals; a name with ESC sequences, bidi overrides or
zero-width characters could repaint or spoof someone else's screen. The server cleans on
the way in (the decoder does it for you) and the client cleans again before display,
because a client must not trust a server either.
"""

from __future__ import annotations

import unicodedata

# Cc: C0, DEL, C1 controls. Cf: format (bidi overrides, zero-width joiners, BOM...).
# Cs: lone surrogates. Co: private use. Cn: unassigned. Zl/Zp: line/paragraph separators.
_DROP = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def clean_text(s: str) -> str:
    """Return ``s`` without control/format characters, with whitespace runs collapsed.

    Removes every code point of category Cc (C0, DEL, C1), Cf, Cs, Co, Cn, Zl and Zp, then
    collapses runs of whitespace to one space and strips both ends, so ``"  Ana\\x1b[2J "``
    becomes ``"Ana[2J"``. The result may be empty; callers decide if that is allowed.
    """
    kept = "".join(ch for ch in s if unicodedata.category(ch) not in _DROP)
    return " ".join(kept.split())


#: Combining marks that stack on the character before them (nonspacing, enclosing).
_MARKS = frozenset({"Mn", "Me"})


def mostly_marks(s: str) -> bool:
    """Whether combining marks make up more than half of ``s``'s code points.

    Text like that ("Zalgo": one letter under 199 accents) draws over the lines around it
    on many screens; chat refuses it (``too_many_marks``, issue 30). Scripts that write
    with marks stay well under half (Devanagari ``नमस्ते``: 2 of 6; Thai, Vietnamese with
    combining accents: fewer), and spacing marks (Mc) are not counted.
    """
    marks = sum(1 for ch in s if unicodedata.category(ch) in _MARKS)
    return 2 * marks > len(s)
