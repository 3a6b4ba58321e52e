"""Lobby and table commands: what each protocol command does to a table's working copy.

Each handler checks everything first and raises :class:`CommandError` (or the engine's
``RuleError``) before touching the copy, though a refused copy is thrown away anyway.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from typing import Any

import protocol
from protocol import ErrorCode
from server.game import ChanterVote, Discard, InvalidOptions, Match, Play, Signal

from .errors import CommandError
from .table import Result, Table, Work
from .tablestate import SeatState, TableState

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
#: Bots get a name of the west coast by seat, so players can tell them apart.
BOT_NAMES = ("Anne", "Yann", "Soizic", "Loïc")


def table_id_for(player: str, command_id: int) -> str:
    """Derived from who asked and the command id, so a resent create_table finds its table."""
    return "t" + hashlib.sha256(f"{player}:{command_id}".encode()).hexdigest()[:12]


def new_table_state(table_id: str, player: str, player_name: str,
                    cmd: protocol.CreateTable) -> TableState:
    """A new table with its creator in seat 0; its seed is secret (it predicts every hand)."""
    options = protocol.to_dict(cmd.options)
    state = TableState(
        id=table_id,
        name=protocol.clean_text(cmd.name or f"{player_name}'s table")[: protocol.MAX_NAME_LEN],
        options=options,
        private=cmd.private,
        code="".join(secrets.choice(CODE_ALPHABET) for _ in range(6)) if cmd.private else None,
        creator=player,
        seed=secrets.randbits(63),
        created_at=time.time(),
    )
    try:
        state.engine_options()
    except InvalidOptions as exc:
        raise CommandError(ErrorCode.INVALID_FIELD, str(exc)) from None
    state.seats[0] = SeatState(kind="human", name=player_name, player=player)
    return state


def _need_waiting(work: Work, what: str) -> None:
    if work.state.status != "waiting":
        raise CommandError(ErrorCode.WRONG_PHASE, f"cannot {what}: the match has started")


def _need_member(table: Table, work: Work, player: str) -> None:
    if work.state.seat_of(player) is None and work.state.creator != player:
        raise CommandError(ErrorCode.NOT_AT_TABLE, "you are not at this table")


def join(table: Table, player: str, name: str, seat: int | None, code: str | None,
         ) -> Any:
    def mutate(work: Work) -> Result:
        state = work.state
        mine = state.seat_of(player)
        if mine is not None:
            return {"table": state.id, "seat": mine}
        if state.private and code != state.code:
            raise CommandError(ErrorCode.BAD_CODE, "wrong or missing join code")
        _need_waiting(work, "join")
        empty = [i for i, s in enumerate(state.seats) if s.kind == "empty"]
        if not empty:
            raise CommandError(ErrorCode.TABLE_FULL, "all four seats are taken")
        if seat is None:
            seat_ = empty[0]
        elif seat not in empty:
            raise CommandError(ErrorCode.SEAT_TAKEN, f"seat {seat} is taken")
        else:
            seat_ = seat
        state.seats[seat_] = SeatState(kind="human", name=name, player=player)
        table.table_changed(work)
        maybe_auto_start(work)
        return {"table": state.id, "seat": seat_}
    return mutate


def leave(table: Table, player: str) -> Any:
    """Before the match a seat is freed; during it a bot of the table's level takes it."""
    def mutate(work: Work) -> Result:
        state = work.state
        seat = state.seat_of(player)
        if seat is None:
            raise CommandError(ErrorCode.NOT_SEATED, "you have no seat at this table")
        if state.status == "waiting":
            state.seats[seat] = SeatState()
        else:
            state.seats[seat] = SeatState(kind="bot", name=f"bot ({state.seats[seat].name})",
                                          level=str(state.options.get("bot_level", "normal")))
        table.table_changed(work)
        return {"table": state.id, "seat": seat}
    return mutate


