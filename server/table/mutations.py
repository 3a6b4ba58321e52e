"""What each table command does to a table's working copy: pure, typed, no I/O.

Every function takes a :class:`Work` (a copy of the table's document and match, made by the
table in :mod:`.actor`), checks everything it needs, changes the copy, records the events
it caused and returns the command's typed ``ok`` result. A refusal raises an
:class:`~protocol.AluetteError` (a ``CommandError`` here, a ``RuleError`` from the engine);
the copy is then thrown away, so a refused command changes nothing. Nothing here knows a
connection, a lock or Redis exists: the actor commits the copy, then replies, then fans out.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field

import msgspec

import protocol
from protocol import CommandError, ErrorCode, EventPayload
from protocol.fields import BotLevel
from protocol.records import Record
from protocol.results import LeaveResult, SeatResult, TableResult
from server.game import Action, Event, Match, Private
from server.game.record import export_record

from .state import SeatState, SeedMaterial, TableState

#: Bots get a name of the west coast by seat, so players can tell them apart.
BOT_NAMES = ("Anne", "Yann", "Soizic", "Loïc")
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"


@dataclass(frozen=True, slots=True)
class Watchers:
    """An audience chosen when the event is stored: the seated humans (``seats``) and the
    players watching the table without a seat at that moment (``spectators``), except the
    players in ``muting`` (who muted its sender).

    A chat message is the one event whose audience depends on who is there and on each
    recipient's wishes; like every private event it is numbered only in its recipients'
    sequences, so whoever does not receive it (a seat, for a spectator's message; a player
    who muted its sender) sees no gap and no count (docs/PROTOCOL.md, "Sequence numbers").
    """

    seats: bool
    spectators: bool
    muting: frozenset[str] = frozenset()


#: Who receives an event: everyone (None), the humans in these seats, or :class:`Watchers`.
Audience = tuple[int, ...] | Watchers | None


@dataclass(frozen=True, slots=True)
class Emitted:
    """One event of a command: its typed payload and who may see it (None: everyone at the
    table; a tuple: these seats only, R8, R9, R16; :class:`Watchers`: chat)."""

    payload: EventPayload
    to: Audience = None


@dataclass(slots=True)
class Work:
    """A command's working copy: the document and match to store if it succeeds, and the
    events it caused, in order."""

    state: TableState
    match: Match | None
    now: float = 0.0
    events: list[Emitted] = field(default_factory=list)
    #: Players watching the table without a seat (a connection open) when the command
    #: runs: the :class:`Watchers` audience of a spectator's chat.
    watchers: frozenset[str] = frozenset()
    #: The engine actions applied, in order (what a light commit stores, issue 32).
    actions: list[Action] = field(default_factory=list)
    #: The mutation changes nothing but the match, through :meth:`apply` (a card, a
    #: signal, a vote or a discard): it may be stored as a delta of its actions.
    light: bool = False

    def emit(self, payload: EventPayload, to: Audience = None) -> None:
        self.events.append(Emitted(payload, to))

    @property
    def spectators(self) -> int:
        """People watching without a seat, as the table is after this command: one who was
        watching and has just sat down is a player now (issue 31, item 8)."""
        return sum(1 for p in self.watchers if self.state.seat_of(p) is None)

    def table_changed(self) -> None:
        self.emit(protocol.TableChanged(table=self.state.info(self.spectators)))

    def apply(self, action: Action) -> None:
        """Apply an engine action and keep its events (the engine speaks protocol structs)."""
        assert self.match is not None
        for event in self.match.apply(action):
            self.emit_engine(event)
        self.actions.append(action)

    def emit_engine(self, event: Event) -> None:
        match event:
            case Private(payload, to):
                self.emit(payload, to)
            case protocol.MatchOver():   # the engine leaves the R17 record to us
                self.emit(msgspec.structs.replace(event, record=self.record()))
            case _:
                self.emit(event)

    def record(self) -> Record:
        """The R17 record of the match, with the seats' names; once the match is over, its
        number at the table and its seed material (R8a), never before."""
        assert self.match is not None
        record = export_record(self.match, [s.name or f"Seat {i}"
                                            for i, s in enumerate(self.state.seats)])
        record["bots"] = [s.kind == "bot" or s.bot for s in self.state.seats]   # 1.5
        seed = self.state.match_seed
        if self.match.over and seed is not None:
            record["match"] = self.state.matches_started()
            record["fair"] = seed.reveal()
        return record


def new_table(table_id: str, player: str, player_name: str, cmd: protocol.CreateTable,
              now: float, max_bot_budget: float, *, bot: bool = False) -> TableState:
    """A new table with its creator in seat 0; its seed (the bots' randomness) is secret,
    and so is the secret behind its first match's commitment (R8a), public from now on.

    The table's ``bot_budget`` is capped by the server (``--max-bot-budget``): how hard
    bots think is the server's cost, not only the table's choice.
    """
    options = cmd.options
    if options.bot_budget > max_bot_budget:
        options = protocol.TableOptions(**{**protocol.to_dict(options),
                                           "bot_budget": max_bot_budget})
    state = TableState(
        id=table_id,
        name=protocol.clean_text(cmd.name or f"{player_name}'s table")[: protocol.MAX_NAME_LEN],
        options=options,
        private=cmd.private,
        code="".join(secrets.choice(CODE_ALPHABET) for _ in range(6)) if cmd.private else None,
        creator=player,
        seed=secrets.randbits(63),
        created_at=now,
        last_activity=now,
        next_seed=SeedMaterial.new(),
    )
    try:
        state.engine_options()
    except ValueError as exc:
        raise CommandError(ErrorCode.INVALID_FIELD, str(exc)) from None
    state.seats[0] = SeatState(kind="human", name=player_name, player=player, connected=True,
                               bot=bot)
    return state


# ---------------------------------------------------------------------------- lobby


def _need_waiting(work: Work, what: str) -> None:
    if work.state.status != "waiting":
        raise CommandError(ErrorCode.WRONG_PHASE, f"cannot {what}: the match has started")


def _need_seated(work: Work, player: str) -> int:
    seat = work.state.seat_of(player)
    if seat is None:
        raise CommandError(ErrorCode.NOT_SEATED, "you have no seat at this table")
    return seat


def _may_manage(work: Work, player: str) -> None:
    """``add_bot``/``remove_bot``: the creator, or anyone seated at the table."""
    if work.state.seat_of(player) is None and work.state.creator != player:
        raise CommandError(ErrorCode.NOT_AT_TABLE, "you are not at this table")


def contribute(work: Work, player: str, contribution: str | None) -> None:
    """R8a: ``player``'s contribution to the table's next match (the latest one counts).

    Its commitment (``next_commitment``) is public from the moment that match was prepared,
    so the contribution cannot have been chosen before the server's secret was fixed."""
    if contribution is not None:
        work.state.contributions[player] = contribution


def join(work: Work, player: str, name: str, seat: int | None, code: str | None,
         contribution: str | None = None, *, bot: bool = False) -> SeatResult:
    """Take a seat at a waiting table, or at a finished one (to play its rematch); a player
    already seated gets their seat back, and may send a contribution this way (R8a), or
    show the name they have taken since (protocol 1.5). ``bot``: the player's client said
    it is a program (1.5); the seat shows it."""
    state = work.state
    mine = state.seat_of(player)
    if mine is not None:
        contribute(work, player, contribution)
        if state.seats[mine].name != name:
            state.seats[mine].name = name
            work.table_changed()
        return SeatResult(table=state.id, seat=mine)
    if state.private and code != state.code:
        raise CommandError(ErrorCode.BAD_CODE, "wrong or missing join code")
    if state.status not in ("waiting", "finished", "playing"):
        raise CommandError(ErrorCode.WRONG_PHASE, "cannot join: the table is closed")
    empty = [i for i, s in enumerate(state.seats) if s.kind == "empty"]
    # 1.5: during a match, or for the rematch of a finished one, a newcomer takes a seat a
    # bot plays (never one a bot plays for a player who is away: that stays theirs).
    bots = ([i for i, s in enumerate(state.seats) if s.kind == "bot"]
            if state.status != "waiting" else [])
    if state.status == "playing" and not bots:
        raise CommandError(ErrorCode.WRONG_PHASE, "cannot join: the match has started and "
                           "every seat has its player")
    if not empty and not bots:
        raise CommandError(ErrorCode.TABLE_FULL, "all four seats are taken")
    if seat is None:
        seat = (empty or bots)[0]
    elif seat not in empty and seat not in bots:
        raise CommandError(ErrorCode.SEAT_TAKEN, f"seat {seat} is taken",
                           details={"seat": seat})
    state.seats[seat] = SeatState(kind="human", name=name, player=player, connected=True,
                                  bot=bot)
    if state.status == "playing" and player not in state.members:
        state.members.append(player)
    contribute(work, player, contribution)
    work.table_changed()
    if (state.status == "waiting" and state.options.auto_start
            and all(s.kind != "empty" for s in state.seats)):
        begin_match(work)
        work.table_changed()
    return SeatResult(table=state.id, seat=seat)


def leave(work: Work, player: str) -> LeaveResult:
    """Before the match a seat is freed; during it a bot of the table's level takes it;
    after it the seat is freed for someone else, or a bot if a rematch starts without them."""
    state = work.state
    seat = state.seat_of(player)
    if seat is None:
        raise CommandError(ErrorCode.NOT_AT_TABLE, "you are not at this table")
    state.contributions.pop(player, None)
    if state.status == "waiting":
        state.seats[seat] = SeatState()
    elif state.status == "playing":
        state.seats[seat] = SeatState(kind="bot", name=f"bot ({state.seats[seat].name})",
                                      level=state.options.bot_level)
    else:  # a finished table: the seat is simply given up
        state.seats[seat] = SeatState()
        state.rematch = [p for p in state.rematch if p != player]
    work.table_changed()
    if state.status == "finished":
        start_rematch_if_agreed(work)     # they may have been the last one not agreeing
    return LeaveResult(table=state.id, seat=seat)


def add_bot(work: Work, player: str, seat: int, level: BotLevel) -> SeatResult:
    state = work.state
    _may_manage(work, player)
    _need_waiting(work, "add a bot")
    if state.seats[seat].kind != "empty":
        raise CommandError(ErrorCode.SEAT_TAKEN, f"seat {seat} is taken", details={"seat": seat})
    state.seats[seat] = SeatState(kind="bot", name=BOT_NAMES[seat], level=level)
    work.table_changed()
    if state.options.auto_start and all(s.kind != "empty" for s in state.seats):
        begin_match(work)
        work.table_changed()
    return SeatResult(table=state.id, seat=seat)


def remove_bot(work: Work, player: str, seat: int) -> SeatResult:
    state = work.state
    _may_manage(work, player)
    _need_waiting(work, "remove a bot")
    if state.seats[seat].kind != "bot":
        raise CommandError(ErrorCode.INVALID_FIELD, f"seat {seat} has no bot",
                           details={"field": "$.seat"})
    state.seats[seat] = SeatState()
    work.table_changed()
    return SeatResult(table=state.id, seat=seat)


def start(work: Work, player: str, contribution: str | None = None) -> TableResult:
    """The creator starts the match; empty seats are filled with bots of the table's level.

    If the creator has left the table, any seated player may start it. ``contribution``
    is the starter's (R8a).
    """
    state = work.state
    creator_seated = state.seat_of(state.creator) is not None
    if state.creator != player and (creator_seated or state.seat_of(player) is None):
        raise CommandError(ErrorCode.NOT_CREATOR, "only the table's creator can start it")
    if state.status != "waiting":
        raise CommandError(ErrorCode.NOT_READY, f"the table is {state.status}, not waiting")
    if state.seat_of(player) is not None:
        contribute(work, player, contribution)
    _fill_with_bots(state)
    begin_match(work)
    work.table_changed()
    return TableResult(table=state.id)


def _fill_with_bots(state: TableState) -> None:
    for i, s in enumerate(state.seats):
        if s.kind == "empty":
            state.seats[i] = SeatState(kind="bot", name=BOT_NAMES[i], level=state.options.bot_level)


def begin_match(work: Work) -> None:
    """Commit to the deals, then deal the first hand (R6-R8); with the partner draw (R7)
    everyone moves to their seat.

    R8a: the seed comes from the secret and salt whose commitment the table has shown
    since this match was prepared, and from each seat's contribution (bots and players
    who sent none: none). Everyone is told the commitment and the contributions before any
    card; the next match's secret is drawn now, so its commitment is public before anyone
    can contribute to it.
    """
    state = work.state
    sealed = state.next_seed or SeedMaterial.new()   # a table stored before R8a has none
    contributions: list[str | None] = [
        state.contributions.get(s.player) if s.kind == "human" and s.player else None
        for s in state.seats]
    match, events = Match.new(state.engine_options(), sealed.seed(contributions), sealed.scheme)
    number = state.matches_started() + 1
    state.match_number = number
    state.match_seed = sealed.started(contributions)
    state.next_seed = SeedMaterial.new()
    state.contributions = {}
    state.rematch = []
    if match.options.partner_draw:
        moved = [SeatState()] * 4
        for old, new in enumerate(match.seating):
            moved[new] = state.seats[old]
        state.seats = moved
    state.status = "playing"
    state.lineup = [s.player if s.kind == "human" and not s.bot else None for s in state.seats]
    for p in state.humans():
        if p not in state.members:
            state.members.append(p)
    work.match = match
    work.emit(protocol.DealsCommitted(match=number, commitment=sealed.commitment,
                                      contributions=contributions))
    for raw in events:
        work.emit_engine(raw)


# ---------------------------------------------------------------------------- rematch


def rematch(work: Work, player: str, contribution: str | None = None) -> TableResult:
    """A seated player asks for another match at this finished table, or accepts one:
    same seats, same options, a new draw of the first dealer (R6) or of partners (R7),
    new seed material (R8a). It starts once everyone who must agree has
    (:func:`rematch_waiting_for`); bots always agree."""
    state = work.state
    seat = _need_seated(work, player)
    if work.match is None or state.status != "finished":
        raise CommandError(ErrorCode.WRONG_PHASE, "a rematch can only follow a finished "
                           "match")
    contribute(work, player, contribution)
    if player not in state.rematch:
        state.rematch = [*state.rematch, player]
        work.emit(protocol.RematchAccepted(seat=seat))
        work.table_changed()
    start_rematch_if_agreed(work)
    return TableResult(table=state.id)


def rematch_waiting_for(state: TableState, now: float) -> list[int]:
    """Seats whose player must still agree to the rematch: every seated human who has not,
    unless they have been away (disconnected) for longer than the table's grace period:
    those have left, and a bot takes their seat when the rematch starts."""
    out = []
    for i, s in enumerate(state.seats):
        if s.kind != "human" or s.player in state.rematch:
            continue
        away_since = s.disconnected_at
        if s.connected or (away_since is not None
                           and now < away_since + state.options.grace_s):
            out.append(i)
    return out


def rematch_due(state: TableState) -> float | None:
    """When the rematch will start by itself: once the last player who is away and has not
    agreed runs out of grace, if everyone else has agreed. None: not by itself."""
    if state.status != "finished" or not state.rematch or not state.humans():
        return None
    deadlines = []
    for s in state.seats:
        if s.kind != "human" or s.player in state.rematch:
            continue
        if s.connected:
            return None
        if s.disconnected_at is not None:
            deadlines.append(s.disconnected_at + state.options.grace_s)
    return max(deadlines, default=0.0)


def start_rematch_if_agreed(work: Work) -> None:
    """Start the rematch if it was asked for and nobody it waits for is left; seats of
    players who left meanwhile (or are away for good) go to bots."""
    state = work.state
    if (state.status != "finished" or not state.rematch or work.match is None
            or rematch_waiting_for(state, work.now) or not state.humans()):
        return
    for i, s in enumerate(state.seats):
        if s.kind == "human" and s.player not in state.rematch:
            state.seats[i] = SeatState()
    _fill_with_bots(state)
    begin_match(work)
    work.table_changed()


# ---------------------------------------------------------------------------- the game


def act(work: Work, player: str, action: Callable[[int], Action]) -> TableResult:
    """play, chanter_vote, discard, signal: the engine decides (R9-R16) for the player's
    seat (``action`` makes the engine action once the seat is known)."""
    seat = _need_seated(work, player)
    if work.match is None:
        raise CommandError(ErrorCode.WRONG_PHASE, "the match has not started")
    work.apply(action(seat))
    return TableResult(table=work.state.id)


def bot_action(work: Work, seat: int, action: Action) -> None:
    """A bot's (or a timer's) move for ``seat``; the actor checked it is still that turn."""
    work.apply(action)


# ---------------------------------------------------------------------------- presence


def connection_change(work: Work, seat: int, connected: bool) -> None:
    """A seated human's first connection came, or their last one went: an event, but only
    when it is news (a resume of a connected seat must not tell the table anything).

    No ``turn`` is repeated here: the returning seat's replay or snapshot already says whose
    turn it is, and a second ``turn`` for one turn would make a client act twice.
    """
    s = work.state.seats[seat]
    if s.kind != "human" or s.connected == connected:
        return
    s.connected = connected
    s.disconnected_at = None if connected else work.now
    s.bot_votes = []
    came_back = connected and s.takeover
    if came_back:
        s.takeover = False
    work.emit(protocol.PlayerConnected(seat=seat) if connected
              else protocol.PlayerDisconnected(seat=seat))
    work.table_changed()


def takeover(work: Work, seat: int, player: str) -> None:
    """The grace period ran out: a bot plays the seat until its human comes back."""
    s = work.state.seats[seat]
    if s.kind != "human" or s.player != player or s.takeover or s.connected:
        return
    s.takeover = True
    s.bot_votes = []
    work.table_changed()


def let_bot_play(work: Work, player: str, seat: int) -> SeatResult:
    """1.5: a seated player votes to let a bot play ``seat`` now, its player being away in
    their grace period; once every connected seated player has voted, a bot takes the seat
    as if the grace period had ended (so the others are not stalled for ``grace_s``). The
    absent player keeps the seat: when they come back they play on."""
    state = work.state
    _need_seated(work, player)
    s = state.seats[seat]
    if state.status != "playing" or state.grace_until(seat) is None or s.player is None:
        raise CommandError(ErrorCode.WRONG_PHASE, f"seat {seat} is not waiting for its "
                           "player to come back")
    if player not in s.bot_votes:
        s.bot_votes = [*s.bot_votes, player]
    present = {x.player for x in state.seats if x.kind == "human" and x.connected and x.player}
    if present <= set(s.bot_votes):
        takeover(work, seat, s.player)
    else:
        work.table_changed()
    return SeatResult(table=state.id, seat=seat)
