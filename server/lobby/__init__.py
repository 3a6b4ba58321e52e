"""The lobby: which tables exist, creating them within limits, listing them, cleaning up.

Tables (:mod:`server.table`) run themselves; the lobby owns what spans tables, each part
in a room of its own:

- :mod:`.registry`: the tables this process holds (loaded once, run in their own scope);
  the cluster's directory;
- :mod:`.listing`: every process's tables as ``list_tables`` pages them;
- :mod:`.openings`: the server-wide, per-player and per-address table limits;
- :mod:`.records`: finished matches' records;
- :mod:`.watched`: the tables each player watches without a seat;
- here: creating a table, and the sweep that closes tables that are done or deserted.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import time
from collections.abc import Callable

import protocol
from protocol import ErrorCode, ServiceError
from protocol.players import TableFilter
from protocol.results import CreateResult, RecordResult, TablesPage
from server.game import Match
from server.store import StorageUnavailable, Store, VersionConflict

from ..botrunner import BotRunner
from ..cluster import Cluster
from ..config import Settings
from ..looplag import LoopLag
from ..supervisor import Supervisor
from ..table import Table, mutations
from ..table.delta import restore
from ..table.fanout import number_events
from ..table.mutations import Work
from ..table.state import TableState, encode_lobby_entry, lobby_entry
from ..viewer import Viewer
from .listing import TABLE_ID_CHARS, Listing
from .openings import Openings
from .records import read_record
from .registry import Registry
from .watched import Watching

log = logging.getLogger(__name__)


def table_id_for(player: str, command_id: int) -> str:
    """Derived from who asked and the command id, so a resent create_table finds its table."""
    return "t" + hashlib.sha256(f"{player}:{command_id}".encode()).hexdigest()[
        :TABLE_ID_CHARS - 1]


class Lobby:
    def __init__(self, store: Store, settings: Settings, supervisor: Supervisor,
                 bots: BotRunner, cluster: Cluster, busy: LoopLag | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.settings = settings
        self.busy = busy or LoopLag(0)
        self.cluster = cluster
        self.clock = clock
        self.registry = Registry(store, settings, supervisor, bots, cluster, clock)
        #: The tables each player watches without a seat (``list_tables``'s ``watching``).
        self.watching = Watching(store, settings.session_ttl_s)
        self.listing = Listing(store, self.registry, self.watching)
        self.openings = Openings(settings, self.listing, self.registry)
        # A table that leaves this process, swept here or closed by its owner elsewhere,
        # leaves these caches too (bench/soak.py found them growing by a table a match).
        self.registry.forgotten += [self.listing.forget, self.openings.forget]

    # ------------------------------------------------------------------ the registry's

    @property
    def tables(self) -> dict[str, Table]:
        return self.registry.tables

    def held(self) -> list[Table]:
        return self.registry.held()

    def get(self, table_id: str) -> Table | None:
        return self.registry.get(table_id)

    async def load(self, table_id: str) -> Table | None:
        return await self.registry.load(table_id)

    async def find(self, table_id: str) -> Table:
        return await self.registry.find(table_id)

    async def load_all(self) -> None:
        await self.registry.load_all()

    async def close(self) -> None:
        await self.registry.close()

    def stalled(self) -> int:
        return self.registry.stalled()

    def owned(self) -> int:
        return self.registry.owned()

    # ------------------------------------------------------------------ what players ask

    async def page(self, player: str, cursor: str | None, limit: int | None,
                   only: TableFilter | None = None) -> TablesPage:
        return await self.listing.page(player, cursor, limit, only)

    async def record(self, player: str, table_id: str, match: int | None = None,
                     code: str | None = None) -> RecordResult:
        return await read_record(self.store, self.registry.get(table_id), player, table_id,
                                 match, code)

    def reopening(self, table: Table) -> contextlib.AbstractAsyncContextManager[None]:
        return self.openings.reopening(table)

    async def create(self, viewer: Viewer, address: str, cmd: protocol.CreateTable) -> Table:
        """A new table with its creator in seat 0; ok, then the table's head.

        A resent ``create_table`` (same id) finds the table it made and answers the same.
        """
        player = viewer.player
        tid = table_id_for(player, cmd.id)
        existing = self.registry.get(tid)
        if existing is not None:
            seat = existing.state.seat_of(player)
            viewer.reply(cmd.id, CreateResult(table=tid, seat=0 if seat is None else seat,
                                              code=existing.state.code))
            if seat is not None:
                existing.subscribe(viewer)
            return existing
        if self.busy.busy():
            # Admission control (issue 11): past saturation every table slows down
            # together; a new table would only make the games in progress later.
            raise ServiceError(ErrorCode.SERVER_BUSY, "the server is too busy for new tables "
                               "right now; join one or try again shortly",
                               details={"retry_after_ms": self.busy.retry_after_ms()})
        async with self.openings.opening(player, address, new=True):
            state, version, match = await self._store_new(tid, viewer, cmd)
        table = self.registry.hold(state, version, match, made_here=True)
        self.openings.made_from(tid, address)
        with contextlib.suppress(StorageUnavailable):
            if await self.cluster.acquire(tid):     # its creator's process runs it
                table.set_owned(True)
        viewer.reply(cmd.id, CreateResult(table=tid, seat=0, code=state.code))
        table.subscribe(viewer)
        return table

    async def _store_new(self, tid: str, viewer: Viewer, cmd: protocol.CreateTable,
                         ) -> tuple[TableState, int, Match | None]:
        s = self.settings
        state = mutations.new_table(tid, viewer.player, viewer.name, cmd, self.clock(),
                                    s.max_bot_budget, bot=viewer.bot)
        work = Work(state, None, now=self.clock())
        work.table_changed()
        events = number_events(state, work.events, work.watchers)
        match = None
        try:
            version = await self.store.create_table(
                tid, state.to_bytes(), [(e.gseq, e.pack()) for e in events],
                ttl_s=s.table_key_ttl_s, info=encode_lobby_entry(lobby_entry(state, 0)))
        except VersionConflict:
            # Created before a lost acknowledgement: adopt what is stored.
            loaded = await self.store.load_table(tid)
            if loaded is None:
                raise ServiceError(ErrorCode.CONFLICT, "the table could not be created; "
                                   "send it again with the same id") from None
            version = loaded.version
            state, match = restore(loaded)
        except StorageUnavailable:
            raise ServiceError(ErrorCode.STORAGE_UNAVAILABLE,
                               "storage is unavailable; nothing was created") from None
        return state, version, match

    # ------------------------------------------------------------------ clean-up

    async def sweep(self, now: float | None = None) -> list[str]:
        """Close tables that are done or deserted, and remove their keys (records stay):

        - finished matches, ``table_ttl_s`` after they ended;
        - waiting tables unchanged for ``waiting_ttl_s``, even with people at them;
        - matches nobody watches (no seated connection, no spectator), ``table_ttl_s``
          after their last change (their bots are paused meanwhile).
        """
        now = self.clock() if now is None else now
        removed = []
        await self.registry.let_resting_go()
        for table in self.registry.held():
            if not table.owned:
                continue       # its owner sweeps it
            why = self._done(table, now)
            if why is None:
                continue
            if why == "finished" and self.registry.on_finish is not None:
                # Issue 27: its last match into the history, in case the process whose
                # commit ended it stopped before keeping it (kept once: a no-op otherwise).
                self.registry.on_finish(table.state, table.match)
            async with table.lock:
                try:
                    await self.store.delete_table(table.id)
                except StorageUnavailable:
                    continue
                self.registry.let_go(table, tell=True)
                self.listing.forget(table.id)
                self.openings.forget(table.id)
                with contextlib.suppress(StorageUnavailable):
                    await self.store.publish_closed(table.id, self.cluster.process)
            removed.append(table.id)
            log.info("table %s cleaned up (%s)", table.id, why)
        return removed

    def _done(self, table: Table, now: float) -> str | None:
        """Why the sweep closes ``table`` now, or None."""
        s, st = self.settings, table.state
        if st.status in ("finished", "abandoned") and (
                (st.finished_at or st.last_activity) + s.table_ttl_s <= now):
            return "finished"
        if st.status == "waiting" and st.last_activity + s.waiting_ttl_s <= now:
            return "waiting too long"
        if (st.status == "playing" and not table.watched()
                and st.last_activity + s.table_ttl_s <= now):
            return "deserted"
        return None
