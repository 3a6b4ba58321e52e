"""A table's clock: everything that acts at a table without a player's command.

Bots' moves and signals, turn timers, the end of a grace period, a rematch that starts once
the last absent player's grace runs out: :func:`~.decide.next_due` says which comes next
and when, and :meth:`TableClock.run` sleeps until then (or until the table changes), acts
through the table's one way to change (:meth:`Clocked.execute`, under its lock), and looks
again. Only the process that owns the table (holds its lease) runs its clock's actions.

A bot thinks off the event loop (:mod:`server.botrunner`) and outside the table's lock; its
move is applied only if the turn it thought about is still the table's turn, the seat is
still a bot's, this process still owns the table and someone still watches.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Protocol

import protocol
from protocol import RuleError, ServiceError
from protocol.results import Result
from server.game import Action, Match, Signal, view
from server.store import StorageUnavailable

from ..botrunner import BotRunner
from . import mutations
from .decide import Due, Mutation, TurnKey, next_due
from .mutations import Work
from .state import TableState

log = logging.getLogger(__name__)

#: How often a table's clock retries an automatic move while storage is down (seconds).
RETRY_BACKOFF = (0.5, 1.0, 2.0, 5.0)


def turn_key(match: Match | None) -> TurnKey | None:
    """The turn as a value: signals and presence changes do not change it (a bot that
    paused after each signal would tell opponents it signalled)."""
    if match is None or match.over:
        return None
    return (match.deal_number, len(match.tricks), len(match.trick), str(match.phase),
            match.to_act)


class Clocked(Protocol):
    """What the clock needs of its table."""

    @property
    def id(self) -> str: ...

    @property
    def state(self) -> TableState: ...

    @property
    def match(self) -> Match | None: ...

    @property
    def owned(self) -> bool: ...

    @property
    def closed(self) -> bool: ...

    @property
    def lock(self) -> asyncio.Lock: ...

    def watched(self) -> bool: ...

    async def execute(self, mutate: Mutation, *, light: bool = False) -> Result | None: ...


class TableClock:
    def __init__(self, table: Clocked, bots: BotRunner, now: Callable[[], float]) -> None:
        self.table = table
        self.bots = bots
        self.now = now
        self.turn: TurnKey | None = None
        self.turn_started = now()
        #: Since when an automatic move keeps failing (``/healthz``'s stalled tables).
        self.stalled_since: float | None = None
        self._wake = asyncio.Event()

    def poke(self) -> None:
        """The table changed: look at what is due again."""
        self.note_turn()
        self._wake.set()

    def note_turn(self) -> None:
        """Remember when the current turn began (signals and presence changes do not
        restart it)."""
        key = turn_key(self.table.match)
        if key != self.turn:
            self.turn = key
            self.turn_started = self.now()

    def restart_turn(self) -> None:
        """A new owner counts a bot's pause afresh."""
        self.turn_started = self.now()
        self._wake.set()

    def due(self) -> Due | None:
        """What this table does by itself next; nothing unless this process owns it."""
        table = self.table
        if not table.owned:
            return None
        return next_due(table.state, table.match, turn=self.turn,
                        turn_started=self.turn_started, now=self.now(),
                        watched=table.watched(),
                        bot_signals_pending=lambda: bool(self._bot_signals()))

    async def run(self) -> None:
        """Act when something is due; sleep until then or a change; until the table
        closes."""
        backoff = 0
        while not self.table.closed:
            due = self.due()
            wait = None if due is None else due.at - self.now()
            if wait is None or wait > 0:
                # asyncio.timeout, not wait_for: this wakes at every commit of the table,
                # and wait_for made a task each time (half the wake's cost; issue 32).
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(wait):
                        await self._wake.wait()
                continue
            assert due is not None
            try:
                await self._act(due)
                backoff = 0
                self.stalled_since = None
            except Exception as exc:
                # Nothing was applied (storage down, or a bug): try again, forever, with a
                # ceiling on the pace; /healthz reports the table as stalled meanwhile.
                if self.stalled_since is None:
                    self.stalled_since = self.now()
                if isinstance(exc, ServiceError | StorageUnavailable):
                    log.warning("table %s: %s not applied (%s); retrying", self.table.id,
                                due.kind, exc)
                else:
                    log.exception("table %s: %s failed; retrying", self.table.id, due.kind)
                await asyncio.sleep(RETRY_BACKOFF[min(backoff, len(RETRY_BACKOFF) - 1)])
                backoff += 1

    async def _act(self, due: Due) -> None:
        table = self.table
        match due.kind:
            case "rematch":
                async with table.lock:
                    await table.execute(mutations.start_rematch_if_agreed)
            case "grace":
                seat, player = due.seat, due.key[0]
                assert seat is not None
                async with table.lock:
                    await table.execute(lambda w: mutations.takeover(w, seat, player))
                log.info("table %s: a bot now plays seat %s", table.id, seat)
            case "signals":
                signals = self._bot_signals()
                async with table.lock:
                    await table.execute(lambda w: self._send_signals(w, signals), light=True)
            case "bot" | "timer":
                await self._move(due)

    async def _move(self, due: Due) -> None:
        """A bot's move, or the timer's move for a human who let their time run out."""
        table, seat = self.table, due.seat
        assert seat is not None and table.match is not None
        state = table.state
        level = state.bot_level(seat) if due.kind == "bot" else state.options.bot_level
        if due.kind == "timer":
            log.info("table %s: turn timer expired for seat %s", table.id, seat)
        action = await self.bots.decide(level, view(table.match, seat),
                                        self.bot_seed(seat, "move"),
                                        state.options.bot_budget)
        async with table.lock:
            if self.turn != due.key or table.match is None:
                return   # the table moved on while the bot thought
            if due.kind == "bot" and not table.state.controlled_by_bot(seat):
                return   # its human came back meanwhile: the turn is theirs
            if not table.owned or not table.watched():
                return   # paused (nobody watches) or another process runs the table now
            timer = due.kind == "timer"
            await table.execute(lambda w: self._bot_move(w, seat, action, timer), light=True)

    def bot_seed(self, seat: int, what: str) -> str:
        """A bot's randomness for this turn: the table's secret seed, the match (a rematch
        replays the same turns, and must not replay the same draws), the seat and the
        turn. Fixed for a turn, so a bot asked again after a restart decides the same."""
        state = self.table.state
        return f"{state.seed}:{state.matches_started()}:{what}:{seat}:{self.turn or ()}"

    def _bot_signals(self) -> list[Signal]:
        """The signals the bot seats want to send now (R15; a rule of thumb, computed
        inline)."""
        state, m = self.table.state, self.table.match
        assert m is not None
        wanted: list[Signal] = []
        for seat in range(4):
            if state.controlled_by_bot(seat):
                wanted += self.bots.signals(state.bot_level(seat), view(m, seat),
                                            self.bot_seed(seat, "signal"))
        return wanted

    def _send_signals(self, work: Work, signals: list[Signal]) -> None:
        for sig in signals:
            if work.match is None or work.match.over:
                return
            try:
                work.apply(sig)
            except RuleError:
                log.exception("table %s: bot signal %r refused", self.table.id, sig)

    def _bot_move(self, work: Work, seat: int, action: Action | None,
                  timer: bool = False) -> None:
        """The bot's move; one the engine refuses (a bot bug) is logged and replaced by the
        first legal move, so a bot never stalls its table. A turn timer's move is announced
        first (``turn_timed_out``, 1.5), so everyone knows who did not choose that card."""
        match = work.match
        assert match is not None
        if match.to_act != seat:
            return
        if timer:
            work.emit(protocol.TurnTimedOut(seat=seat))
        if action is not None:
            try:
                mutations.bot_action(work, seat, action)
                return
            except RuleError:
                log.exception("table %s: bot move %r for seat %s refused", self.table.id,
                              action, seat)
        legal = match.legal_actions(seat)
        if legal:
            mutations.bot_action(work, seat, legal[0])
