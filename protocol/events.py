"""Table events: the payloads carried by ``event`` messages, as a tagged union on ``type``.

The engine emits these structs itself (``server.game.Match.apply``), the server sends them
as they are and the clients apply them: one vocabulary from the rules to the screen. Which
viewer receives which event (or only a placeholder) is decided by the engine and server,
never here; the docstrings note the intended audience so a client writer knows what to
expect.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from msgspec import Meta

from . import limits
from .cards import Card
from .fields import (
    AcesCount,
    ChatText,
    Contribution,
    Digest,
    MatchNumber,
    MatchResult,
    Name,
    Phase,
    Seat,
    SeatCard,
    SeatCounts,
    SenderId,
    SignalId,
    TeamPoints,
    TrickCards,
    check_signal_n,
)
from .views import TableInfo, TableView


class EventBase(msgspec.Struct, tag_field="type", kw_only=True):
    """Base of every event payload; ``type`` is the tag."""


class Snapshot(EventBase, tag="snapshot"):
    """The whole view for this viewer; replaces all local state (after join or resume)."""

    view: TableView


class TableChanged(EventBase, tag="table_changed"):
    """Seats, names, bots, connection flags or status changed (to everyone at the table)."""

    table: TableInfo


class PlayerConnected(EventBase, tag="player_connected"):
    """The human in ``seat`` is connected again."""

    seat: Seat


class PlayerDisconnected(EventBase, tag="player_disconnected"):
    """The human in ``seat`` dropped; a bot takes over after the grace period."""

    seat: Seat


class PartnerDraw(EventBase, tag="partner_draw"):
    """R7: the cards turned up, in order, and the resulting seating and first dealer.

    ``seating[s]`` is the new seat of the player who sat in seat ``s`` before the draw.
    """

    cards: Annotated[list[SeatCard], Meta(max_length=48)]
    seating: Annotated[list[Seat], Meta(min_length=4, max_length=4)]
    dealer: Seat


class DealStarted(EventBase, tag="deal_started"):
    """A new deal (1-based ``deal_number``) with this dealer (R6, R8)."""

    deal_number: Annotated[int, Meta(ge=1)]
    dealer: Seat


class HandDealt(EventBase, tag="hand_dealt"):
    """R8: the nine cards of ``seat``; only that seat receives it (others: placeholder)."""

    seat: Seat
    cards: Annotated[list[Card], Meta(min_length=9, max_length=9)]


class ChanterVoted(EventBase, tag="chanter_vote"):
    """R9: ``seat`` said whether it wants to chanter (public)."""

    seat: Seat
    vote: bool


class ChanterResult(EventBase, tag="chanter_result"):
    """R9: whether all four agreed."""

    accepted: bool


class TalonDealt(EventBase, tag="talon_dealt"):
    """R9: the six talon cards ``seat`` received; private to that seat."""

    seat: Seat
    cards: Annotated[list[Card], Meta(min_length=6, max_length=6)]


class ChanterDiscarded(EventBase, tag="chanter_discarded"):
    """R9: ``seat`` discarded its six cards (face down: the cards are not shown)."""

    seat: Seat


class CardPlayed(EventBase, tag="card_played"):
    """R10: ``seat`` played ``card`` to the current trick (public)."""

    seat: Seat
    card: Card


class TrickDone(EventBase, tag="trick_done"):
    """R11: trick ``number`` (1-9) is complete; ``winner`` None means spoiled."""

    number: Annotated[int, Meta(ge=1, le=9)]
    leader: Seat
    cards: TrickCards
    winner: Seat | None


class DealScored(EventBase, tag="deal_scored"):
    """R12/R13: the deal's trick counts, winner (None: all spoiled), points and totals."""

    deal_number: Annotated[int, Meta(ge=1)]
    dealer: Seat
    trick_counts: SeatCounts
    winner: Seat | None
    points: TeamPoints
    mordienne: bool
    totals: TeamPoints


class MatchOver(EventBase, tag="match_over"):
    """R14: final points, result, and the R17 match record (a JSON-compatible map)."""

    points: TeamPoints
    result: MatchResult
    record: dict[str, Any]


class SignalReceived(EventBase, tag="signal"):
    """R15/R16: a partner signal; sent only to its recipients (others: placeholder)."""

    from_seat: Seat
    signal: SignalId
    n: AcesCount | None = None

    def __post_init__(self) -> None:
        check_signal_n(self.signal, self.n)


