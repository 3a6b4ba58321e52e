"""A client's local copy of one table, kept in step with the server's event stream.

The protocol's :class:`~protocol.session.ClientSession` decides which frames count (in
order, never twice, gaps resumed); this model applies each typed event it is given to the last
view, so it always holds exactly the :class:`~protocol.TableView` the engine would build for
our seat (``server.game.view``): what the renderer shows and the network bot hands to
``server.bots.choose_action``. A ``snapshot`` replaces everything.

Whose turn it is comes only from the server: a ``turn`` event (sent once per turn) or a
snapshot's ``to_act``. Every event that ends a turn clears it until the next ``turn``, so
the model never guesses a turn the server did not announce (a guessed turn is how the
network bot once tried to play an empty hand).

The lobby info is the latest ``table_changed``, with the news that comes before the
``table_changed`` saying the same shown at once (a seat's presence, a rematch asked for, a
match that starts or ends). An event the model cannot apply from what it knows (our own
discard when this client did not send it) marks it ``stale``: the connection then asks for
a fresh snapshot.

The browser's model (server/web/static/js/model.mjs) is held to the same specification,
tests/spec/model/*.json (docs/ARCHITECTURE.md, "One specification for both clients").

A table may play several matches (a rematch): ``deals_committed`` opens each one and
starts a fresh view. Chat is kept apart from the view (``chat``, ``speakers``), and the
model checks what R8a lets a player check (``fair_note``): that the commitment a match
starts with is the one the table showed before we contributed, that our contribution is
in it, and at the end that the revealed record proves the deals.

Pure: no I/O, no asyncio, so it is tested by replaying engine matches through it.
"""

from __future__ import annotations

import copy
import secrets
from dataclasses import dataclass, field

import msgspec

from protocol import (
    CardPlayed,
    ChanterDiscarded,
    ChanterResult,
    ChanterVoted,
    ChatHistory,
    ChatMessage,
    DealInfo,
    DealsCommitted,
    DealScored,
    DealStarted,
    EventPayload,
    HandDealt,
    MatchOver,
    PartnerDraw,
    PlayerConnected,
    PlayerDisconnected,
    RematchAccepted,
    SignalInfo,
    SignalReceived,
    SignalSent,
    Snapshot,
    TableChanged,
    TableInfo,
    TableOptions,
    TableView,
    TalonDealt,
    TrickDone,
    TrickInfo,
    Turn,
)
from protocol import views as wire_views
from protocol.vocab import TURN_PHASES, Phase
from server.game import fair
from server.game.cards import sort_by_strength
from server.game.record import RecordError, verify_record
from server.game.seats import left_of

from .i18n import contributed, tr


def new_contribution() -> str:
    """R8a: this client's contribution to a match's seed, 16 random bytes in hex from the
    system's randomness (never a seeded generator: a contribution must be unpredictable)."""
    return secrets.token_hex(16)


