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
import logging
import math
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypedDict

from server.store import StorageUnavailable, Store
from server.store.bus import sender_of

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
        self._changed.set()

    def unwatch(self, table_id: str) -> None:
        self._watch.discard(table_id)
        self._changed.set()

    async def _bus(self, tables: Directory) -> None:
        """Sharded pub/sub: one subscription per held table; on any trouble, subscribe
        again and let every table catch up from its log (nothing is lost, only late)."""
        while not self.closed:
            pubsub = self.store.redis.pubsub()
            self._subscribed = set()
            try:
                for tid in list(self._watch):
                    await self._sub(pubsub, tid)
                    self._catch_up(tables, tid)      # whatever was missed
                self._changed.set()
                while not self.closed:
                    if self._changed.is_set():
                        # Only when a table was watched or let go: at 1,000 tables these
                        # set differences on every message were a real cost.
                        self._changed.clear()
                        for tid in self._watch - self._subscribed:
                            await self._sub(pubsub, tid)
                            # What the others published before this subscription took
                            # effect was never heard here (a table made here that players
                            # on another process joined at once): read it from the log.
                            self._catch_up(tables, tid)
                        for tid in self._subscribed - self._watch:
                            await pubsub.sunsubscribe(self.store.keys.events(tid))
                            self._subscribed.discard(tid)
                    if not self._subscribed:
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(self._changed.wait(), 1.0)
                        continue
                    msg = await pubsub.get_message(ignore_subscribe_messages=True,
                                                   timeout=0.2)
                    if msg is None or msg.get("type") not in ("message", "smessage"):
                        continue
                    self.messages += 1
                    if sender_of(msg["data"]) == self.process:
                        continue        # our own commit, already delivered here
                    channel = msg["channel"].decode()
                    tid = channel.split("{t:", 1)[1].split("}", 1)[0]
                    self._deliver(tables, tid, msg["data"])
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("event bus: %s; subscribing again", exc)
                await asyncio.sleep(0.5)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()  # type: ignore[no-untyped-call]

    @staticmethod
    def _deliver(tables: Directory, table_id: str, message: bytes) -> None:
        """Hand a table another process's commit (no reference kept by the bus's loop)."""
        table = tables.get(table_id)
        if table is not None:
            table.hear(message)

    @staticmethod
    def _catch_up(tables: Directory, table_id: str) -> None:
        """Have a table read what it missed from its log. A method of its own so that the
        bus's loop keeps no reference to the table (a swept table must be freed)."""
        table = tables.get(table_id)
        if table is not None:
            table.hear(None)

    async def _sub(self, pubsub: Any, table_id: str) -> None:
        await pubsub.ssubscribe(self.store.keys.events(table_id))
        self._subscribed.add(table_id)

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
