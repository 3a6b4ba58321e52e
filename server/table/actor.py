"""One table: commands in, one at a time; commit; then the reply, then the events.

Every change to a table, whoever causes it (a player's command, a bot's move, a timer, a
connection coming or going), goes through :meth:`Table.execute`, under the table's lock:

1. the pure mutation (:func:`~.decide.plan_for`, :mod:`.mutations`) works on a *copy* of
   the document and match;
2. the copy, its events and the command's reply are stored in one round trip with a
   version check (:class:`~.replica.Replica`; a refused or unstored command changes
   nothing);
3. then, and only then, the reply goes to the command's connection, **before** the events
   it caused (docs/PROTOCOL.md, "Events after ok"), and the events go to every viewer,
   each numbered in that viewer's own sequence (:class:`~.fanout.Viewers`).

The table is made of parts with one job each: the replica (commit, catch up), the
follower (the other processes' commits), the remembered replies, presence, the viewers,
and the clock (bots, timers, grace periods).
Its two tasks, the clock and the follower of the other processes' commits, live in one
scope (:meth:`Table.run`) that ends when the table closes.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import protocol
from protocol import CloseCode, CommandError, ErrorCode, ServiceError
from protocol.results import LeaveResult, Result
from server.game import Match
from server.store import Store, VersionConflict

from .. import logs
from ..botrunner import BotRunner
from ..config import Settings
from ..viewer import Viewer, writes_held
from . import chat, watching
from .attending import Attending
from .clock import TableClock
from .decide import Mutation, Watch, plan_for
from .fanout import Viewers, head_payloads, visible
from .follower import Follower
from .mutations import Work
from .presence import Membership, Presence
from .replica import Change, Outcome, Replica
from .replies import Replies
from .state import TableState

log = logging.getLogger(__name__)

@dataclass(frozen=True, slots=True)
class Origin:
    """The connection whose command is being executed, the command, and what it does to
    the connection's subscription."""

    viewer: Viewer
    command: protocol.Command
    watch: Watch = None