class SignalSent(EventBase, tag="signal_sent"):
    """R15/R16: what this seat itself signalled (only the sender gets it, never who noticed
    it). Added in 1.2: before, the sender got a placeholder."""

    signal: SignalId
    n: AcesCount | None = None

    def __post_init__(self) -> None:
        check_signal_n(self.signal, self.n)


class Turn(EventBase, tag="turn"):
    """``seat`` is to act now, and ``phase`` says what it is to do: ``play`` a card,
    ``chanter_vote`` or ``chanter_discard`` (R9).

    The server sends one every time the turn passes (and after a resume when it is your
    turn), so a client takes whose turn it is from these and from snapshots instead of
    recomputing it. Between the ninth trick and the next deal nobody is to act. ``phase``
    was added in 1.1 (a minor change): older servers omit it.
    """

    seat: Seat
    phase: Phase | None = None


class DealsCommitted(EventBase, tag="deals_committed"):
    """R8a: match ``match`` of this table starts; its deals come from the seed derived from
    the secret and salt behind ``commitment`` (the table's ``next_commitment`` until now)
    and these contributions, one per seat (nil: none), in seat order before any partner
    draw (R7). Sent to everyone before any card; added in 1.3."""

    match: MatchNumber
    commitment: Digest
    contributions: Annotated[list[Contribution | None], Meta(min_length=4, max_length=4)]


class TurnTimedOut(EventBase, tag="turn_timed_out"):
    """The turn timer of ``seat`` ran out (added in 1.5): a bot's move for that seat
    follows at once (a ``card_played``, a ``chanter_vote`` or a ``chanter_discarded``)."""

    seat: Seat


class RematchAccepted(EventBase, tag="rematch_accepted"):
    """The player in ``seat`` wants another match at this table (added in 1.3)."""

    seat: Seat


class ChatMessage(EventBase, tag="chat"):
    """A chat message (added in 1.3): ``from_seat`` nil is a spectator's, which only
    spectators receive. ``sender`` names the speaker for ``mute``."""

    from_seat: Seat | None
    name: Name
    text: ChatText
    sender: SenderId


class ChatHistory(EventBase, tag="chat_history"):
    """The table's latest chat lines this viewer may see, oldest first (added in 1.4).

    Only in a head, after ``table_changed`` (and ``snapshot``), and only when there is such
    a line or a muted sender: it replaces the client's chat log of this table, so that a
    reloaded page or a spectator who just arrived reads the conversation so far. A seat
    never gets a spectator's line, nor anyone a line of a sender it mutes. ``sender`` is
    this viewer's own id at the table (the ``sender`` of its own lines).
    """

    lines: Annotated[list[ChatMessage], Meta(max_length=limits.CHAT_HISTORY)]
    sender: SenderId
    #: The senders this viewer mutes at this table (none of their lines is in ``lines``),
    #: so that a client can offer to unmute them after a reload.
    muted: Annotated[list[SenderId], Meta(max_length=limits.MAX_MUTES)] = msgspec.field(
        default_factory=list)


class UnknownEvent(msgspec.Struct, kw_only=True):
    """An event type this client does not know (a newer minor version); never encoded.

    :func:`protocol.decode_server` yields it instead of failing, because new event types
    are a minor change that old clients must survive: they skip it (its seq still counts).
    """

    type: str
    data: dict[str, Any]


EventPayload = (
    Snapshot
    | TableChanged
    | PlayerConnected
    | PlayerDisconnected
    | PartnerDraw
    | DealStarted
    | HandDealt
    | ChanterVoted
    | ChanterResult
    | TalonDealt
    | ChanterDiscarded
    | CardPlayed
    | TrickDone
    | DealScored
    | MatchOver
    | SignalReceived
    | SignalSent
    | Turn
    | DealsCommitted
    | RematchAccepted
    | TurnTimedOut
    | ChatMessage
    | ChatHistory
)

EVENT_TYPES: dict[str, type[EventBase]] = {
    cls.__struct_config__.tag: cls
    for cls in EventPayload.__args__
}

__all__ = [
    "EVENT_TYPES",
    "CardPlayed",
    "ChanterDiscarded",
    "ChanterResult",
    "ChanterVoted",
    "ChatHistory",
    "ChatMessage",
    "DealScored",
    "DealStarted",
    "DealsCommitted",
    "EventBase",
    "EventPayload",
    "HandDealt",
    "MatchOver",
    "PartnerDraw",
    "PlayerConnected",
    "PlayerDisconnected",
    "RematchAccepted",
    "SignalReceived",
    "SignalSent",
    "Snapshot",
    "TableChanged",
    "TalonDealt",
    "TrickDone",
    "Turn",
    "TurnTimedOut",
    "UnknownEvent",
]
