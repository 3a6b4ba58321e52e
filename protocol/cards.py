"""R2 card codes as a validated wire type.

Cards travel as their two-character text form (``"3o"``); the protocol accepts exactly
the 48 codes of R1/R2 (case-sensitive) so the engine never sees anything else. A string
that is not one of them is rejected with ``unknown_card`` (a wrong JSON/msgpack type, e.g.
an int where a card belongs, is ``invalid_field``).
"""

from __future__ import annotations

import re
from typing import Annotated

from msgspec import Meta

RANKS = "123456789VCR"  # R1: 1-9, Valet, Cavalière, Roi
SUITS = "ocbe"  # R2: oros, copas, bastos, espadas

#: All 48 codes, suit-major in docs/RULES.md order.
CARD_CODES: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS)
_CARD_SET = frozenset(CARD_CODES)

#: ``\Z`` rather than ``$``: ``$`` would also accept a trailing newline (``"3o\n"``).
CARD_PATTERN = r"^[1-9VCR][ocbe]\Z"
_CARD_RE = re.compile(CARD_PATTERN)

#: The wire type of a card field: a str matching :data:`CARD_PATTERN`.
Card = Annotated[str, Meta(pattern=CARD_PATTERN, description="R2 card code, e.g. 3o")]


def is_card(code: object) -> bool:
    """True when ``code`` is exactly one of the 48 R2 codes."""
    return isinstance(code, str) and code in _CARD_SET


assert len(CARD_CODES) == 48 and all(_CARD_RE.match(c) for c in CARD_CODES)
