"""One table as an asyncio actor around the pure engine (docs/ARCHITECTURE.md convention 1).

Every change to a table, whoever causes it (a player's command, a bot's move, a timer, a
connection dropping), goes through :meth:`Table.execute`: under the table's lock it works on
a *copy* of the state, stores the copy in Redis in one round trip with a version check, and
only then acknowledges, swaps the copy in and sends the events. So two racing commands are
applied one after the other, a refused or unstored command changes nothing, and nothing is
ever sent that was not stored first.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgpack
import msgspec

import protocol
from protocol import ErrorCode
from server.game import Match, RuleError, spectator_view, view
from server.game.actions import Action
from server.game.record import export_record
from server.store import StorageUnavailable, Store, VersionConflict

from .config import Settings
from .errors import CommandError
from .peer import Peer, send_to
from .tablestate import TableState

log = logging.getLogger(__name__)

Result = dict[str, Any]


@dataclass
class Work:
    """A command's working copy: the state to store if it succeeds, and its events."""

    state: TableState
    match: Match | None
    events: list[dict[str, Any]] = field(default_factory=list)

    def emit(self, event: dict[str, Any]) -> None:
        self.events.append(event)


Mutation = Callable[[Work], Result]


class Table:
    def __init__(self, state: TableState, version: int, store: Store, settings: Settings,
                 on_finished: Callable[[Table], None] | None = None) -> None:
        self.state = state
        self.version = version
        self.match = Match.from_dict(state.match) if state.match else None
        self.store = store
        self.settings = settings
        self.lock = asyncio.Lock()
        self.viewers: dict[Peer, str | None] = {}     # peer -> player id (None: anonymous)
        self.spectators: set[Peer] = set()
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._on_finished = on_finished
        self.last_activity = time.time()
        self.closed = False

    @property
    def id(self) -> str:
        return self.state.id

    # ------------------------------------------------------------------ who is here

    def connected_seats(self, state: TableState | None = None) -> set[int]:
        """Seats whose human has a live connection subscribed to this table."""
        state = state or self.state
        seats = set()
        for peer, player in self.viewers.items():
            if player is not None and peer.open and peer not in self.spectators:
                seat = state.seat_of(player)
                if seat is not None:
                    seats.add(seat)
        return seats

    def info(self) -> dict[str, Any]:
        return self.state.info(len(self.spectators), self.connected_seats())

    def seat_of_peer(self, peer: Peer) -> int | None:
        player = self.viewers.get(peer)
        if player is None or peer in self.spectators:
            return None
        return self.state.seat_of(player)

    def controlled_by_bot(self, seat: int, state: TableState | None = None) -> bool:
        s = (state or self.state).seats[seat]
        return s.kind == "bot" or (s.kind == "human" and s.takeover)

    def bot_level(self, seat: int, state: TableState | None = None) -> str:
        s = (state or self.state).seats[seat]
        return s.level if s.kind == "bot" and s.level else str(
            (state or self.state).options.get("bot_level", "normal"))

    # ------------------------------------------------------------------ the one way to change

    async def execute(self, player: str | None, command_id: int | None,
                      mutate: Mutation) -> Result:
        """Apply ``mutate`` to a copy, store it, then acknowledge and send its events.

        A command id already answered for this player returns the stored reply (the command
        was resent after a reconnect) without applying anything.
        """
        async with self.lock:
            if player is not None and command_id is not None:
                prior = self.state.reply_for(player, command_id)
                if prior is not None:
                    return prior
            work = Work(self.state.copy(), self.match.clone() if self.match else None)
            try:
                result = mutate(work)
            except RuleError as exc:
                code = ErrorCode(exc.code) if exc.code in ErrorCode.__members__.values() \
                    else ErrorCode.INVALID_FIELD
                raise CommandError(code, exc.message) from None
            if player is not None and command_id is not None:
                work.state.remember(player, command_id, result)
            await self._commit(work)
            return result

    async def _commit(self, work: Work) -> None:
        state = work.state
        if work.match is not None:
            state.match = work.match.to_dict(copy_data=False)   # never mutated once stored
            if work.match.over and state.status == "playing":
                state.status = "finished"
                state.finished_at = time.time()
        entries: list[tuple[int, list[int] | None, bytes]] = []
        for event in work.events:
            to = event.pop("to", None)
            if event["type"] == "match_over" and work.match is not None:
                event["record"] = export_record(
                    work.match, [s.name or f"Seat {i}" for i, s in enumerate(state.seats)])
            try:
                payload = protocol.encode(protocol.event_from_dict(event))
            except protocol.EventError:
                log.exception("engine event does not fit the protocol: %r", event)
                raise CommandError(ErrorCode.INTERNAL_ERROR, "internal error") from None
            state.seq += 1
            entries.append((state.seq, to, payload))
        log_entries = [(seq, msgpack.packb([to, payload])) for seq, to, payload in entries]
        try:
            self.version = await self.store.commit(
                state.id, self.version, state.to_bytes(), log_entries, self.settings.event_log_max)
        except StorageUnavailable:
            # Usually nothing was written; if the write landed but its reply was lost, the
            # version check catches it on the next write, and a resend with the same id is
            # answered from the stored reply: either way, resending is safe.
            raise CommandError(ErrorCode.STORAGE_UNAVAILABLE,
                               "storage did not confirm the move; send it again with the same "
                               "id (it is never applied twice)") from None
        except VersionConflict:
            # Someone else (or a write whose acknowledgement we lost) moved the table on:
            # adopt what is stored, tell viewers what they missed, and ask for a retry.
            await self.reload()
            raise CommandError(ErrorCode.STORAGE_UNAVAILABLE,
                               "the table changed underneath; nothing was applied, try again"
                               ) from None
        finished_now = self.state.status != "finished" and state.status == "finished"
        self.state, self.match = state, work.match
        self.last_activity = time.time()
        self._fan_out(entries)
        if finished_now:
            await self._save_record()
        self.after_change()

    async def reload(self) -> None:
        """Adopt the stored state (after a version conflict) and replay the missing events."""
        loaded = await self.store.load_table(self.id)
        if loaded is None:
            return
        version, raw = loaded
        fresh = TableState.from_bytes(raw)
        missed = await self.store.read_log(self.id, self.state.seq) or []
        self.version, self.state = version, fresh
        self.match = Match.from_dict(fresh.match) if fresh.match else None
        entries = []
        for seq, raw_entry in missed:
            to, payload = msgpack.unpackb(raw_entry)
            entries.append((seq, to, payload))
        self._fan_out(entries)

    async def _save_record(self) -> None:
        if self.match is None:
            return
        record = export_record(self.match, [s.name or f"Seat {i}"
                                            for i, s in enumerate(self.state.seats)])
        try:
            await self.store.save_record(self.id, msgspec.json.encode(record))
        except StorageUnavailable:
            log.warning("could not save the record of table %s yet", self.id)
        if self._on_finished:
            self._on_finished(self)

    # ------------------------------------------------------------------ sending

    def _frame(self, seq: int, payload: bytes | None) -> bytes:
        event = msgspec.Raw(payload) if payload is not None else None
        return protocol.encode(protocol.Event(table=self.id, seq=seq, event=event))  # type: ignore[arg-type]

    def _fan_out(self, entries: list[tuple[int, list[int] | None, bytes]]) -> None:
        """R16 and hidden hands: an event with ``to`` reaches only those seats; every other
        viewer gets a bare placeholder with its number, so each sequence stays gap-free."""
        if not self.viewers:
            return
        seats = {p: self.seat_of_peer(p) for p in self.viewers}
        for seq, to, payload in entries:
            full = self._frame(seq, payload)
            if to is None:
                send_to(self.viewers, full)
                continue
            allowed = [p for p, s in seats.items() if s is not None and s in to]
            others = [p for p, s in seats.items() if s is None or s not in to]
            send_to(allowed, full)
            send_to(others, self._frame(seq, None))

    def frames_for(self, peer: Peer, entries: list[tuple[int, bytes]]) -> list[bytes]:
        """Stored log entries as this peer may see them (resume replay)."""
        seat = self.seat_of_peer(peer)
        frames = []
        for seq, raw in entries:
            to, payload = msgpack.unpackb(raw)
            visible = to is None or (seat is not None and seat in to)
            frames.append(self._frame(seq, payload if visible else None))
        return frames

    def snapshot_frames(self, peer: Peer) -> list[bytes]:
        """The table as this peer may see it now, stamped with the last sequence number."""
        seq = self.state.seq
        frames = [protocol.encode(protocol.Event(
            table=self.id, seq=seq,
            event=protocol.TableChanged(table=protocol.table_info_from_dict(self.info()))))]
        if self.match is not None:
            seat = self.seat_of_peer(peer)
            v = view(self.match, seat) if seat is not None else spectator_view(self.match)
            frames.append(protocol.encode(protocol.Event(
                table=self.id, seq=seq, event=protocol.Snapshot(view=protocol.view_from_dict(v)))))
        return frames

    def table_changed(self, work: Work) -> None:
        info = work.state.info(len(self.spectators), self.connected_seats(work.state))
        work.emit({"type": "table_changed", "table": info})

    # ------------------------------------------------------------------ bots and timers

    def after_change(self) -> None:
        """Schedule whatever acts next on its own: a bot's move, bot signals, a turn timer."""
        if self.closed:
            return
        self._cancel("turn")
        match = self.match
        if match is None or match.over:
            return
        if self.state.options.get("signals", "private") != "off" and any(
                self.controlled_by_bot(s) for s in range(4)):
            self._spawn("signals", self._bot_signals())
        seat = match.to_act
        if seat is None:
            return
        if self.controlled_by_bot(seat):
            self._spawn("turn", self._bot_turn(seat, self.version))
        elif self.state.options.get("turn_timer_s"):
            self._spawn("turn", self._turn_timer(seat, self.version))

    def _spawn(self, name: str, coro: Any) -> None:
        old = self._tasks.get(name)
        if old is not None and not old.done():
            if name != "turn":
                coro.close()
                return
            old.cancel()
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks[name] = task

    def _cancel(self, name: str) -> None:
        task = self._tasks.pop(name, None)
        if task is not None and not task.done() and task is not asyncio.current_task():
            task.cancel()

    async def _decide(self, seat: int, level: str, version: int) -> Action | None:
        """A bot's move from the seat's view alone, computed off the event loop."""
        from server.bots import DEFAULT_BUDGET, choose_action

        match = self.match
        if match is None or match.to_act != seat or self.version != version:
            return None
        seat_view = view(match, seat)
        rng = random.Random(f"{self.state.seed}:bot:{seat}:{version}")
        budget = DEFAULT_BUDGET.scaled(float(self.state.options.get("bot_budget", 1.0)))
        return await asyncio.to_thread(choose_action, level, seat_view, rng, budget)

    def _apply_if_current(self, seat: int, version: int, action: Action) -> Mutation:
        def mutate(work: Work) -> Result:
            match = work.match
            if match is None or match.to_act != seat or self.version != version:
                raise CommandError(ErrorCode.WRONG_PHASE, "the table moved on")
            try:
                work.events += match.apply(action)
            except RuleError:
                # A bot bug must not stall the table: log it and play the first legal move.
                log.exception("table %s: bot move %r for seat %s refused", self.id, action, seat)
                work.events += match.apply(match.legal_actions(seat)[0])
            return {}
        return mutate

    async def _bot_turn(self, seat: int, version: int) -> None:
        delay = int(self.state.options.get("bot_delay_ms", 600)) / 1000
        await asyncio.sleep(delay)
        await self._act_for(seat, version, self.bot_level(seat))

    async def _turn_timer(self, seat: int, version: int) -> None:
        """Optional per-table timer: on expiry the table's bot level plays a default move."""
        await asyncio.sleep(float(self.state.options["turn_timer_s"]))
        log.info("table %s: turn timer expired for seat %s", self.id, seat)
        await self._act_for(seat, version, str(self.state.options.get("bot_level", "normal")))

    async def _act_for(self, seat: int, version: int, level: str) -> None:
        for _attempt in range(50):
            try:
                action = await self._decide(seat, level, version)
                if action is None:
                    return
                await self.execute(None, None, self._apply_if_current(seat, version, action))
                return
            except CommandError as exc:
                if exc.code != ErrorCode.STORAGE_UNAVAILABLE:
                    return
            # Storage is down: the move was not made; try again shortly (nothing was lost).
            await asyncio.sleep(0.5)
            version = self.version

    async def _bot_signals(self) -> None:
        """Bot seats send their partner signals (R15) when their bot chooses to."""
        from server.bots import choose_signals

        await asyncio.sleep(0)
        match = self.match
        if match is None or match.over:
            return
        for seat in range(4):
            if not self.controlled_by_bot(seat):
                continue
            rng = random.Random(f"{self.state.seed}:signal:{seat}:{self.version}")
            for signal in choose_signals(self.bot_level(seat), view(match, seat), rng):
                def mutate(work: Work, signal: Any = signal) -> Result:
                    if work.match is None or work.match.over:
                        return {}
                    work.events += work.match.apply(signal)
                    return {}
                try:
                    await self.execute(None, None, mutate)
                except (CommandError, RuleError):
                    return

    def cancel_tasks(self) -> None:
        self.closed = True
        for name in list(self._tasks):
            self._cancel(name)
