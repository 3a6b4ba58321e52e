"""This process among others on one store: leases, presence, and events from the others.

Several ``aluette-server`` processes may share one Redis (issue 11, docs/ARCHITECTURE.md
"Many processes"). Any process takes any connection and applies any command, through the
same version-checked commit; what this module adds:

- **Identity and liveness.** Each process has an id and beats every ``lease_renew_s`` in a
  sorted set; a process that stops beating is dead to the others (its presence counts
  are ignored, its leases expire).
- **Leases.** One process at a time *owns* a table: it runs the table's clock (bots,
  turn timers, grace periods, rematch) and its sweep. The lease is a key naming its
  holder, worth what the holder's heartbeat is: one heartbeat a second renews all of a
  process's leases at once (renewing each lease would cost a call per table per second);
  when the heartbeat stops (a crash, a stopped process) another process takes the lease,
  by compare-and-set, within ``lease_ttl_s``. The table's version is the fencing token: a
  stale owner's late move is refused by the commit's version check, reloaded, and redone
  or dropped.
- **Presence.** Whether a seated player is connected, how many watch, whether anyone
  watches at all (bots pause without), counted over every process: a hash per table of
  ``<process>|<player>`` -> connections, written off the command path.
- **Events.** Every commit publishes its events and the new document on the table's
  sharded channel in the same Lua script (one round trip per command); the processes that
  hold the table read them (``SSUBSCRIBE``) and deliver to their own viewers. A process
  that misses a message notices it by the version and reads the table's event log.

The cluster knows the tables this process holds only through :class:`Directory` (the
lobby is one), and a table knows the cluster only as its ``Membership``
(:mod:`server.table.presence`): neither imports the other.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import math
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Protocol, TypedDict

from server.store import StorageUnavailable, Store
from server.store.bus import sender_of
from server.store.channels import Channels

from .config import Settings
from .supervisor import Supervisor

log = logging.getLogger(__name__)

#: Presence changes written in one round trip at most.
PRESENCE_BATCH = 500


class HeldTable(Protocol):
    """A table as the cluster sees it: whether this process runs it, and a way in for the
    other processes' commits."""

    @property
    def id(self) -> str: ...

    @property
    def closed(self) -> bool: ...

    @property
    def owned(self) -> bool: ...

    def set_owned(self, owned: bool) -> None: ...

    async def take_over(self) -> None: ...

    async def refresh_presence(self) -> None: ...

    def adopt_presence(self, stored: dict[str, int]) -> None: ...

    def hear(self, message: bytes | None) -> None: ...

    async def send_beacon(self) -> None: ...


class Directory(Protocol):
    """The tables this process holds (the lobby): what the keeper and the bus go through."""

    def held(self) -> Sequence[HeldTable]:
        """A snapshot of the tables held now (a copy: awaiting while walking it is safe
        however many tables are made meanwhile)."""

    def get(self, table_id: str) -> HeldTable | None: ...

    async def load(self, table_id: str) -> HeldTable | None: ...


class ClusterStatus(TypedDict):
    """This process among the others, in ``/healthz``."""

    process: str
    processes: int
    lease_renewals: int
    leases_lost: int
    events_heard: int
    event_gaps: int
    event_lag_ms: float


def _table_of(channel: bytes) -> str:
    """The table whose channel this is (``keys.events``: ``<prefix>:{t:<id>}:ev``)."""
    return channel.decode().split("{t:", 1)[1].split("}", 1)[0]