@dataclass
class TableModel:
    """One table as this client knows it: lobby info, our seat, the view, the last seq."""

    table: str
    seat: int | None = None              # our seat; None when spectating
    seq: int = 0                         # our sequence number of the last event applied
    info: TableInfo | None = None        # the latest lobby info (table_changed)
    view: TableView | None = None        # the engine's view of our seat, once a match runs
    pending_discard: list[str] = field(default_factory=list)
    match: int = 0                       # this table's match number (a rematch: the next)
    commitment: str | None = None        # R8a: the current match's commitment
    #: The latest chat messages (``chat`` events), and who said them: sender id ->
    #: (name, seat or None for a spectator), which is what ``mute`` needs.
    chat: list[ChatMessage] = field(default_factory=list)
    speakers: dict[str, tuple[str, int | None]] = field(default_factory=dict)
    #: Our own sender id at this table, once a ``chat_history`` told it (1.4).
    my_sender: str | None = None
    #: Senders we mute at this table (our mute commands, and the head's chat_history).
    muted: set[str] = field(default_factory=set)
    #: R8a: what the latest check found, (all well, in words), and which event made it.
    fair_note: tuple[bool, str] | None = None
    fair_note_of: str | None = None
    #: R8a: our last contribution and the commitment the table showed when we sent it.
    sent: tuple[str | None, str] | None = None
    #: An event could not be applied from what we know: a fresh snapshot is needed.
    stale: bool = False

    CHAT_KEPT = 200

    # ------------------------------------------------------------------ queries

    @property
    def spectator(self) -> bool:
        return self.seat is None

    @property
    def my_turn(self) -> bool:
        v = self.view
        return (v is not None and self.seat is not None and v.to_act == self.seat
                and v.phase in TURN_PHASES)

    @property
    def status(self) -> str:
        return self.info.status if self.info else "waiting"

    def seat_name(self, seat: int) -> str | None:
        """The raw (uncleaned) name in ``seat`` from the lobby info, if known."""
        if not self.info:
            return None
        seats = self.info.seats
        if 0 <= seat < len(seats):
            return seats[seat].name or None
        return None

    # ------------------------------------------------------------------ R8a

    def contributing(self, contribution: str, seen: str | None = None) -> None:
        """We are sending ``contribution`` now, having seen ``seen`` (default: the table's
        ``next_commitment`` as we know it): remembered to check the match's start."""
        if seen is None and self.info:
            seen = self.info.next_commitment
        self.sent = (seen, contribution)

    def _on_deals_committed(self, e: DealsCommitted) -> None:
        """A match starts (the first, or a rematch): a fresh view, and R8a's checks."""
        self.match = e.match
        self.commitment = e.commitment
        self.view = None
        self.pending_discard = []
        # The table_changed that says "playing" comes after the first deal's events.
        self._news(status="playing", match=e.match, rematch=[])
        words = tr("cli.fair.committed", match=self.match, commitment=self.commitment,
                   contributed=contributed(fair.contributors(e.contributions or [])))
        problems = []
        if self.sent is not None and self.seat is not None:
            seen, mine = self.sent
            if seen is not None and seen != self.commitment:
                problems.append(tr("fair.start.not_seen"))
            if self.seat >= len(e.contributions) or e.contributions[self.seat] != mine:
                problems.append(tr("fair.start.not_in"))
        if problems:
            self.fair_note = (False, tr("cli.fair.but", words=words,
                                        problems=tr("fair.and").join(problems)))
        else:
            self.fair_note = (True, tr("cli.fair.in" if self.sent is not None
                                       and self.seat is not None else "cli.fair.end",
                                       words=words))
        self.fair_note_of = "deals_committed"
        self.sent = None

    def _check_record(self, e: MatchOver) -> None:
        """R8a at the end: the revealed record proves the deals, against the commitment
        this match started with."""
        if e.record.get("fair") is None:
            return
        try:
            verify_record(e.record, self.commitment)
        except RecordError as exc:
            self.fair_note = (False, tr("cli.fair.not_proven", error=exc))
        else:
            self.fair_note = (True, tr(
                "cli.fair.proven",
                commitment=f" ({self.commitment})" if self.commitment else "",
                contributed=contributed(
                    fair.contributors(e.record["fair"].get("contributions") or []))))
        self.fair_note_of = "match_over"

    def _on_chat_history(self, e: ChatHistory) -> None:
        """A head's chat so far (protocol 1.4): it replaces the log, and names our own
        sender id at this table."""
        self.my_sender = e.sender or self.my_sender
        self.muted = set(e.muted)
        self.chat = []
        for line in e.lines:
            self._on_chat(line)

    def _news(self, **changes: object) -> None:
        """Lobby news ahead of its ``table_changed``: a new info, never the one we were sent
        (the caller may hold it as the info *before* this event)."""
        if self.info is not None:
            self.info = msgspec.structs.replace(self.info, **changes)

    def _presence(self, seat: int, connected: bool) -> None:
        if self.info is not None and 0 <= seat < len(self.info.seats):
            seats = list(self.info.seats)
            seats[seat] = msgspec.structs.replace(seats[seat], connected=connected)
            self._news(seats=seats)

    def _on_chat(self, e: ChatMessage) -> None:
        self.chat = [*self.chat, e][-self.CHAT_KEPT:]
        self.speakers[e.sender] = (e.name, e.from_seat)

    # ------------------------------------------------------------------ applying

    def apply(self, event: EventPayload) -> None:
        """Apply one event to the view, as the engine does."""
        match event:
            case DealsCommitted():
                self._on_deals_committed(event)
            case ChatMessage():
                self._on_chat(event)
            case ChatHistory():
                self._on_chat_history(event)
            case Snapshot(view=view):
                self.view = copy.deepcopy(view)
                self.seat = view.viewer
                self.stale = False
            case TableChanged(table=info):
                self.info = info
            case PlayerConnected(seat=seat) | PlayerDisconnected(seat=seat):
                self._presence(seat, isinstance(event, PlayerConnected))
            case RematchAccepted(seat=seat):
                if self.info is not None and seat not in self.info.rematch:
                    self._news(rematch=[*self.info.rematch, seat])
            case PartnerDraw() | DealStarted():
                # A snapshot always comes first; a server that skipped it still starts a
                # match here, from an empty view.
                self._game(self.view or self._empty_view(), event)
            case _ if self.view is not None:
                self._game(self.view, event)
            case _:
                pass   # an event of a match we have no view of

    def _empty_view(self) -> TableView:
        options = copy.deepcopy(self.info.options) if self.info else TableOptions()
        self.view = TableView(
            viewer=self.seat, phase=Phase.PLAY, options=options, deal_number=0, dealer=0,
            to_act=None, hand=[], hand_sizes=[0, 0, 0, 0], leader=0, trick=[], tricks=[],
            trick_counts=[0, 0, 0, 0], points=[0, 0], deals=[], chanter_votes=[None] * 4,
            signals=[], draw=[], result=None)
        return self.view

    def _game(self, v: TableView, event: EventPayload) -> None:
        """The game's events, each changing the view as the engine changed its state."""
        match event:
            case PartnerDraw():
                # R7: seats move; ``seating[s]`` is where the player of seat ``s`` now sits.
                v.draw = list(event.cards)
                v.dealer = event.dealer
                if self.seat is not None:
                    self.seat = event.seating[self.seat]
                    v.viewer = self.seat
            case DealStarted(deal_number=number, dealer=dealer):
                # R8: a fresh deal; R9: with chanter the deal opens with the vote.
                v.deal_number, v.dealer = number, dealer
                v.phase = Phase.CHANTER_VOTE if v.options.chanter else Phase.PLAY
                v.to_act, v.hand, v.hand_sizes = None, [], [9, 9, 9, 9]
                v.leader, v.trick, v.tricks, v.trick_counts = left_of(dealer), [], [], [0] * 4
                v.chanter_votes, v.signals, v.discarded, v.signals_sent = [None] * 4, [], [], []
                self.pending_discard = []
            case HandDealt(seat=seat, cards=cards) if seat == self.seat:
                v.hand = sort_by_strength(list(cards))
            case ChanterVoted(seat=seat, vote=vote):
                v.chanter_votes[seat] = vote
                v.to_act = None
            case ChanterResult(accepted=accepted):
                # R9: all four agreed, the talon goes to the dealer's left and the dealer.
                first = left_of(v.dealer)
                if accepted:
                    v.phase = Phase.CHANTER_DISCARD
                    v.hand_sizes[first] += 6
                    v.hand_sizes[v.dealer] += 6
                else:
                    v.phase = Phase.PLAY
                    v.leader = first
                v.to_act = None
            case TalonDealt(seat=seat, cards=cards) if seat == self.seat:
                v.hand = sort_by_strength([*v.hand, *cards])
            case ChanterDiscarded(seat=seat):
                v.hand_sizes[seat] -= 6
                if seat == self.seat and self.pending_discard:
                    v.hand = [c for c in v.hand if c not in self.pending_discard]
                    v.discarded = list(self.pending_discard)
                    self.pending_discard = []
                elif seat == self.seat:
                    # Discarded for us (a turn timer, a bot in our seat, another client of
                    # our session): which six is not said to anyone, so ask for a snapshot.
                    self.stale = True
                if seat != left_of(v.dealer):
                    v.phase = Phase.PLAY
                    v.leader = left_of(v.dealer)
                v.to_act = None
            case CardPlayed(seat=seat, card=card):
                # R10: any card; the turn passes clockwise.
                v.trick.append((seat, card))
                v.hand_sizes[seat] = max(0, v.hand_sizes[seat] - 1)
                if seat == self.seat and card in v.hand:
                    v.hand = [c for c in v.hand if c != card]
                v.to_act = None
            case TrickDone(leader=leader, cards=cards, winner=winner):
                # R11: the winner leads next; after a spoiled trick the same leader again.
                v.tricks.append(TrickInfo(leader=leader, cards=list(cards), winner=winner))
                v.trick = []
                if winner is not None:
                    v.trick_counts[winner] += 1
                v.leader = winner if winner is not None else leader
                v.to_act = None   # the next `turn` says who leads (none after the ninth)
            case DealScored():
                # R12/R13: the deal's result joins the match history.
                v.points = list(event.totals)
                v.deals.append(DealInfo(dealer=event.dealer, winner=event.winner,
                                        points=list(event.points), mordienne=event.mordienne,
                                        trick_counts=list(event.trick_counts)))
                v.to_act = None
            case MatchOver():
                v.phase = Phase.MATCH_OVER
                v.to_act = None
                v.points = list(event.points)
                v.result = event.result
                self._check_record(event)
                if self.status == "playing":
                    self._news(status="finished")  # its table_changed follows at once
            case SignalReceived(from_seat=sender, signal=signal, n=n):
                v.signals.append(SignalInfo(from_seat=sender, signal=signal, n=n))
            case SignalSent(signal=signal, n=n):
                # R16: what we signalled, without who noticed it (the bots' view lists it).
                v.signals_sent.append(wire_views.SignalSent(signal=signal, n=n))
            case Turn(seat=seat):
                v.to_act = seat
            case _:
                pass
