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
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import protocol
from protocol import AluetteError, CloseCode, CommandError, ErrorCode, ServiceError
from protocol.results import LeaveResult, Result
from server.game import Match
from server.store import StorageUnavailable, Store, VersionConflict

from ..botrunner import BotRunner
from ..config import Settings
from ..viewer import Viewer
from . import chat, mutations, watching
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


class Table:
    def __init__(self, state: TableState, version: int, *, store: Store, settings: Settings,
                 bots: BotRunner, membership: Membership, match: Match | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.settings = settings
        self.membership = membership
        self.now = clock
        self.replica = Replica(state, version, store=store, settings=settings,
                               process=membership.process, match=match)
        self.replies = Replies(store, state.id)
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
        self._closing = asyncio.Event()
        self.follower = Follower(self.replica, self.lock, membership, show=self._show_heard,
                                 now=clock)
        self.clock.note_turn()
        #: Called once a commit of this process ends a match (issue 27: history, ratings).
        self.on_finish: Callable[[Table], None] | None = None

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

    def spectators(self) -> int:
        """Connections watching without a seat, on every process (the spectator limit)."""
        return self.presence.spectators(self.state)

    def watched(self) -> bool:
        """Someone is here, on any process: bots pause without."""
        return self.presence.anyone()

    humans_watching = watched

    def info(self) -> protocol.TableInfo:
        """The lobby's description; ``spectators`` counts people watching without a seat."""
        return self.state.info(len(self.presence.watchers(self.state)))

    async def announce_spectators(self) -> None:
        """How many watch is part of the table's news (``TableInfo.spectators``, people
        watching without a seat): a spectator's arrival or departure is announced to
        everyone at the table and to the lobby (issue 31, item 8)."""
        async with self.lock:
            if self.closed or len(self.presence.watchers(self.state)) == self.announced:
                return
            try:
                await self.execute(lambda w: w.table_changed())
            except AluetteError as exc:
                log.warning("table %s: spectator count not announced: %s", self.id, exc)

    # ------------------------------------------------------------------ its tasks

    async def run(self) -> None:
        """The table's clock and follower, in one scope that ends when the table closes
        (a failure of either ends both, and the supervisor starts the scope again)."""
        async with asyncio.TaskGroup() as tasks:
            clock = tasks.create_task(self.clock.run(), name=f"table {self.id} clock")
            follower = tasks.create_task(self.follower.run(), name=f"table {self.id} follower")
            await self._closing.wait()
            clock.cancel()
            follower.cancel()

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
            state = self.state
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
            headed = self._answer(origin, result)
            self._show(change, skip=headed)
            if change.finished and self.on_finish is not None:
                self.on_finish(self)
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

    # ------------------------------------------------------------------ other processes

    def hear(self, message: bytes | None) -> None:
        """A commit another process published (None: catch up from the store)."""
        self.follower.hear(message)

    async def catch_up(self) -> None:
        await self.follower.catch_up()

    def _show_heard(self, change: Change) -> None:
        """Another process changed the table: the answer its message carries is kept here
        too; a change read from the store (a catch-up) does not say, so the answers are
        read from the store again."""
        if change.reply is not None:
            self.replies.learn(*change.reply)
        elif change.outcome is not Outcome.UNCHANGED and not change.replies_known:
            self.replies.clear()
        self._show(change)

    async def send_beacon(self) -> None:
        """Tell the other processes which version this table is at (a process that joined
        while this one was alone has not heard its commits: it catches up)."""
        await self.store.publish_table(self.id, self.replica.beacon(self.now()))

    async def take_over(self) -> None:
        """This process has just taken the table's lease: whoever the seats' connections
        were on, a seat with no live connection anywhere is disconnected now (a restart, or
        the previous owner's process died with them); its grace period runs from now."""
        await self.catch_up()
        await self.refresh_presence()
        for seat, s in enumerate(self.state.seats):
            if s.kind == "human" and s.player and s.connected != self.presence.connected(
                    s.player):
                await self.seat_presence(seat)

    def set_owned(self, owned: bool) -> None:
        if owned != self.owned:
            self.owned = owned
            self.clock.restart_turn()

    # ------------------------------------------------------------------ presence

    async def refresh_presence(self) -> None:
        """The other processes' presence counts, read from the store."""
        if await self.presence.refresh(self.store):
            self.clock.poke()

    def adopt_presence(self, stored: dict[str, int]) -> None:
        """The presence counts as the store has them (read for many tables at once)."""
        if self.presence.adopt(stored):
            self.clock.poke()

    async def seat_presence(self, seat: int) -> None:
        """Record whether the human in ``seat`` has a live connection here (news only).

        Decided under the table's lock, against the state as it is then: a connection
        that drops while another of the same player resumes must not leave the seat marked
        disconnected (whichever runs second sees the other's result).
        """
        async with self.lock:
            s = self.state.seats[seat]
            if s.kind != "human" or s.player is None:
                return
            if self.membership.others_alive():
                with contextlib.suppress(StorageUnavailable):
                    await self.refresh_presence()     # a connection on another process
            connected = self.presence.connected(s.player)
            if s.connected == connected:
                return
            try:
                await self.execute(lambda w: mutations.connection_change(w, seat, connected))
            except AluetteError as exc:
                log.warning("table %s: seat %s presence not recorded: %s", self.id, seat, exc)

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
