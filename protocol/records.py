"""The R17 match record and what verifying it says, as typed maps (docs/RULES.md R17, R18).

A record is a JSON document: stored, served (``get_record``, ``match_over``), saved to a
file and read back by ``aluette-record``, reviewed. These ``TypedDict`` say its shape, so
the code that writes, checks, replays or shows one is typed without changing a byte of it
(a ``TypedDict`` is a ``dict`` at run time). A record read from outside is untrusted until
``server.game.record.verify_record`` has checked it: the readers that validate it read it
with ``.get`` and check every value anyway.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from .vocab import SignalId, SignalsMode


class OptionsMap(TypedDict, total=False):
    """A table's rule options as plain data (the engine's ``Options.to_dict``); missing keys
    take their defaults."""

    deals: int
    target_points: int | None
    mordienne: bool
    chanter: bool
    partner_draw: bool
    first_dealer: int | Literal["random"]
    signals: SignalsMode
    signal_risk: float


class ChanterBlock(TypedDict):
    """A deal's R9 in a record: each seat's vote (null: not asked), whether the talon was
    exchanged, and the six cards each of its two takers discarded."""

    votes: list[bool | None]
    exchange: bool
    discards: list[list[str]]


class SignalEntry(TypedDict):
    """One signal in a record (R15, R16): who sent what to whom, and ``at``, the turn
    actions of the deal taken before it."""

    from_seat: int
    signal: SignalId
    n: int | None
    to: list[int]
    at: NotRequired[int]


class RecordDeal(TypedDict):
    """One deal: the dealer, the hands as played, the tricks in play order; once the match
    is over, its chanter exchange and its signals."""

    dealer: int
    hands: list[list[str]]
    tricks: list[list[str]]
    chanter: NotRequired[ChanterBlock]
    signals: NotRequired[list[SignalEntry]]


class FairBlock(TypedDict):
    """The record's ``fair`` object (R8a): the seed's material, revealed once it is over."""

    scheme: str
    commitment: str
    secret: str
    salt: str
    contributions: list[str | None]
    contributors: int
    seed: str


class PartnerDrawBlock(TypedDict):
    """R7's draw, public from the start: the cards turned (``[seat, card]``, seats before
    the draw) and the seating it gave."""

    cards: list[list[int | str]]
    seating: list[int]


class Record(TypedDict):
    """A match record (``format``: ``aluette-record/1``). The server adds which seats were
    bots (``bots``), the match's number at its table (``match``) and, once it is over, the
    fairness material (``fair``)."""

    format: str
    options: OptionsMap
    seats: list[str]
    complete: bool
    deals: list[RecordDeal]
    partner_draw: NotRequired[PartnerDrawBlock]
    seed: NotRequired[int | str]
    fair: NotRequired[FairBlock]
    bots: NotRequired[list[bool]]
    match: NotRequired[int]


class TrickSummary(TypedDict):
    leader: int
    winner: int | None


class DealSummary(TypedDict):
    """One deal as the rules derive it from the record (never read from it)."""

    dealer: int
    tricks: list[TrickSummary]
    trick_counts: list[int]
    winner: int | None
    points: list[int]
    mordienne: bool
    exchange: NotRequired[bool]
    complete: NotRequired[bool]


class RecordSummary(TypedDict):
    """What verifying a record derives (R18): each deal, the points, the result, and
    whether its deals follow from its revealed seed material (``fair``, R8a)."""

    deals: list[DealSummary]
    points: list[int]
    result: str
    fair: str
    contributors: NotRequired[int]
