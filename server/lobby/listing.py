"""The lobby as every process sees it: each table's entry, read from the store, and its pages.

Every commit that changes a table's description stores its lobby entry
(:class:`~server.table.state.LobbyEntry`), so ``list_tables`` and the table limits see the
tables of every process. One read serves every lobby request for :data:`LOBBY_CACHE_S`
(at 500 tables, every ``create_table`` of a busy second read the whole lobby); this
process's own tables overlay it at once. A read takes only the entries that changed since
the last one, which the store numbers (``TableStore.lobby_changes``): finished tables stay
listed for an hour, and reading each of them every two seconds, in every process, cost
more than the tables being played (issue 32).
"""

from __future__ import annotations

import asyncio
import base64
import time
from dataclasses import dataclass

import msgpack
import msgspec

import protocol
from protocol import CommandError, ErrorCode, ServiceError
from protocol.players import TableFilter
from protocol.results import SeatRef, TablesPage, WatchRef
from server.store import StorageUnavailable, Store

from ..table import Table
from ..table.state import LobbyEntry, decode_lobby_entry, lobby_entry
from .index import Index
from .registry import Registry
from .watched import Watching

#: How long a process reuses the lobby it read from the store, in seconds.
LOBBY_CACHE_S = 2.0
#: A process reads every table's entry at least this often, in seconds; in between, only
#: the entries whose change the store numbered since its last read (issue 32).
LOBBY_WHOLE_S = 60.0

#: Lobby order: tables with free seats first, then matches being played, then the rest.
_STATUS_RANK = {"waiting": 0, "playing": 1, "finished": 2, "abandoned": 3}
#: The shortest start of a table id that ``join`` and ``spectate`` resolve (1.5).
MIN_PREFIX = 3
#: The length of every table id this server makes ("t" and 12 hex digits: ``create_table``'s
#: and play now's): a reference this long is a whole id, never the start of another.
TABLE_ID_CHARS = 13

SortKey = tuple[int, float, str]


@dataclass(frozen=True, slots=True)
class Tally:
    """A count of the lobby for the table limits (``Listing.tally``): ``mine``, the open
    tables of the creator asked about; ``at_most``, an upper bound of the lobby's tables
    (each one held here counted as if the store did not list it). The exact count,
    ``Listing.total``, is a pass over the tables held here: needed only near the limit."""

    mine: int
    at_most: int