class Cluster:
    def __init__(self, store: Store, settings: Settings, supervisor: Supervisor,
                 clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.settings = settings
        self.supervisor = supervisor
        self.clock = clock
        self.process = uuid.uuid4().hex[:12]
        #: Processes seen beating recently (this one always counts).
        self.live: set[str] = {self.process}
        self._presence: asyncio.Queue[tuple[str, str, int]] = asyncio.Queue()
        self._watch: set[str] = set()
        self._subscribed: set[str] = set()
        #: Tables watched or let go since the bus last looked: it looks at these only (a
        #: process holds its tables for an hour after their last play, issue 32).
        self._news: set[str] = set()
        self._changed = asyncio.Event()
        self.renewals = 0
        self.leases_lost = 0
        self.messages = 0
        self.last_lag_ms = 0.0
        self.gaps = 0
        self.closed = False
        self._ticks = 0
        self._last_beat: float | None = None

    # ------------------------------------------------------------------ lifecycle

    async def stop(self) -> None:
        """Leave the cluster at once (a graceful stop): the others stop counting this
        process's connections without waiting for its heartbeat to age."""
        self.closed = True
        self._changed.set()
        with contextlib.suppress(StorageUnavailable):
            await self.store.leave(self.process)

    def start(self, tables: Directory) -> None:
        self.supervisor.spawn("cluster keeper", self._keep(tables))
        self.supervisor.spawn("presence writer", self._write_presence())
        self.supervisor.spawn("event bus", self._bus(tables))

    # ------------------------------------------------------------------ presence

    def field(self, player: str) -> str:
        return f"{self.process}|{player}"

    def count(self, table_id: str, player: str, delta: int) -> None:
        """One of this process's connections of ``player`` came to or left a table; the
        shared count is written by a supervised writer, never on a command's path."""
        self._presence.put_nowait((table_id, self.field(player), delta))

    async def _write_presence(self) -> None:
        """Every count waiting is written in one round trip (a busy process's comings and
        goings cost one call per batch, not one each); a count that goes back to where it
        was is not written at all."""
        while not self.closed:
            changes: dict[tuple[str, str], int] = {}
            item = await self._presence.get()
            while True:
                table_id, field, delta = item
                changes[(table_id, field)] = changes.get((table_id, field), 0) + delta
                if self._presence.empty() or len(changes) >= PRESENCE_BATCH:
                    break
                item = self._presence.get_nowait()
            batch = [(t, f, d) for (t, f), d in changes.items() if d]
            for attempt in range(1000):
                if self.closed or not batch:
                    break
                try:
                    await self.store.presence_many(batch, self.settings.table_key_ttl_s)
                    break
                except StorageUnavailable:
                    await asyncio.sleep(min(5.0, 0.1 * 2 ** attempt))

    def alive(self, field: str) -> bool:
        return field.partition("|")[0] in self.live

    def others_alive(self) -> bool:
        return len(self.live) > 1

    def heard(self, lag_ms: float, *, gap: bool) -> None:
        """A table heard another process's commit, ``lag_ms`` after it was sent; ``gap``:
        one was missed before it (the table catches up from its log)."""
        self.last_lag_ms = lag_ms
        if gap:
            self.gaps += 1

    # ------------------------------------------------------------------ events

    def watch(self, table_id: str) -> None:
        """Hear the other processes' commits of this table."""
        self._watch.add(table_id)
        self._news.add(table_id)
        self._changed.set()

    def unwatch(self, table_id: str) -> None:
        self._watch.discard(table_id)
        self._news.add(table_id)
        self._changed.set()

    def _subscriptions_due(self) -> tuple[list[str], list[str]]:
        """The tables to subscribe to and to unsubscribe from now: those watched or let
        go since the last look, not the whole held set compared with the subscribed one
        (two set differences over every table held, at each table made or let go, were
        2.6% of a process at full pace: py-spy, 64 tables, 2,000 held after 30 s)."""
        news, self._news = self._news, set()
        new = [t for t in news if t in self._watch and t not in self._subscribed]
        gone = [t for t in news if t not in self._watch and t in self._subscribed]
        self._subscribed.difference_update(gone)
        self._subscribed.update(new)
        return new, gone

    async def _bus(self, tables: Directory) -> None:
        """Sharded pub/sub: one subscription per held table, each caught up from its log
        once it is in effect; on any trouble, connect again (nothing is lost, only late).
        Messages are parsed and handed to their tables as they arrive (server/store/
        channels.py), not read one ``get_message`` at a time (issue 32)."""
        keys = self.store.keys
        while not self.closed:
            self._subscribed = set()
            self._news = set(self._watch)      # a new connection: every table again
            try:
                async with Channels(self.store.redis, functools.partial(self._heard, tables),
                                    functools.partial(self._now_hearing, tables),
                                    sharded=self.store.sharded) as channels:
                    lost = asyncio.ensure_future(channels.lost())
                    try:
                        while not self.closed:
                            # Only when a table was watched or let go: at 1,000 tables
                            # set differences on every message were a real cost.
                            self._changed.clear()
                            new, gone = self._subscriptions_due()
                            channels.subscribe(keys.events(t) for t in new)
                            channels.unsubscribe(keys.events(t) for t in gone)
                            changed = asyncio.ensure_future(self._changed.wait())
                            await asyncio.wait((changed, lost),
                                               return_when=asyncio.FIRST_COMPLETED)
                            changed.cancel()
                            if lost.done():
                                lost.result()          # raises: connect again
                    finally:
                        lost.cancel()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("event bus: %s; subscribing again", exc)
                await asyncio.sleep(0.5)

    def _heard(self, tables: Directory, channel: bytes, message: bytes) -> None:
        """A message on a table's channel: another process's commit, for that table
        (no reference to the table is kept: a swept table must be freed)."""
        self.messages += 1
        if sender_of(message) == self.process:
            return            # our own commit, already delivered here
        table = tables.get(_table_of(channel))
        if table is not None:
            table.hear(message)

    @staticmethod
    def _now_hearing(tables: Directory, channel: bytes) -> None:
        """A subscription is in effect: what the others published before it was never
        heard here (a table made here that players on another process joined at once),
        so the table reads it from its log."""
        table = tables.get(_table_of(channel))
        if table is not None:
            table.hear(None)

    # ------------------------------------------------------------------ leases

    async def _keep(self, tables: Directory) -> None:
        """Beat, renew what this process owns, take over tables nobody owns, and refresh
        the presence counts of owned tables: every ``lease_renew_s``."""
        while not self.closed:
            try:
                await self.keep_once(tables)
            except asyncio.CancelledError:
                raise
            except StorageUnavailable as exc:
                log.warning("cluster keeper: %s", exc)
            except Exception:
                log.exception("cluster keeper failed; trying again")
            await asyncio.sleep(self.settings.lease_renew_s)

    async def keep_once(self, tables: Directory, *, full: bool = False) -> None:
        """One beat: this process's heartbeat renews every lease it holds at once (a lease
        is worth what its holder's heartbeat is), then one read of every table's holder:
        tables this process lost are let go, tables whose holder stopped beating (or that
        have none) are taken, up to this process's fair share. ``full``: read every holder
        now, whatever the beat."""
        s, store, now = self.settings, self.store, self.clock()
        stalled = self._last_beat is not None and now - self._last_beat > s.lease_ttl_s / 2
        await store.heartbeat(self.process, now)
        if s.advertise_url:
            await store.advertise(self.process, s.advertise_url, math.ceil(s.lease_ttl_s))
        self._last_beat = now
        self.renewals += 1
        live = {*await store.live_processes(now - s.lease_ttl_s), self.process}
        joined = live - self.live
        changed, self.live = live != self.live, live
        if joined:
            # Alone, this process did not publish its commits; a process that has just
            # joined may have loaded a table before one of them. Tell it where each
            # table is: a table it holds that is behind catches up.
            await self._beacons(tables)
        self._ticks += 1
        # Who holds what only changes when a process comes or goes (or this one stalled,
        # and may have been given up by the others): read every table's holder then, and
        # every ~10 s for tables made elsewhere, not every beat.
        if not (full or changed or stalled or self._ticks % 10 == 1):
            if len(self.live) > 1:
                await self._refresh_owned(tables)
            return
        ids = await store.table_ids()
        holders = await store.lease_holders(
            ids, refresh_ttl_s=s.table_key_ttl_s if self._ticks % 600 == 1 else 0)
        # The holders were read a moment ago: a table created since then took its lease
        # after the read. Where the store and a table's belief differ, read those leases
        # again (one round trip) and judge on that.
        differ = [i for i, (tid, holder) in enumerate(zip(ids, holders, strict=True))
                  if (t := tables.get(tid)) is not None and not t.closed
                  and t.owned != (holder == self.process)]
        if differ:
            fresh = await store.lease_holders([ids[i] for i in differ])
            for i, holder in zip(differ, fresh, strict=True):
                holders[i] = holder
        mine = 0
        for tid, holder in zip(ids, holders, strict=True):
            table = tables.get(tid)
            if table is not None and not table.closed and table.owned and holder != self.process:
                self.leases_lost += 1
                log.warning("table %s: lease lost to %s; that process runs it now", tid,
                            holder or "nobody")
                table.set_owned(False)
            elif holder == self.process:
                mine += 1
                if table is not None and not table.closed and not table.owned:
                    # Ours in the store but not run here (a take that raced this beat):
                    # run it, or its bots and clocks would wait for nobody.
                    self.watch(tid)       # a table resting here is heard again
                    table.set_owned(True)
                    await table.take_over()
                    log.info("table %s: its lease is this process's; it runs it", tid)
        share = math.ceil(len(ids) / max(1, len(self.live))) + 1
        for tid, holder in zip(ids, holders, strict=True):
            if mine >= share:
                break
            if holder is not None and holder in self.live:
                continue
            table = tables.get(tid)
            if table is not None and table.closed:
                continue
            if not await store.take_lease(tid, self.process, holder, s.table_key_ttl_s):
                continue
            table = table or await tables.load(tid)
            if table is None:
                await store.release_lease(tid, self.process)
                continue
            mine += 1
            self.watch(tid)           # a table resting here is heard again
            table.set_owned(True)
            await table.take_over()
            log.info("table %s: this process (%s) runs it now (after %s)", tid, self.process,
                     holder or "nobody")
        if len(self.live) > 1:       # alone, this process's own counts are complete
            await self._refresh_owned(tables)

    @staticmethod
    async def _beacons(tables: Directory) -> None:
        for table in tables.held():
            if not table.closed:
                with contextlib.suppress(StorageUnavailable):
                    await table.send_beacon()

    async def _refresh_owned(self, tables: Directory) -> None:
        """The presence counts of the tables this process runs (other processes'
        connections count too), read in one round trip. Walks a snapshot: tables made
        meanwhile wait a beat."""
        owned = [t for t in tables.held() if t.owned and not t.closed]
        if not owned:
            return
        stored = await self.store.presents([t.id for t in owned])
        for table in owned:
            table.adopt_presence(stored.get(table.id, {}))

    async def acquire(self, table_id: str) -> bool:
        """A table this process just created is its own to run."""
        return await self.store.take_lease(table_id, self.process, None,
                                           self.settings.table_key_ttl_s)

    def status(self) -> ClusterStatus:
        return {"process": self.process, "processes": len(self.live),
                "lease_renewals": self.renewals, "leases_lost": self.leases_lost,
                "events_heard": self.messages, "event_gaps": self.gaps,
                "event_lag_ms": round(self.last_lag_ms, 1)}