def add_bot(table: Table, player: str, seat: int, level: str) -> Any:
    def mutate(work: Work) -> Result:
        state = work.state
        _need_member(table, work, player)
        _need_waiting(work, "add a bot")
        if state.seats[seat].kind != "empty":
            raise CommandError(ErrorCode.SEAT_TAKEN, f"seat {seat} is taken")
        state.seats[seat] = SeatState(kind="bot", name=BOT_NAMES[seat], level=level)
        table.table_changed(work)
        maybe_auto_start(work)
        return {"table": state.id, "seat": seat}
    return mutate


def remove_bot(table: Table, player: str, seat: int) -> Any:
    def mutate(work: Work) -> Result:
        state = work.state
        _need_member(table, work, player)
        _need_waiting(work, "remove a bot")
        if state.seats[seat].kind != "bot":
            raise CommandError(ErrorCode.INVALID_FIELD, f"seat {seat} has no bot")
        state.seats[seat] = SeatState()
        table.table_changed(work)
        return {"table": state.id, "seat": seat}
    return mutate


def start(table: Table, player: str) -> Any:
    def mutate(work: Work) -> Result:
        if work.state.creator != player:
            raise CommandError(ErrorCode.NOT_CREATOR, "only the table's creator can start it")
        _need_waiting(work, "start")
        if any(s.kind == "empty" for s in work.state.seats):
            raise CommandError(ErrorCode.NOT_READY, "fill all four seats (players or bots) first")
        begin_match(work)
        table.table_changed(work)
        return {"table": work.state.id}
    return mutate


def maybe_auto_start(work: Work) -> None:
    state = work.state
    if state.options.get("auto_start") and all(s.kind != "empty" for s in state.seats):
        begin_match(work)


def begin_match(work: Work) -> None:
    """Deal the first hand (R6-R8); with the partner draw (R7) move everyone to their seat."""
    state = work.state
    match, events = Match.new(state.engine_options(), state.seed)
    if match.options.partner_draw:
        moved = [SeatState()] * 4
        for old, new in enumerate(match.seating):
            moved[new] = state.seats[old]
        state.seats = moved
    state.status = "playing"
    work.match = match
    work.events += events


def _seat_in_match(work: Work, player: str) -> int:
    seat = work.state.seat_of(player)
    if seat is None:
        raise CommandError(ErrorCode.NOT_SEATED, "you have no seat at this table")
    if work.match is None:
        raise CommandError(ErrorCode.WRONG_PHASE, "the match has not started")
    return seat


def game_action(player: str, cmd: Any) -> Any:
    """play, chanter_vote, discard, signal: the engine decides (R9-R16)."""
    def mutate(work: Work) -> Result:
        seat = _seat_in_match(work, player)
        assert work.match is not None
        if isinstance(cmd, protocol.Play):
            action: Any = Play(seat, cmd.card)
        elif isinstance(cmd, protocol.ChanterVote):
            action = ChanterVote(seat, cmd.vote)
        elif isinstance(cmd, protocol.Discard):
            action = Discard(seat, tuple(cmd.cards))
        else:
            action = Signal(seat, cmd.signal, cmd.n)
        work.events += work.match.apply(action)
        return {"table": work.state.id}
    return mutate


def connection_change(table: Table, seat: int, connected: bool) -> Any:
    """A seated human's connection came or went: tell the table (it is an event too)."""
    def mutate(work: Work) -> Result:
        s = work.state.seats[seat]
        if connected and s.takeover:
            s.takeover = False
        work.emit({"type": "player_connected" if connected else "player_disconnected",
                   "seat": seat})
        table.table_changed(work)
        match = work.match
        if connected and match is not None and not match.over and match.to_act == seat:
            # Whatever it missed, the returning seat is told it is its turn right now.
            work.emit({"type": "turn", "seat": seat, "phase": str(match.phase)})
        return {}
    return mutate


def takeover(table: Table, seat: int, player: str) -> Any:
    """The grace period ran out: a bot plays the seat until its human comes back."""
    def mutate(work: Work) -> Result:
        s = work.state.seats[seat]
        if s.kind != "human" or s.player != player or s.takeover:
            return {}
        s.takeover = True
        table.table_changed(work)
        return {}
    return mutate
