"""What the engine and the lobby build, typed: options, table info, table view.

The engine builds each viewer's :class:`TableView` itself (docs/ARCHITECTURE.md convention 4);
these structs give it a wire shape, and validate it on a client's decoder; they never filter.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from . import limits
from .cards import Card
from .fields import (
    AcesCount,
    BotLevel,
    Count,
    Digest,
    MatchResult,
    Name,
    Phase,
    Seat,
    SeatCard,
    SeatCounts,
    SeatKind,
    SignalId,
    SignalsMode,
    TableId,
    TableStatus,
    TeamPoints,
    TrickCards,
    check_signal_n,
)


class TableOptions(msgspec.Struct, kw_only=True):
    """Options of a table; game options cite their rule, the rest are server options.

    Every field has a default, so ``{}`` is a valid options map (a 5-deal match, R14).
    """

    deals: Annotated[int, Meta(ge=1, le=limits.MAX_DEALS)] = 5  # R14
    target_points: Annotated[int, Meta(ge=1, le=limits.MAX_TARGET_POINTS)] | None = None  # R14a
    mordienne: bool = True  # R13
    chanter: bool = False  # R9
    partner_draw: bool = False  # R7
    first_dealer: Seat | Literal["random"] = "random"  # R6
    signals: SignalsMode = "private"  # R16
    signal_risk: Annotated[float, Meta(ge=0.0, le=1.0)] = 0.25  # R16
    auto_start: bool = False
    bot_delay_ms: Annotated[int, Meta(ge=0, le=limits.MAX_BOT_DELAY_MS)] = 600
    turn_timer_s: Annotated[int, Meta(ge=1, le=limits.MAX_TURN_TIMER_S)] | None = None
    grace_s: Annotated[int, Meta(ge=0, le=limits.MAX_GRACE_S)] = 120
    bot_level: BotLevel = "normal"
    #: How hard the table's search bots think, as a multiple of the default budget
    #: (1.0 keeps an expert decision under ~100 ms on one core). Added in 1.1.
    bot_budget: Annotated[float, Meta(ge=0.05, le=4.0)] = 1.0
    #: A casual table where each seated player may ask "what would the expert play?"
    #: (``hint``); such a table is marked, and never rated. Added in 1.5.
    hints: bool = False
    #: A rated table (1.5, issue 27): its match changes the ratings of its four players
    #: when all four are registered people (docs/PROTOCOL.md, "Players"); never with a bot.
    rated: bool = False


class SeatInfo(msgspec.Struct, kw_only=True):
    """Who sits in one seat, as the lobby shows it.

    ``bot`` (added in 1.5) is True when a program plays the seat: the server's own bot
    (``kind: bot``), or a client that said ``hello {bot: true}`` (``kind: human``: it
    connects, drops and resumes like a person, but it is not one).
    """

    kind: SeatKind = "empty"
    name: Name | None = None
    level: BotLevel | None = None
    connected: bool = False
    #: A disconnected player's grace period ends at this Unix time, in seconds (then a
    #: bot plays the seat, or the rematch goes on without them); nil otherwise (1.5).
    grace_until: float | None = None
    #: Seats that voted (``let_bot_play``) to let a bot play this seat now (1.5).
    bot_votes: Annotated[list[Seat], Meta(max_length=4)] = msgspec.field(default_factory=list)
    #: A bot: the server's own, or a program that said so in its ``hello`` (1.5).
    bot: bool = False


class TableInfo(msgspec.Struct, kw_only=True):
    """A table as listed in the lobby (``list_tables``, ``table_changed``)."""

    table: TableId
    name: Annotated[str, Meta(max_length=limits.MAX_NAME_LEN)] = ""
    options: TableOptions = msgspec.field(default_factory=TableOptions)
    private: bool = False
    seats: Annotated[list[SeatInfo], Meta(min_length=4, max_length=4)]
    status: TableStatus = "waiting"
    spectators: Count = 0
    creator: Seat | None = None
    #: Matches started at this table so far (added in 1.3).
    match: Count = 0
    #: R8a: the commitment to the seed of the table's next match (added in 1.3). Send a
    #: contribution only once you have seen it.
    next_commitment: Digest | None = None
    #: Seats that asked for another match, once the match is over (added in 1.3).
    rematch: Annotated[list[Seat], Meta(max_length=4)] = msgspec.field(default_factory=list)


class TrickInfo(msgspec.Struct, kw_only=True):
    """A completed trick: cards in play order from ``leader``; winner None = spoiled (R11)."""

    leader: Seat
    cards: TrickCards
    winner: Seat | None


class DealInfo(msgspec.Struct, kw_only=True):
    """A finished deal's score (R12, R13); winner None = all nine tricks spoiled."""

    dealer: Seat
    winner: Seat | None
    points: TeamPoints
    mordienne: bool
    trick_counts: SeatCounts


class SignalInfo(msgspec.Struct, kw_only=True):
    """A signal the viewer received this deal (R15, R16)."""

    from_seat: Seat
    signal: SignalId
    n: AcesCount | None = None

    def __post_init__(self) -> None:
        check_signal_n(self.signal, self.n)


class SignalSent(msgspec.Struct, kw_only=True):
    """A signal this viewer sent (R15); the sender is never told who noticed it (R16)."""

    signal: SignalId
    n: AcesCount | None = None


class TableView(msgspec.Struct, kw_only=True):
    """What one viewer may know of a table in play (the engine's per-seat view).

    ``viewer`` None is a spectator: empty ``hand``, no ``signals`` (R16).
    """

    viewer: Seat | None
    phase: Phase
    options: TableOptions
    deal_number: Count
    dealer: Seat
    to_act: Seat | None
    hand: Annotated[list[Card], Meta(max_length=15)]
    hand_sizes: SeatCounts
    leader: Seat
    trick: Annotated[list[SeatCard], Meta(max_length=4)]
    tricks: Annotated[list[TrickInfo], Meta(max_length=9)]
    trick_counts: SeatCounts
    points: TeamPoints
    deals: Annotated[list[DealInfo], Meta(max_length=1000)]
    chanter_votes: Annotated[list[bool | None], Meta(min_length=4, max_length=4)]
    signals: list[SignalInfo]
    draw: Annotated[list[SeatCard], Meta(max_length=48)]
    result: MatchResult | None = None
    #: The viewer's own six chanter discards this deal (R9); empty for spectators.
    discarded: Annotated[list[Card], Meta(max_length=6)] = msgspec.field(default_factory=list)
    #: Signals the viewer sent this deal (R15), without who noticed them (R16).
    signals_sent: list[SignalSent] = msgspec.field(default_factory=list)
