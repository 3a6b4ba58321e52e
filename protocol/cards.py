"""R2 card codes as a validated wire type.

Cards travel as their two-character text form (``"3o"``); the protocol accepts exactly
the 48 codes of R1/R2 (case-sensitive) so the engine never sees anything else. A string
that is not one of them is rejected with ``unknown_card`` (a wrong JSON/msgpack type, e.g.
an int where a card belongs, is ``invalid_field``).
"""

from __future__ import annotations

import re
from typing import Annotated, TypeGuard

from msgspec import Meta

from .vocab import CARD_CODES

_CARD_SET = frozenset(CARD_CODES)

#: ``\Z`` rather than ``$``: ``$`` would also accept a trailing newline (``"3o\n"``).
CARD_PATTERN = r"^[1-9VCR][ocbe]\Z"
_CARD_RE = re.compile(CARD_PATTERN)

#: The wire type of a card field: a str matching :data:`CARD_PATTERN`.
Card = Annotated[str, Meta(pattern=CARD_PATTERN, description="R2 card code, e.g. 3o")]


def is_card(code: object) -> TypeGuard[str]:
    """True when ``code`` is exactly one of the 48 R2 codes (the one check, used by the
    engine's ``parse_card`` and the clients alike)."""
    return isinstance(code, str) and code in _CARD_SET


assert len(CARD_CODES) == 48 and all(_CARD_RE.match(c) for c in CARD_CODES)

__all__ = ["CARD_CODES", "CARD_PATTERN", "Card", "is_card"]
