"""Constrained field types shared by messages, views and events.

Each alias carries its range or length as msgspec ``Meta`` so the decoder enforces it and
reports the failing field path (``invalid_field``) without any hand-written checks.
"""

from __future__ import annotations

from typing import Annotated, Any

from msgspec import Meta

from . import limits
from .cards import Card
from .vocab import (  # re-exported: the one definition is in vocab
    BotLevel,
    MatchResult,
    Phase,
    SeatKind,
    SignalId,
    SignalsMode,
    TableStatus,
)

#: R4: seats are 0..3 clockwise.
Seat = Annotated[int, Meta(ge=0, le=3)]
#: R5: team 0 is seats 0 and 2, team 1 is seats 1 and 3.
Team = Annotated[int, Meta(ge=0, le=1)]
CommandId = Annotated[int, Meta(ge=0, le=limits.MAX_COMMAND_ID)]
TableId = Annotated[str, Meta(min_length=1, max_length=limits.MAX_TABLE_ID_LEN)]
Name = Annotated[str, Meta(min_length=1, max_length=limits.MAX_NAME_LEN)]
Token = Annotated[str, Meta(min_length=1, max_length=limits.MAX_TOKEN_LEN)]
JoinCode = Annotated[str, Meta(min_length=1, max_length=limits.MAX_CODE_LEN)]
Seq = Annotated[int, Meta(ge=0)]
Count = Annotated[int, Meta(ge=0)]
Version = Annotated[int, Meta(ge=0, le=65535)]

#: Per-seat and per-team arrays have fixed lengths.
SeatCounts = Annotated[list[Count], Meta(min_length=4, max_length=4)]
TeamPoints = Annotated[list[Count], Meta(min_length=2, max_length=2)]
TrickCards = Annotated[list[Card], Meta(min_length=4, max_length=4)]
#: ``[seat, card]`` pairs (current trick, partner draw).
SeatCard = tuple[Seat, Card]

#: Lowercase hex digits, nothing else (``\Z``: a trailing newline is not allowed either).
HEX_PATTERN = "^[0-9a-f]+\\Z"
#: R8a: a player's contribution to the next match's seed.
Contribution = Annotated[str, Meta(min_length=1, max_length=limits.MAX_CONTRIBUTION_LEN,
                                   pattern=HEX_PATTERN)]
#: R8a: a SHA-256 digest (a commitment) as 64 lowercase hex digits.
Digest = Annotated[str, Meta(min_length=64, max_length=64, pattern=HEX_PATTERN)]
#: Who sent a chat message: an opaque id, stable for one player at one table.
SenderId = Annotated[str, Meta(min_length=16, max_length=16, pattern=HEX_PATTERN)]
#: A chat message as the server sends it (cleaned).
ChatText = Annotated[str, Meta(min_length=1, max_length=limits.MAX_CHAT_LEN)]
#: The number of a match at its table: 1 for the first, 2 for its first rematch...
MatchNumber = Annotated[int, Meta(ge=1)]

#: R15: ``aces`` carries how many (1..4).
AcesCount = Annotated[int, Meta(ge=1, le=4)]


def check_signal_n(signal: str, n: int | None) -> None:
    """R15: ``n`` is required for ``aces`` and forbidden for every other signal.

    Raised as ValueError from ``__post_init__``; msgspec turns it into a ValidationError,
    which the decoder reports as ``invalid_field``.
    """
    if signal == "aces" and n is None:
        raise ValueError("`n` (1..4) is required for signal `aces` - at `$.n`")
    if signal != "aces" and n is not None:
        raise ValueError("`n` is only allowed for signal `aces` - at `$.n`")


#: An ``error``'s ``details`` (docs/PROTOCOL.md, "Errors"): a free-form JSON map at the
#: wire's edge that names what the message is about (``{"card": "3o"}``); a client reads
#: only the keys it knows. The one untyped map of the wire besides the R17 record
#: (``protocol/records.py`` types it where it is used) and an event this client does not
#: know (``UnknownEvent``).
ErrorDetails = dict[str, Any]

__all__ = [
    "HEX_PATTERN",
    "AcesCount",
    "BotLevel",
    "Card",
    "ChatText",
    "CommandId",
    "Contribution",
    "Count",
    "Digest",
    "ErrorDetails",
    "JoinCode",
    "MatchNumber",
    "MatchResult",
    "Name",
    "Phase",
    "Seat",
    "SeatCard",
    "SeatCounts",
    "SeatKind",
    "SenderId",
    "Seq",
    "SignalId",
    "SignalsMode",
    "TableId",
    "TableStatus",
    "Team",
    "TeamPoints",
    "Token",
    "TrickCards",
    "Version",
    "check_signal_n",
]
