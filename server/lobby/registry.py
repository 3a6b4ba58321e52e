"""The tables this process holds: loaded once, each running in its own scope, let go on close.

Any process serves any table (docs/ARCHITECTURE.md, "Many processes"): a table another
process made is loaded from the store the first time one of this process's connections
names it (once, however many ask at the same moment). Each held table's tasks run in one
supervised scope (:meth:`server.table.Table.run`) that ends when the table is closed; a
scope that fails is started again while the table is open.

This is the cluster's :class:`~server.cluster.Directory`: the keeper and the event bus
reach tables only through it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

import msgspec

from protocol import CommandError, ErrorCode, RuleError, ServiceError
from server.game import Match
from server.store import StorageUnavailable, Store
from server.store.keys import check_id

from ..botrunner import BotRunner
from ..cluster import Cluster
from ..config import Settings
from ..supervisor import Supervisor
from ..table import Table
from ..table.delta import restore
from ..table.state import TableState
from .index import Index

log = logging.getLogger(__name__)


class Registry:
    def __init__(self, store: Store, settings: Settings, supervisor: Supervisor,
                 bots: BotRunner, cluster: Cluster,
                 clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.settings = settings
        self.supervisor = supervisor
        self.bots = bots
        self.cluster = cluster
        self.clock = clock
        self.tables: dict[str, Table] = {}
        #: The held tables' ids by their creator (the per-player limit counts a creator's
        #: tables at each new one: issue 32).
        self._by_creator = Index()
        self._loading: dict[str, asyncio.Future[Table | None]] = {}
        #: Given to every table held here: what to do when a match ends (issue 27).
        self.on_finish: Callable[[TableState, Match | None], None] | None = None
        #: Told of every table this process stops holding, however it ends (the lobby's
        #: caches of it go with it).
        self.forgotten: list[Callable[[str], None]] = []
        #: Tables another process runs that nobody here watches any more: their commits
        #: are not heard here until someone here comes back to them (issue 32, ``rest``).
        self.resting: set[str] = set()

    # ------------------------------------------------------------------ the directory

    def held(self) -> list[Table]:
        return list(self.tables.values())

    def made_by(self, creator: str) -> list[Table]:
        """The held tables ``creator`` made."""
        return [self.tables[tid] for tid in self._by_creator.of(creator)]

    def get(self, table_id: str) -> Table | None:
        return self.tables.get(table_id)

    async def find(self, table_id: str) -> Table:
        """The table, loaded from the store if another process made it; ``no_such_table``
        if there is none (or it is closed)."""
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
        if table.id in self.resting:
            await self._wake(table)
            if table.closed:          # its owner swept it while it rested here
                raise CommandError(ErrorCode.NO_SUCH_TABLE, f"no table {table_id[:64]!r}")
        return table

    # ------------------------------------------------------------------ resting

    def rest(self, table: Table) -> None:
        """Stop hearing the commits of a table another process runs, now that nobody
        here watches it (issue 32): a player told the table's home (server/homes.py)
        leaves for it, and this process would otherwise go on copying every commit of a
        table it delivers to nobody. The sweep lets a resting table go; someone here who
        comes back to it first wakes it (:meth:`find`)."""
        if table.owned or table.closed or table.viewers or table.id in self.resting:
            return
        self.resting.add(table.id)
        self.cluster.unwatch(table.id)

    async def _wake(self, table: Table) -> None:
        """Hear the table again and read what it missed before anyone here uses it (the
        subscription, once in effect, reads the log once more: nothing falls between)."""
        self.resting.discard(table.id)          # before any await: the sweep keeps it
        self.cluster.watch(table.id)
        try:
            await table.catch_up()
        except StorageUnavailable:
            raise ServiceError(ErrorCode.STORAGE_UNAVAILABLE,
                               "storage is unavailable; try again") from None

    async def let_resting_go(self) -> int:
        """Forget the tables that rest here (their owner sweeps them; this process would
        not hear it): a player who comes back loads the table again. Returns how many."""
        gone = 0
        for tid in list(self.resting):
            table = self.tables.get(tid)
            if table is None or table.owned:     # gone, or run here now (a takeover)
                self.resting.discard(tid)
                continue
            async with table.lock:
                if tid not in self.resting or table.owned or table.viewers:
                    continue                 # woken meanwhile, or run here now
                # Its version, told once more: a commit this process made while it
                # believed itself alone (another process just started, not yet seen
                # beating) was not published, and the keeper's beacons for such commits
                # go only to tables still held. Without it the owner missed a seat's
                # disconnection and nobody played the seat (bench/soak.py, 2 runs in 2).
                with contextlib.suppress(StorageUnavailable):
                    await table.send_beacon()
                self.let_go(table, tell=False)
                gone += 1
        return gone

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
                try:
                    state, match = restore(loaded)
                    table = self.hold(state, loaded.version, match)
                except (ValueError, TypeError, KeyError, msgspec.ValidationError, RuleError):
                    log.exception("table %s: unreadable stored state; left alone", table_id)
            future.set_result(table)
            return table
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()   # retrieved: waiters get it through the shield
            raise
        finally:
            self._loading.pop(table_id, None)

    async def load_all(self) -> None:
        """Restart recovery: every stored table is loaded as its last stored command left
        it. Whichever process then takes a table's lease marks the seats whose players are
        connected nowhere as disconnected (their grace periods go on from when they
        dropped, or start then); bots and timers start again under that owner."""
        for tid in await self.store.table_ids():
            await self.load(tid)
        log.info("loaded %d tables from storage", len(self.tables))

    # ------------------------------------------------------------------ holding

    def hold(self, state: TableState, version: int, match: Match | None = None, *,
             made_here: bool = False) -> Table:
        """Hold a table here: hear its commits, run its scope. ``made_here``: this process
        just stored it, so no answer is stored at it yet (none to read)."""
        existing = self.tables.get(state.id)
        if existing is not None:
            return existing
        if self.supervisor.closed:
            # The process is stopping (SIGTERM) and a command passed its checks before
            # (a resume waiting its turn): another process will hold the table.
            raise ServiceError(ErrorCode.SHUTTING_DOWN, "the server is restarting; nothing "
                               "was applied: reconnect, resume and send it again")
        table = Table(state, version, store=self.store, settings=self.settings, bots=self.bots,
                      membership=self.cluster, match=match, clock=self.clock,
                      made_here=made_here)
        table.on_finish = self.on_finish
        self.tables[state.id] = table
        self._by_creator.add(state.creator, state.id)
        self.cluster.watch(state.id)
        self._run(table)
        return table

    def _run(self, table: Table) -> None:
        def again(exc: BaseException) -> None:
            if not table.closed and not self.supervisor.closed:
                log.error("table %s: its tasks stopped; starting them again", table.id)
                self._run(table)
        self.supervisor.spawn(f"table {table.id}", self._scope(table), on_error=again)

    async def _scope(self, table: Table) -> None:
        """The table's scope; a table that closed by itself (its owner swept it: the
        follower heard ``CLOSED``) is forgotten here too. Without this, every process but
        the owner kept each swept table it had held, for ever (found by bench/soak.py,
        issue 30)."""
        await table.run()
        if table.closed and self.tables.get(table.id) is table:
            self._forget(table)

    def _forget(self, table: Table) -> None:
        del self.tables[table.id]
        self.resting.discard(table.id)
        self._by_creator.discard(table.state.creator, table.id)
        self.cluster.unwatch(table.id)
        for tell in self.forgotten:
            tell(table.id)

    def let_go(self, table: Table, *, tell: bool) -> None:
        """Close the table here and forget it (its tasks end with it)."""
        table.close(tell=tell)
        if self.tables.get(table.id) is table:
            self._forget(table)
        else:
            self.cluster.unwatch(table.id)

    async def close(self) -> None:
        """Stop every table; commands being stored finish first; the leases this process
        holds are let go so another process takes its tables at once."""
        for table in self.held():
            async with table.lock:
                table.close()
            if table.owned:
                with contextlib.suppress(StorageUnavailable):
                    await self.store.release_lease(table.id, self.cluster.process)

    # ------------------------------------------------------------------ figures

    def stalled(self) -> int:
        return sum(1 for t in self.tables.values() if t.stalled_since is not None)

    def owned(self) -> int:
        return sum(1 for t in self.tables.values() if t.owned and not t.closed)
