"""The other processes' commits of one table, applied here in order.

Every commit publishes a :class:`~server.store.bus.TableCommit` on the table's channel;
the cluster's event bus hands the ones for this table to :meth:`Follower.hear`, and
:meth:`Follower.run` (one of the table's two tasks) applies them to the replica, under the
table's lock, one at a time. A message that skips a version means one was missed: the
replica catches up from the store instead. The waiting messages are bounded: past
:data:`INBOX_MAX` they are dropped for one catch-up (the log bridges them; nothing is lost).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from server.store import StorageUnavailable

from .presence import Membership
from .replica import Change, Outcome, Replica

log = logging.getLogger(__name__)

INBOX_MAX = 256


class Follower:
    def __init__(self, replica: Replica, lock: asyncio.Lock, membership: Membership, *,
                 show: Callable[[Change], None], now: Callable[[], float]) -> None:
        self.replica = replica
        self.lock = lock
        self.membership = membership
        self.show = show
        self.now = now
        self._inbox: asyncio.Queue[bytes | None] = asyncio.Queue()

    def hear(self, message: bytes | None) -> None:
        """A commit another process published (None: catch up from the store)."""
        if self._inbox.qsize() >= INBOX_MAX:
            while not self._inbox.empty():
                self._inbox.get_nowait()
            message = None
        self._inbox.put_nowait(message)

    async def run(self) -> None:
        """Apply what is heard, in order, for as long as the table's scope lasts."""
        while True:
            message = await self._inbox.get()
            try:
                async with self.lock:
                    self.show(await self._apply(message))
            except StorageUnavailable as exc:
                log.warning("table %s: could not catch up (%s); will again", self.replica.id,
                            exc)
                self.hear(None)
                await asyncio.sleep(1)

    async def catch_up(self) -> None:
        """Read what this process missed, now (under the table's lock)."""
        async with self.lock:
            self.show(await self.replica.catch_up())

    async def _apply(self, message: bytes | None) -> Change:
        if message is None:
            return await self.replica.catch_up()
        change = self.replica.hear(message, self.now())
        self.membership.heard(self.replica.heard_lag_ms, gap=change.outcome is Outcome.GAP)
        if change.outcome is Outcome.GAP:
            return await self.replica.catch_up()
        return change
