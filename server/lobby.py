"""The lobby: which tables exist, creating them within limits, listing them, cleaning up.

Tables are actors (:mod:`.table`); the lobby owns the registry and what spans tables:
the server-wide, per-player and per-address table limits (checked and reserved in one
synchronous step, so concurrent creates cannot overshoot them), the paginated
``list_tables``, match records, restart recovery and the sweep.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import logging
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from typing import Any

import msgpack
import msgspec

import protocol
from protocol import CommandError, ErrorCode, ServiceError
from protocol.results import CreateResult, RecordResult, SeatRef, TablesPage, WatchRef
from server.store import StorageUnavailable, Store, VersionConflict
from server.store.keys import check_id

from . import mutations
from .botrunner import BotRunner
from .cluster import Cluster
from .config import Settings
from .looplag import LoopLag
from .mutations import Work
from .supervisor import Supervisor
from .table import Table, number_events
from .tablestate import TableState, lobby_entry
from .viewer import Viewer
from .watching import Watching

log = logging.getLogger(__name__)

#: How long a process reuses the lobby it read from the store (``list_tables`` and the
#: table limits), in seconds: many lobby requests cost one read.
LOBBY_CACHE_S = 2.0

#: Lobby order: tables with free seats first, then matches being played, then the rest.
_STATUS_RANK = {"waiting": 0, "playing": 1, "finished": 2, "abandoned": 3}


def table_id_for(player: str, command_id: int) -> str:
    """Derived from who asked and the command id, so a resent create_table finds its table."""
    return "t" + hashlib.sha256(f"{player}:{command_id}".encode()).hexdigest()[:12]


class Lobby:
    def __init__(self, store: Store, settings: Settings, supervisor: Supervisor,
                 bots: BotRunner, cluster: Cluster, busy: LoopLag | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.settings = settings
        self.busy = busy or LoopLag(0)
        self.supervisor = supervisor
        self.bots = bots
        self.clock = clock
        self.tables: dict[str, Table] = {}
        self._creating: Counter[str] = Counter()       # player -> creates in flight
        self._creating_from: Counter[str] = Counter()  # address -> creates in flight
        self._address_of: dict[str, str] = {}          # table id -> creator's address
        self.cluster = cluster
        #: The lobby as every process sees it: read from the store, kept for a moment.
        self._entries: dict[str, dict[str, Any]] = {}
        self._entries_at = -1.0
        self._reading: asyncio.Future[None] | None = None
        self._local: dict[str, tuple[int, TableState, dict[str, Any]]] = {}
        self._loading: dict[str, asyncio.Future[Table | None]] = {}
        #: The tables each player watches without a seat (``list_tables``'s ``watching``).
        self.watching = Watching(store, settings.session_ttl_s)

    # ------------------------------------------------------------------ registry

    def get(self, table_id: str) -> Table:
        table = self.tables.get(table_id)
        if table is None or table.closed:
            raise CommandError(ErrorCode.NO_SUCH_TABLE, f"no table {table_id[:64]!r}")
        return table

    async def find(self, table_id: str) -> Table:
        """The table, loaded from the store if another process made it (any process
        serves any table)."""
        table = self.tables.get(table_id)
        if table is None:
            try:
                check_id("table", table_id)
            except ValueError:
                raise CommandError(ErrorCode.NO_SUCH_TABLE, "no such table") from None
            try:
                table = await self.load(table_id)
            except StorageUnavailable:
                raise ServiceError(ErrorCode.STORAGE_UNAVAILABLE,
                                   "storage is unavailable; try again") from None
        if table is None or table.closed:
            raise CommandError(ErrorCode.NO_SUCH_TABLE, f"no table {table_id[:64]!r}")
        return table

    async def load(self, table_id: str) -> Table | None:
        """Load one stored table (once, however many ask at the same moment)."""
        if table_id in self.tables:
            return self.tables[table_id]
        pending = self._loading.get(table_id)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[Table | None] = asyncio.get_running_loop().create_future()
        self._loading[table_id] = future
        try:
            loaded = await self.store.load_table(table_id)
            table = None
            if loaded is not None:
                version, raw = loaded
                try:
                    table = self._adopt(TableState.from_bytes(raw), version)
                except (ValueError, TypeError, KeyError, msgspec.ValidationError):
                    log.exception("table %s: unreadable stored state; left alone", table_id)
            future.set_result(table)
            return table
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()   # retrieved: waiters get it through the shield
            raise
        finally:
            self._loading.pop(table_id, None)

    def _adopt(self, state: TableState, version: int) -> Table:
        table = Table(state, version, store=self.store, settings=self.settings, bots=self.bots,
                      cluster=self.cluster, clock=self.clock)
        self.tables[state.id] = table
        self.cluster.watch(state.id)
        self._start_clock(table)
        self.supervisor.spawn(f"table {table.id} follower", table.follow())
        return table

    def _start_clock(self, table: Table) -> None:
        def restart(exc: BaseException) -> None:
            if not table.closed and not self.supervisor.closed:
                log.error("table %s: clock stopped; restarting it", table.id)
                self._start_clock(table)
        self.supervisor.spawn(f"table {table.id} clock", table.run(), on_error=restart)

    async def load_all(self) -> None:
        """Restart recovery: every stored table is loaded as its last stored command left
        it. Whichever process then takes a table's lease marks the seats whose players are
        connected nowhere as disconnected (their grace periods go on from when they
        dropped, or start then); bots and timers start again under that owner."""
        for tid in await self.store.table_ids():
            await self.load(tid)
        log.info("loaded %d tables from storage", len(self.tables))

    async def close(self) -> None:
        """Stop every table's clock; commands being stored finish first; the leases this
        process holds are let go so another process takes its tables at once."""
        for table in list(self.tables.values()):
            async with table.lock:
                table.closed = True
            table.close()
            if table.owned:
                with contextlib.suppress(StorageUnavailable):
                    await self.store.release_lease(table.id, self.cluster.process)

    # ------------------------------------------------------------------ creating

    async def entries(self, fresh: bool = False) -> dict[str, dict[str, Any]]:
        """Every table's lobby entry, from the store (so every process sees the same
        lobby), read at most every ``LOBBY_CACHE_S``; this process's own tables overlay it
        at once."""
        if fresh or time.monotonic() - self._entries_at > LOBBY_CACHE_S:
            # One read at a time: commands that arrive while it is under way share it
            # (at 500 tables, every create_table of a busy second read the whole lobby).
            if self._reading is None:
                self._reading = asyncio.ensure_future(self._read_entries())
                # Its waiters get its error; this retrieves it even if all were cancelled.
                self._reading.add_done_callback(
                    lambda f: None if f.cancelled() else f.exception())
            reading = self._reading
            try:
                await asyncio.shield(reading)
            finally:
                if reading.done() and self._reading is reading:
                    self._reading = None
        merged = dict(self._entries)
        for tid, t in self.tables.items():
            if not t.closed:
                merged[tid] = self._local_entry(t)
            else:
                merged.pop(tid, None)
        return merged

    def _local_entry(self, t: Table) -> dict[str, Any]:
        """This process's own view of one of its tables, made again only when the table
        changed (a create_table looks at every table for its limits); ``info`` is made
        only if a page shows it."""
        known = self._local.get(t.id)
        if known is not None and known[0] == t.version and known[1] is t.state:
            return known[2]
        entry = {"created": t.state.created_at, "creator": t.state.creator,
                 "private": t.state.private, "players": t.state.humans(),
                 "status": t.state.status, "info": t.info}
        self._local[t.id] = (t.version, t.state, entry)
        return entry

    async def _read_entries(self) -> None:
        started = time.monotonic()
        ids = await self.store.table_ids()
        raw = await self.store.lobby_infos(ids)
        entries = {}
        for tid, blob in raw.items():
            try:
                # The TableInfo stays encoded until a page shows it.
                entries[tid] = msgpack.unpackb(blob)
            except (ValueError, TypeError, msgpack.UnpackException):
                continue
        self._entries, self._entries_at = entries, started

    def _open_tables_of(self, player: str, entries: dict[str, dict[str, Any]]) -> int:
        return sum(1 for e in entries.values() if e["creator"] == player
                   and e["status"] in ("waiting", "playing"))

    def _open_tables_from(self, address: str) -> int:
        return sum(1 for tid, a in self._address_of.items() if a == address
                   and (t := self.tables.get(tid)) is not None
                   and t.state.status in ("waiting", "playing") and not t.closed)

    @contextlib.asynccontextmanager
    async def _opening(self, creator: str, address: str | None, *,
                       new: bool) -> AsyncIterator[None]:
        """Check the limits on open tables for one more table of ``creator`` (from
        ``address``), then count it as in flight until the block ends, so that many opened
        at once cannot overshoot. ``new``: a new table also counts against the server's
        total (a rematch reopens a table that is already counted)."""
        s = self.settings
        try:
            entries = await self.entries()
        except StorageUnavailable:
            raise ServiceError(ErrorCode.STORAGE_UNAVAILABLE,
                               "storage is unavailable; nothing was changed") from None
        if new and len(entries) + sum(self._creating.values()) >= s.max_tables:
            raise CommandError(ErrorCode.TOO_MANY_TABLES, "the server has as many tables as "
                               "it can hold; join one or try later")
        if (self._open_tables_of(creator, entries) + self._creating[creator]
                >= s.max_tables_per_player):
            who = "you already have" if new else "the table's creator already has"
            raise CommandError(ErrorCode.TOO_MANY_TABLES, f"{who} {s.max_tables_per_player} "
                               "open tables; finish or leave one",
                               details={"limit": s.max_tables_per_player})
        if address is not None and (self._open_tables_from(address)
                                    + self._creating_from[address]
                                    >= s.max_tables_per_address):
            whose = "your" if new else "the table's creator's"
            raise CommandError(ErrorCode.TOO_MANY_TABLES, f"too many open tables from {whose} "
                               "address", details={"limit": s.max_tables_per_address})
        self._creating[creator] += 1
        if address is not None:
            self._creating_from[address] += 1
        try:
            yield
        finally:
            self._creating[creator] -= 1
            if self._creating[creator] <= 0:
                del self._creating[creator]
            if address is not None:
                self._creating_from[address] -= 1
                if self._creating_from[address] <= 0:
                    del self._creating_from[address]

    @contextlib.asynccontextmanager
    async def reopening(self, table: Table) -> AsyncIterator[None]:
        """A rematch opens a finished table again, so it counts against its creator's
        open tables, and its creator's address's, like a new table: refused with
        ``too_many_tables`` at the limit, and counted in flight while it is applied."""
        if table.state.status != "finished":
            yield                     # not a reopening: the table answers for itself
            return
        async with self._opening(table.state.creator, self._address_of.get(table.id),
                                 new=False):
            yield

    async def create(self, viewer: Viewer, address: str, cmd: protocol.CreateTable) -> None:
        """A new table with its creator in seat 0; ok, then the table's head.

        A resent ``create_table`` (same id) finds the table it made and answers the same.
        """
        player = viewer.player
        tid = table_id_for(player, cmd.id)
        existing = self.tables.get(tid)
        if existing is not None:
            seat = existing.state.seat_of(player)
            viewer.send(viewer.session.ok(cmd.id, CreateResult(
                table=tid, seat=0 if seat is None else seat, code=existing.state.code)))
            if seat is not None:
                existing.subscribe(viewer)
            return
        s = self.settings
        if self.busy.busy():
            # Admission control (issue 11): past saturation every table slows down
            # together; a new table would only make the games in progress later.
            raise ServiceError(ErrorCode.SERVER_BUSY, "the server is too busy for new tables "
                               "right now; join one or try again shortly",
                               details={"retry_after_ms": self.busy.retry_after_ms()})
        async with self._opening(player, address, new=True):
            state = mutations.new_table(tid, player, viewer.name, cmd, self.clock(),
                                        s.max_bot_budget, bot=viewer.bot)
            work = Work(state, None, now=self.clock())
            work.table_changed()
            events = number_events(state, work)
            try:
                version = await self.store.create_table(
                    tid, state.to_bytes(), [(e.gseq, e.pack()) for e in events],
                    ttl_s=s.table_key_ttl_s, info=lobby_entry(state, 0))
            except VersionConflict:
                # Created before a lost acknowledgement: adopt what is stored.
                loaded = await self.store.load_table(tid)
                if loaded is None:
                    raise ServiceError(ErrorCode.CONFLICT, "the table could not be created; "
                                       "send it again with the same id") from None
                version, raw = loaded
                state = TableState.from_bytes(raw)
            except StorageUnavailable:
                raise ServiceError(ErrorCode.STORAGE_UNAVAILABLE,
                                   "storage is unavailable; nothing was created") from None
        table = self.tables.get(tid) or self._adopt(state, version)
        self._address_of[tid] = address
        with contextlib.suppress(StorageUnavailable):
            if await self.cluster.acquire(tid):     # its creator's process runs it
                table.set_owned(True)
        viewer.send(viewer.session.ok(cmd.id, CreateResult(table=tid, seat=0,
                                                           code=state.code)))
        table.subscribe(viewer)

    # ------------------------------------------------------------------ listing

    async def page(self, player: str, cursor: str | None, limit: int | None) -> TablesPage:
        """One page of the lobby, over every process: public tables and the private ones
        you sit at, tables with free seats first, then matches in play, then finished
        ones; and on every page your seats and the tables you watch (to resume)."""
        size = min(limit or protocol.MAX_PAGE_TABLES, protocol.MAX_PAGE_TABLES)
        try:
            entries = await self.entries()
        except StorageUnavailable:
            raise ServiceError(ErrorCode.STORAGE_UNAVAILABLE, "storage is unavailable") from None
        visible = [(tid, e) for tid, e in entries.items()
                   if not e["private"] or player in e["players"]]

        def key(item: tuple[str, dict[str, Any]]) -> tuple[int, float, str]:
            tid, e = item
            return (_STATUS_RANK.get(e["status"], 9), -float(e["created"]), tid)
        visible.sort(key=key)
        start = 0
        if cursor:
            after = _decode_cursor(cursor)
            start = next((i for i, t in enumerate(visible) if key(t) > after), len(visible))
        chunk = visible[start:start + size]
        more = start + size < len(visible)
        seats = []
        for tid, e in entries.items():
            if player in e["players"]:
                table = self.tables.get(tid) or await self.load(tid)
                seat = table.state.seat_of(player) if table is not None else None
                if seat is not None:
                    seats.append(SeatRef(table=tid, seat=seat, status=e["status"]))
        try:
            watched = await self.watching.tables(player)
        except StorageUnavailable:
            raise ServiceError(ErrorCode.STORAGE_UNAVAILABLE, "storage is unavailable") from None
        seated = {s.table for s in seats}
        watching = [WatchRef(table=tid, status=entries[tid]["status"]) for tid in watched
                    if tid in entries and tid not in seated]
        infos = []
        for _, e in chunk:
            info = e["info"]
            if callable(info):
                info = info()
            elif isinstance(info, bytes):
                try:
                    info = msgspec.msgpack.decode(info, type=protocol.TableInfo)
                except msgspec.ValidationError:
                    continue
            infos.append(info)
        return TablesPage(tables=infos, seats=seats,
                          next=_encode_cursor(key(chunk[-1])) if more and chunk else None,
                          watching=watching)

    # ------------------------------------------------------------------ records

    async def record(self, player: str, table_id: str, match: int | None = None
                     ) -> RecordResult:
        """The R17 record of a finished match: the table's latest, or its match number
        ``match`` (each rematch is a match of its own). A private table's record is only
        for those who sat at it (anyone else is told there is no such table)."""
        try:
            check_id("table", table_id)
        except ValueError:
            raise CommandError(ErrorCode.NO_SUCH_TABLE, "no such table or record") from None
        table = self.tables.get(table_id)
        if table is not None and not table.closed:
            st = table.state
            if st.private and player not in st.members and st.seat_of(player) is None:
                raise CommandError(ErrorCode.NO_SUCH_TABLE, "no such table or record")
            finished = st.matches_finished()
            if match is not None and match > st.matches_started():
                raise CommandError(ErrorCode.NO_SUCH_TABLE, f"this table has no match {match}")
            if not 1 <= (match if match is not None else finished) <= finished:
                raise CommandError(ErrorCode.WRONG_PHASE, "the match is not over: its record "
                                   "is private until it ends")
        try:
            raw = await self.store.load_record(table_id, match)
            if raw is None and match is not None:
                raw = await self.store.load_record(table_id)   # stored before match numbers
                if raw is not None and _record_match(raw) not in (match, None):
                    raw = None
        except StorageUnavailable:
            raise ServiceError(ErrorCode.STORAGE_UNAVAILABLE, "storage is unavailable") from None
        if raw is None:
            raise CommandError(ErrorCode.NO_SUCH_TABLE, "no such table or record")
        try:
            wrapper = msgpack.unpackb(raw)
            private, members, body = wrapper["private"], wrapper["members"], wrapper["record"]
        except (ValueError, TypeError, KeyError, msgpack.UnpackException):
            private, members, body = False, [], raw    # a record stored before access rules
        if private and player not in members:
            raise CommandError(ErrorCode.NO_SUCH_TABLE, "no such table or record")
        return RecordResult(table=table_id, record=msgspec.json.decode(body),
                            match=_record_match(raw) or match)

    # ------------------------------------------------------------------ clean-up

    async def sweep(self, now: float | None = None) -> list[str]:
        """Close tables that are done or deserted, and remove their keys (records stay):

        - finished matches, ``table_ttl_s`` after they ended;
        - waiting tables unchanged for ``waiting_ttl_s``, even with people at them;
        - matches nobody watches (no seated connection, no spectator), ``table_ttl_s``
          after their last change (their bots are paused meanwhile).
        """
        now = self.clock() if now is None else now
        s = self.settings
        removed = []
        for tid, table in list(self.tables.items()):
            if not table.owned:
                continue       # its owner sweeps it
            st = table.state
            finished = st.status in ("finished", "abandoned") and (
                (st.finished_at or st.last_activity) + s.table_ttl_s <= now)
            stale = st.status == "waiting" and st.last_activity + s.waiting_ttl_s <= now
            deserted = (st.status == "playing" and not table.humans_watching()
                        and st.last_activity + s.table_ttl_s <= now)
            if not (finished or stale or deserted):
                continue
            async with table.lock:
                try:
                    await self.store.delete_table(tid)
                except StorageUnavailable:
                    continue
                for viewer in list(table.viewers):
                    if st.status != "finished":
                        st.status = "abandoned"
                    viewer.send_all(viewer.session.rebase(
                        tid, st.seq_for(viewer.player),
                        [protocol.TableChanged(table=st.info(0))]))
                table.close()
                self.tables.pop(tid, None)
                self._local.pop(tid, None)
                self._address_of.pop(tid, None)
                self.cluster.unwatch(tid)
                with contextlib.suppress(StorageUnavailable):
                    await self.store.publish_closed(tid, self.cluster.process)
            removed.append(tid)
            log.info("table %s cleaned up (%s)", tid,
                     "finished" if finished else "waiting too long" if stale else "deserted")
        return removed

    def stalled(self) -> int:
        return sum(1 for t in self.tables.values() if t.stalled_since is not None)

    def owned(self) -> int:
        return sum(1 for t in self.tables.values() if t.owned and not t.closed)


def _record_match(raw: bytes) -> int | None:
    """The match number a stored record says it is (None: stored before there were)."""
    try:
        number = msgpack.unpackb(raw).get("match")
    except (ValueError, TypeError, AttributeError, msgpack.UnpackException):
        return None
    return number if type(number) is int and number >= 1 else None


def _encode_cursor(key: tuple[int, float, str]) -> str:
    return base64.urlsafe_b64encode(msgpack.packb(list(key))).decode()


def _decode_cursor(cursor: str) -> tuple[int, float, str]:
    try:
        rank, created, tid = msgpack.unpackb(base64.urlsafe_b64decode(cursor.encode()))
        return (int(rank), float(created), str(tid))
    except (ValueError, TypeError, msgpack.UnpackException):
        raise CommandError(ErrorCode.INVALID_FIELD, "not a cursor this server gave",
                           details={"field": "$.cursor"}) from None