class Table(Attending):
    """One table on this process: its parts (:class:`.attending.Attending` has what it is
    now, its presence and its place among the processes), its tasks, and its one way to
    change, :meth:`execute`, one command at a time under its lock."""

    def __init__(self, state: TableState, version: int, *, store: Store, settings: Settings,
                 bots: BotRunner, membership: Membership, match: Match | None = None,
                 clock: Callable[[], float] = time.time, made_here: bool = False) -> None:
        self.store = store
        self.settings = settings
        self.membership = membership
        self.now = clock
        self.replica = Replica(state, version, store=store, settings=settings,
                               process=membership.process, match=match)
        self.replies = Replies(store, state.id, complete=made_here)
        self.presence = Presence(state.id, membership)
        self.viewers = Viewers(state.id, self.presence)
        self.clock = TableClock(self, bots, clock)
        self.chat_limits = chat.ChatLimiter(settings.chat_per_second, settings.chat_burst)
        self.lock = asyncio.Lock()
        #: This process runs the table's clock (it holds the table's lease).
        self.owned = False
        self.closed = False
        #: The spectator count the last ``table_changed`` told (-1: none yet).
        self.announced = -1
        self.spectators_next = 0.0
        self.spectators_later = False
        #: The scope of the table's tasks while it runs (:meth:`run`), and its short-lived
        #: ones (:meth:`later`).
        self._scope: asyncio.TaskGroup | None = None
        self._later: set[asyncio.Task[None]] = set()
        self._closing = asyncio.Event()
        self.follower = Follower(self.replica, self.lock, membership, show=self._show_heard,
                                 now=clock)
        self.clock.note_turn()
        #: Called with the table and the match when a commit of this process ends a match,
        #: or begins one after a finished match (issue 27: history, ratings).
        self.on_finish: Callable[[TableState, Match | None], None] | None = None

    # ------------------------------------------------------------------ what it is now

    @property
    def id(self) -> str:
        return self.replica.id

    @property
    def state(self) -> TableState:
        return self.replica.state

    @property
    def match(self) -> Match | None:
        return self.replica.match

    @property
    def version(self) -> int:
        return self.replica.version

    @property
    def stalled_since(self) -> float | None:
        return self.clock.stalled_since

    # ------------------------------------------------------------------ its tasks

    async def run(self) -> None:
        """The table's clock and follower (and its short-lived tasks: :meth:`later`), in one
        scope that ends when the table closes (a failure of one ends all, and the
        supervisor starts the scope again)."""
        logs.bind(table=self.id)      # its lines name it (--log-format json)
        async with asyncio.TaskGroup() as tasks:
            clock = tasks.create_task(self.clock.run(), name=f"table {self.id} clock")
            follower = tasks.create_task(self.follower.run(), name=f"table {self.id} follower")
            self._scope = tasks
            try:
                await self._closing.wait()
            finally:
                self._scope = None
                clock.cancel()
                follower.cancel()
                for task in list(self._later):
                    task.cancel()

    def later(self, work: Coroutine[Any, Any, None], name: str) -> bool:
        """Run ``work`` in the table's scope, cancelled when the table closes; False (and
        ``work`` dropped) if the table is not running."""
        if self._scope is None:
            work.close()
            return False
        task = self._scope.create_task(work, name=name)
        self._later.add(task)
        task.add_done_callback(self._later.discard)
        return True

    def close(self, *, tell: bool = False) -> None:
        """The table leaves this process (swept, closed elsewhere, or shutting down): its
        tasks end, its viewers stop hearing from it (``tell``: after a ``table_changed``
        saying it is over)."""
        state = self.state
        for viewer in self.viewers:
            if tell:
                if state.status != "finished":
                    state.status = "abandoned"
                viewer.rebase(self.id, state.seq_for(viewer.player),
                              [protocol.TableChanged(table=state.info(0))])
            self.unsubscribe(viewer)
        self.closed = True
        self._closing.set()
        self.clock.poke()

    def drop_viewers(self, code: CloseCode, reason: str) -> None:
        for viewer in self.viewers:
            viewer.drop(code, reason)

    # ------------------------------------------------------------------ commands

    async def command(self, viewer: Viewer, cmd: protocol.Command) -> None:
        """A player's command for this table; the reply and events go out in order."""
        match cmd:
            case protocol.Resume():
                await watching.resume(self, viewer, cmd)
                return
            case protocol.Spectate():
                await watching.spectate(self, viewer, cmd)
                return
            case protocol.Leave() if self.state.seat_of(viewer.player) is None:
                if viewer not in self.viewers:
                    raise CommandError(ErrorCode.NOT_AT_TABLE, "you are not at this table")
                self.unsubscribe(viewer)
                viewer.reply(cmd.id, LeaveResult(table=self.id))
                await self.announce_spectators()
                return
        player = viewer.player
        plan = plan_for(cmd, player, viewer.name,
                        lambda: self.chat_limits.allow(player, self.now()), bot=viewer.bot)
        async with self.lock:
            prior = await self.replies.prior(player, cmd.id)
            if prior is not None:
                with writes_held():
                    viewer.reply_stored(cmd.id, prior)
                    if plan.watch == "subscribe" and self.state.seat_of(player) is not None:
                        self.subscribe(viewer)   # a resent join after a reconnect: watch again
                return
            await self.execute(plan.mutate, Origin(viewer, cmd, plan.watch), light=plan.light)

    async def execute(self, mutate: Mutation, origin: Origin | None = None, *,
                      force: bool = False, light: bool = False) -> Result | None:
        """Apply ``mutate`` to a copy, store it, then reply to ``origin`` and fan out.

        Must be called with the lock held. A version conflict (another process, or a write
        whose acknowledgement was lost, moved the table on) catches up and applies the
        command again to the fresh state, so the player never sees it. ``light``: the
        mutation only applies engine actions (it may be stored as a delta).
        """
        assert self.lock.locked()
        if self.closed:
            raise CommandError(ErrorCode.NO_SUCH_TABLE, "this table has been closed")
        for attempt in range(3):
            state, before = self.state, self.match
            work = Work(state.copy(), self.match.clone() if self.match else None,
                        now=self.now(), watchers=self.presence.watchers(state), light=light)
            result = mutate(work)
            if not work.events and origin is None and result is None and not force:
                return None   # nothing happened (e.g. a presence change that is not news)
            reply = None
            if origin is not None and result is not None:
                player = origin.viewer.player
                reply = (player, self.replies.remember(player, origin.command.id,
                                                       protocol.encode(result)))
            try:
                change = await self.replica.commit(work, reply, self.now(),
                                                   publish=self.membership.others_alive())
            except VersionConflict:
                log.warning("table %s: version conflict (attempt %d); catching up", self.id,
                            attempt + 1)
                self.replies.clear()
                self._show(await self.replica.catch_up())
                continue
            except ServiceError:
                if origin is not None:
                    self.replies.forget(origin.viewer.player)
                raise
            if change.spectators_told is not None:
                self.announced = change.spectators_told
            with writes_held():      # the reply and these events: one write each
                headed = self._answer(origin, result)
                self._show(change, skip=headed)
            if self.on_finish is not None:
                if change.finished:
                    self.on_finish(self.state, self.match)
                elif before is not None and before.over \
                        and self.state.matches_started() != state.matches_started():
                    # A rematch began after a match whose ending commit's process may have
                    # stopped before keeping it (issue 27): keep it now (once; a no-op if
                    # it was kept).
                    self.on_finish(state, before)
            return result
        raise ServiceError(ErrorCode.CONFLICT, "the table kept changing while your command was "
                           "applied; nothing was applied, send it again with the same id")

    def _answer(self, origin: Origin | None, result: Result | None) -> Viewer | None:
        """After a commit: the reply first, then the subscription it changes. Returns the
        viewer that was just sent a head (it has this commit's events already)."""
        if origin is None or result is None:
            return None
        viewer = origin.viewer
        viewer.reply(origin.command.id, result)
        if origin.watch == "subscribe":
            self.subscribe(viewer)
            return viewer
        if origin.watch == "unsubscribe":
            self.unsubscribe(viewer)
        return None

    def _show(self, change: Change, skip: Viewer | None = None) -> None:
        """What a change of the replica means for this process's viewers."""
        match change.outcome:
            case Outcome.CHANGED:
                self._deliver(change, skip)
            case Outcome.RELOADED:
                for viewer in self.viewers:
                    self.head(viewer)
            case Outcome.CLOSED:
                self.close(tell=True)
                return
            case Outcome.UNCHANGED | Outcome.GAP:
                return
        self.clock.poke()

    def _deliver(self, change: Change, skip: Viewer | None) -> None:
        """Each viewer gets the events it may see, numbered on in its own sequence; one
        whose numbering would break gets a head instead. ``skip``: a viewer that was just
        sent a head (a join's), which shows these events already."""
        for viewer in self.viewers:
            if viewer is skip or not viewer.open:
                continue
            first, mine = visible(change.entries, viewer.player, change.before)
            if mine and not viewer.events(self.id, first, mine):
                self.head(viewer)

    async def viewer_gone(self, viewer: Viewer) -> None:
        """A connection closed: stop sending to it; a seat whose last connection it was is
        now disconnected (its grace period starts)."""
        if viewer not in self.viewers:
            return
        self.unsubscribe(viewer)
        seat = self.state.seat_of(viewer.player)
        if seat is not None:
            await self.seat_presence(seat)
        else:
            await self.announce_spectators()
        self.clock.poke()


    # ------------------------------------------------------------------ watching

    def head(self, viewer: Viewer) -> None:
        """The table as this viewer may see it now, re-basing its sequence."""
        viewer.rebase(self.id, self.state.seq_for(viewer.player),
                      head_payloads(self.state, self.match, viewer.player, self.spectators()))

    def subscribe(self, viewer: Viewer) -> None:
        """Start sending this table to ``viewer``, opening with its head."""
        self.viewers.add(viewer)
        self.head(viewer)
        self.clock.poke()

    def unsubscribe(self, viewer: Viewer) -> None:
        self.viewers.remove(viewer)
        viewer.forget(self.id)
