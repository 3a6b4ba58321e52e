"""What a table is now, and who is at it, on this process and the others.

:class:`Attending` is the part of :class:`~.actor.Table` that faces outwards: its lobby
description and spectator count, the presence of each seat's player (a change is news,
committed through :meth:`Table.execute <.actor.Table.execute>`), the lease (``take_over``,
``set_owned``) and the other processes' commits of the table (``hear``, ``catch_up``, the
beacon). :class:`~.actor.Table` adds the one way to change it (``execute``) and the delivery
to its viewers.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Callable, Coroutine
from typing import Any

import protocol
from protocol import AluetteError
from protocol.results import Result
from server.store import StorageUnavailable, Store

from ..config import Settings
from . import mutations
from .clock import TableClock
from .decide import Mutation
from .follower import Follower
from .presence import Membership, Presence
from .replica import Change, Outcome, Replica
from .replies import Replies

log = logging.getLogger(__name__)

#: Pauses between tries of a presence change that conflicted with the table's other
#: commits (a busy table on another process): about 7 s in all.
PRESENCE_RETRIES_S = (0.05, 0.1, 0.2, 0.4, 0.8, 1.0, 1.0, 1.0, 1.0, 1.0)
#: A table tells how many watch it at most this often (seconds): the first change at once,
#: the changes of the pause that follows together at its end, and none if they cancel out.
#: One client looping spectate/leave cost a commit and a frame to every viewer per command
#: (issue 30); now a table commits its spectator news at most once a second, whoever loops.
SPECTATORS_EVERY_S = 1.0


class Attending:
    """The table's parts that :class:`~.actor.Table` makes (it reads the table as it is
    from the replica), its presence and its place among the processes."""

    store: Store
    settings: Settings
    membership: Membership
    now: Callable[[], float]
    replica: Replica
    replies: Replies
    presence: Presence
    clock: TableClock
    follower: Follower
    lock: asyncio.Lock
    owned: bool
    closed: bool
    announced: int
    #: When the spectator count may next be told (the table's clock), and whether a later
    #: look is already due then.
    spectators_next: float
    spectators_later: bool

    async def execute(self, mutate: Mutation, origin: None = None, *, force: bool = False,
                      light: bool = False) -> Result | None:
        """The table's one way to change (:meth:`.actor.Table.execute`; presence news has
        no command behind it, hence no origin)."""
        raise NotImplementedError

    def _show(self, change: Change) -> None:
        """What a change of the replica means for the viewers (:class:`.actor.Table`)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ what it is now

    def spectators(self) -> int:
        """Connections watching without a seat, on every process (the spectator limit)."""
        return self.presence.spectators(self.replica.state)

    def watched(self) -> bool:
        """Someone is here, on any process: bots pause without."""
        return self.presence.anyone()

    humans_watching = watched

    def info(self) -> protocol.TableInfo:
        """The lobby's description; ``spectators`` counts people watching without a seat."""
        return self.replica.state.info(len(self.presence.watchers(self.replica.state)))

    # ------------------------------------------------------------------ presence

    def later(self, work: Coroutine[Any, Any, None], name: str) -> bool:
        """Run ``work`` in the table's task scope (:meth:`.actor.Table.later`)."""
        raise NotImplementedError

    async def announce_spectators(self) -> None:
        """How many watch is part of the table's news (``TableInfo.spectators``, people
        watching without a seat): a spectator's arrival or departure is announced to
        everyone at the table and to the lobby (issue 31, item 8), at most once per
        :data:`SPECTATORS_EVERY_S`: a change within the pause is looked at once, at its
        end, in the table's scope (no task of its own while nobody comes and goes)."""
        wait = self.spectators_next - self.now()
        if wait <= 0:
            await self._tell_spectators()
        elif not self.spectators_later:
            self.spectators_later = self.later(self._tell_spectators_after(wait),
                                               f"table {self.replica.id} spectators")

    async def _tell_spectators_after(self, wait: float) -> None:
        try:
            await asyncio.sleep(wait)
        finally:
            self.spectators_later = False
        await self._tell_spectators()

    async def _tell_spectators(self) -> None:
        """A commit telling the spectator count, if it differs from the one last told."""
        async with self.lock:
            if self.closed or len(self.presence.watchers(self.replica.state)) == self.announced:
                return
            self.spectators_next = self.now() + SPECTATORS_EVERY_S
            try:
                await self.execute(lambda w: w.table_changed())
            except AluetteError as exc:
                log.warning("table %s: spectator count not announced: %s", self.replica.id, exc)

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
        failure: AluetteError | None = None
        for pause in PRESENCE_RETRIES_S:
            async with self.lock:
                s = self.replica.state.seats[seat]
                if s.kind != "human" or s.player is None:
                    return
                if self.membership.others_alive():
                    with contextlib.suppress(StorageUnavailable):
                        await self.refresh_presence()     # a connection on another process
                connected = self.presence.connected(s.player)
                if s.connected == connected:
                    return
                try:
                    await self.execute(functools.partial(mutations.connection_change,
                                                         seat=seat, connected=connected))
                    return
                except AluetteError as exc:
                    failure = exc
            # Nobody resends a presence change: given up, the seat of a player who left
            # stayed "connected" and no bot took it (bench/soak.py, issue 30).
            await asyncio.sleep(pause)
        log.warning("table %s: seat %s presence not recorded: %s", self.replica.id, seat,
                    failure)

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
        await self.store.publish_table(self.replica.id, self.replica.beacon(self.now()))

    async def take_over(self) -> None:
        """This process has just taken the table's lease: whoever the seats' connections
        were on, a seat with no live connection anywhere is disconnected now (a restart, or
        the previous owner's process died with them); its grace period runs from now."""
        await self.catch_up()
        await self.refresh_presence()
        for seat, s in enumerate(self.replica.state.seats):
            if s.kind == "human" and s.player and s.connected != self.presence.connected(
                    s.player):
                await self.seat_presence(seat)

    def set_owned(self, owned: bool) -> None:
        if owned != self.owned:
            self.owned = owned
            self.clock.restart_turn()