class Listing:
    def __init__(self, store: Store, registry: Registry,
                 watching: Watching | None = None) -> None:
        self.store = store
        self.registry = registry
        self.watching = watching
        self._entries: dict[str, LobbyEntry] = {}
        self._entries_at = -1.0
        #: The store's number of the last lobby change this process has read, and when it
        #: last read every entry.
        self._seq = -1
        self._whole_at = -LOBBY_WHOLE_S
        self._reading: asyncio.Future[None] | None = None
        #: This process's tables' entries, made again only when the table changed.
        self._local: dict[str, tuple[int, object, LobbyEntry]] = {}
        #: The store's open tables by creator, kept with ``_entries`` (the limits count
        #: them at each new table: a merge of every entry cost O(tables) per create).
        self._open_of = Index()

    async def entries(self, fresh: bool = False) -> dict[str, LobbyEntry]:
        """Every table's lobby entry, read at most every ``LOBBY_CACHE_S`` (``fresh``:
        now); this process's own tables overlay it at once."""
        await self._refresh(fresh)
        merged = dict(self._entries)
        for table in self.registry.held():
            if not table.closed:
                merged[table.id] = self._local_entry(table)
            else:
                merged.pop(table.id, None)
        return merged

    async def tally(self, creator: str, fresh: bool = False) -> Tally:
        """What the table limits count of the merged lobby (:meth:`entries`): ``creator``'s
        open tables, and how many tables it holds; counted without merging it (issue 32:
        each new table checks the limits, and a merge read every table kept for an hour,
        and made an entry of every table held here)."""
        await self._refresh(fresh)
        mine = len(self._open_of.of(creator))
        for table in self.registry.made_by(creator):     # overlaid as entries() does
            stored = self._entries.get(table.id)
            if stored is not None and stored.open and stored.creator == creator:
                mine -= 1
            state = table.state
            if not table.closed and state.status in ("waiting", "playing"):
                mine += 1
        return Tally(mine, len(self._entries) + len(self.registry.tables))

    def total(self) -> int:
        """How many tables the merged lobby holds, as last read (one pass over the tables
        held here)."""
        total = len(self._entries)
        for table in self.registry.held():
            if table.id in self._entries:
                total -= 1
            if not table.closed:
                total += 1
        return total

    def _keep(self, table_id: str, entry: LobbyEntry | None) -> None:
        """Store ``entry`` as the table's (None: the table is gone), index included."""
        old = self._entries.pop(table_id, None)
        if old is not None and old.open:
            self._open_of.discard(old.creator, table_id)
        if entry is not None:
            self._entries[table_id] = entry
            if entry.open:
                self._open_of.add(entry.creator, table_id)

    async def _refresh(self, fresh: bool = False) -> None:
        """Read the store's lobby if the last read is older than ``LOBBY_CACHE_S``."""
        if fresh or time.monotonic() - self._entries_at > LOBBY_CACHE_S:
            # One read at a time: commands that arrive while it is under way share it.
            if self._reading is None:
                self._reading = asyncio.ensure_future(self._read())
                # Its waiters get its error; this retrieves it even if all were cancelled.
                self._reading.add_done_callback(
                    lambda f: None if f.cancelled() else f.exception())
            reading = self._reading
            try:
                await asyncio.shield(reading)
            finally:
                if reading.done() and self._reading is reading:
                    self._reading = None

    async def resolve(self, ref: str, code: str | None) -> str:
        """The table a ``join`` or ``spectate`` names (1.5): its id, or a unique start of
        one (at least ``MIN_PREFIX`` characters) among the public tables and the private
        ones whose join code is ``code``, so a short id works for both (a private table
        stays unknown to whoever lacks its code). Anything else is left as it is."""
        if (self.registry.get(ref) is not None or len(ref) < MIN_PREFIX
                or len(ref) >= TABLE_ID_CHARS):
            return ref   # held here, too short, or whole (issue 32: no merge of the lobby)
        try:
            await self._refresh()
            if ref in self._entries:
                return ref
            entries = await self.entries()
        except StorageUnavailable:
            return ref
        if ref in entries:
            return ref
        found = []
        for tid, e in entries.items():
            if not tid.startswith(ref):
                continue
            if e.private:
                table = self.registry.get(tid) or await self.registry.load(tid)
                if code is None or table is None or table.state.code != code:
                    continue
            found.append(tid)
        return found[0] if len(found) == 1 else ref

    def forget(self, table_id: str) -> None:
        self._local.pop(table_id, None)

    def _local_entry(self, t: Table) -> LobbyEntry:
        """This process's own view of one of its tables (a create_table looks at every
        table for its limits); its ``TableInfo`` is made only if a page shows it."""
        known = self._local.get(t.id)
        if known is not None and known[0] == t.version and known[1] is t.state:
            return known[2]
        entry = lobby_entry(t.state, 0, with_info=False)
        self._local[t.id] = (t.version, t.state, entry)
        return entry

    async def _read(self) -> None:
        """Read the entries that changed since the last read (issue 32), or every entry:
        at the first read, when this process fell too far behind the changes kept, and
        every ``LOBBY_WHOLE_S`` in case a change's note was lost."""
        started = time.monotonic()
        whole = started - self._whole_at >= LOBBY_WHOLE_S
        seq, changed = await self.store.lobby_changes(-1 if whole else self._seq)
        if changed is None:
            raw = await self.store.lobby_infos(await self.store.table_ids())
            self._entries = {}
            self._open_of.clear()
            self._whole_at = started
            changed = list(raw)
        else:
            raw = await self.store.lobby_infos(changed)
        for tid in changed:
            blob = raw.get(tid)
            # None: deleted, or expired
            self._keep(tid, decode_lobby_entry(blob) if blob else None)
        self._seq, self._entries_at = seq, started

    async def page(self, player: str, cursor: str | None, limit: int | None,
                   only: TableFilter | None = None) -> TablesPage:
        """One page of the lobby, over every process: public tables and the private ones
        you sit at, tables with free seats first, then matches in play, then finished
        ones, which only those who sit there see (1.5: a finished match is no longer open
        to anyone else, issue 31 item 11); and on every page the seats ``player`` holds
        and the tables it watches without a seat (1.5), to resume."""
        size = min(limit or protocol.MAX_PAGE_TABLES, protocol.MAX_PAGE_TABLES)
        try:
            entries = await self.entries()
        except StorageUnavailable:
            raise ServiceError(ErrorCode.STORAGE_UNAVAILABLE, "storage is unavailable") from None
        visible = [(tid, e) for tid, e in entries.items()
                   if player in e.players
                   or not (e.private or e.status in ("finished", "abandoned"))]
        if only is not None:     # 1.5: free seats, rated or casual, options (issue 27)
            visible = [(tid, e) for tid, e in visible if self._accepts(only, tid, e)]

        def key(item: tuple[str, LobbyEntry]) -> SortKey:
            tid, e = item
            return (_STATUS_RANK.get(e.status, 9), -float(e.created), tid)
        visible.sort(key=key)
        start = 0
        if cursor:
            after = _decode_cursor(cursor)
            start = next((i for i, t in enumerate(visible) if key(t) > after), len(visible))
        chunk = visible[start:start + size]
        more = start + size < len(visible)
        seats = []
        for tid, e in entries.items():
            if player in e.players:
                table = self.registry.get(tid) or await self.registry.load(tid)
                seat = table.state.seat_of(player) if table is not None else None
                if seat is not None:
                    seats.append(SeatRef(table=tid, seat=seat, status=e.status))
        watching: list[WatchRef] = []
        if self.watching is not None:
            try:
                watched = await self.watching.tables(player)
            except StorageUnavailable:
                raise ServiceError(ErrorCode.STORAGE_UNAVAILABLE,
                                   "storage is unavailable") from None
            seated = {s.table for s in seats}
            watching = [WatchRef(table=tid, status=entries[tid].status) for tid in watched
                        if tid in entries and tid not in seated]
        infos = [info for tid, e in chunk if (info := self._info(tid, e)) is not None]
        return TablesPage(tables=infos, seats=seats,
                          next=_encode_cursor(key(chunk[-1])) if more and chunk else None,
                          watching=watching)

    def _accepts(self, only: TableFilter, table_id: str, entry: LobbyEntry) -> bool:
        info = self._info(table_id, entry)
        if info is None:
            return False
        free = sum(1 for s in info.seats if s.kind == "empty") if info.status == "waiting" else 0
        return only.accepts(info.options, free)

    def _info(self, table_id: str, entry: LobbyEntry) -> protocol.TableInfo | None:
        table = self.registry.get(table_id)
        if table is not None and not table.closed:
            return table.info()
        try:
            return msgspec.msgpack.decode(entry.info, type=protocol.TableInfo)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None


def _encode_cursor(key: SortKey) -> str:
    return base64.urlsafe_b64encode(msgpack.packb(list(key))).decode()


def _decode_cursor(cursor: str) -> SortKey:
    try:
        rank, created, tid = msgpack.unpackb(base64.urlsafe_b64decode(cursor.encode()))
        return (int(rank), float(created), str(tid))
    except (ValueError, TypeError, msgpack.UnpackException):
        raise CommandError(ErrorCode.INVALID_FIELD, "not a cursor this server gave",
                           details={"field": "$.cursor"}) from None
