"""The server's state with a lifecycle: an async context manager over its parts.

``Hub`` owns, and starts and stops in order: the supervisor of every background task, the
bot runner, the session registry (:mod:`.sessions`), the lobby and its tables
(:mod:`.lobby`), and the sweep. Connections are served by :mod:`.dispatch`. Nothing here is
module-global: a test can run two hubs side by side.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TypedDict

from server.accounts import Accounts, Hasher, HashParams, LoginPolicy
from server.store import Storage, Store
from server.store.accounts import AccountStore, Limit
from server.store.runtime import StoreStatus

from .botrunner import BotRunner
from .cluster import Cluster, ClusterStatus
from .config import Settings
from .lobby import Lobby
from .looplag import LoopLag, ReplayBudget, ReplayStatus
from .memory import HeapKeeper
from .metrics import Metrics
from .players import Players
from .players.queue import PlayNow
from .reviews import Reviews
from .session_news import SessionNewsBus
from .sessions import Sessions
from .supervisor import Supervisor
from .table import Table
from .wire import Client, ConnectionCount

log = logging.getLogger(__name__)


class Health(TypedDict):
    """``/healthz``'s body (JSON): the store, what this process holds and how it runs."""

    status: str
    storage: bool
    store: StoreStatus
    tables: int
    stalled_tables: int
    #: Tables another process runs that nobody here watches: not heard (issue 32).
    resting_tables: int
    owned_tables: int
    loop_lag_ms: dict[str, float]
    busy: bool
    replays: ReplayStatus
    cluster: ClusterStatus
    connections: int
    sockets: int
    tasks: int
    task_failures: int
    bot_failures: int
    bot_timeouts: int
    bots_thinking: int
    bot_crowded_decisions: int
    uptime_s: float


def login_policy(settings: Settings) -> LoginPolicy:
    """The login attempts' limits from the settings (``server/accounts/service.py``)."""
    backoff, longest = settings.login_backoff_ms, settings.login_backoff_max_ms
    return LoginPolicy(per_account=Limit(settings.login_free_per_account, backoff, longest),
                       per_address=Limit(settings.login_free_per_address, backoff, longest),
                       window_s=settings.login_window_s)


class Hub:
    def __init__(self, store: Store, settings: Settings, storage: Storage | None = None) -> None:
        self.store = store
        self.settings = settings
        self.storage = storage
        self.supervisor = Supervisor()
        self.bots = BotRunner(settings.bot_workers, settings.bot_timeout_s,
                               think_s=settings.bot_think_s or None)
        self.lag = LoopLag(settings.busy_lag_ms)
        #: What resumes may replay (issue 30): per address, per process, counted by
        #: admission control.
        self.replays = ReplayBudget(settings.replay_per_address, settings.replay_per_process,
                                    resumes_per_address=settings.resumes_per_address,
                                    late=self.lag.late)
        self.lag.pressures.append(self.replays.pressed)
        self.sessions = Sessions(store, settings, busy=self.lag)
        self.hasher = Hasher(HashParams(memory_kib=settings.argon2_memory_kib,
                                        time_cost=settings.argon2_time_cost),
                             workers=settings.hash_workers, queue=settings.hash_queue)
        self.accounts = Accounts(AccountStore(store), self.hasher, login_policy(settings))
        self.sessions = Sessions(store, settings, busy=self.lag, accounts=self.accounts)
        self.cluster = Cluster(store, settings, self.supervisor)
        #: Sessions taken over or revoked here end their connections on the other processes
        #: at once (issue 30: the hello race; issue 27: log out everywhere).
        self.session_news = SessionNewsBus(store, self.sessions, self.cluster.process,
                                           self.cluster.others_alive)
        self.sessions.on_replaced = self.session_news.replaced
        self.lobby = Lobby(store, settings, self.supervisor, self.bots, self.cluster,
                           busy=self.lag)
        self.players = Players(store, settings, self.supervisor.spawn)   # issue 27
        self.lobby.registry.on_finish = self.players.finished
        self.queue = PlayNow(store, settings, self.supervisor, self.lobby, self.sessions,
                             self.players, self.cluster.process)
        self.reviews = Reviews(store, self.lobby, self.bots, self.supervisor,
                               ttl_s=settings.record_ttl_s)
        self.count = ConnectionCount()
        #: ``/metrics`` (server/metrics.py): the parts report to it through plain hooks.
        self.metrics = Metrics()
        #: After a sweep, what it swept is collected and the C heap's free pages go back
        #: to the system (server/memory.py).
        self.heap = HeapKeeper(settings.full_gc_s, settings.malloc_trim_s)
        self.lag.observe = self.metrics.observe_lag
        self.bots.observe = self.metrics.observe_bot
        store.observe = self.metrics.observe_store
        self.clients: set[Client] = set()
        self.started_at = time.time()
        self.closing = False
        self._closed = False
        self.metrics.attach(self)

    @property
    def tables(self) -> dict[str, Table]:
        return self.lobby.tables

    async def __aenter__(self) -> Hub:
        await self.lobby.load_all()
        self.cluster.start(self.lobby)
        self.supervisor.spawn("sweep", self._sweep_forever())
        self.supervisor.spawn("loop lag", self.lag.sample_forever())
        self.supervisor.spawn("revoked sessions", self._revocations_forever())
        self.supervisor.spawn("session news", self.session_news.listen())
        self.reviews.start()
        self.queue.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Graceful stop: refuse new commands, let stored-but-unsent work finish, stop every
        table's clock and every task, then the bot threads. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        self.closing = True
        await self.queue.stop()
        await self.lobby.close()
        await self.cluster.stop()
        await self.supervisor.close()
        self.bots.close()
        self.hasher.close()

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(self.settings.sweep_interval_s)
            try:
                await self.lobby.sweep()
            except Exception:
                log.exception("sweep failed; trying again at the next interval")
            self.heap.after_sweep(time.monotonic())

    async def _revocations_forever(self) -> None:
        """Sessions ended on another process close their connections here too (issue 27)."""
        while True:
            await asyncio.sleep(self.settings.revoke_check_s)
            try:
                await self.sessions.check_revoked()
            except Exception:
                log.exception("checking revoked sessions failed; trying again")

    async def health(self) -> Health:
        """``/healthz``: storage really answering as *our* store (its identity checked),
        and what this process holds."""
        if self.storage is not None:
            ok = await self.storage.check()
            store_status: StoreStatus = self.storage.status()
        else:
            ok, store_status = await self.store.ping(), {}
        return {
            "status": "ok" if ok else "storage_unavailable",
            "storage": ok,
            "store": store_status,
            "tables": len(self.lobby.tables),
            "stalled_tables": self.lobby.stalled(),
            "resting_tables": len(self.lobby.registry.resting),
            "owned_tables": self.lobby.owned(),
            "loop_lag_ms": self.lag.summary(),
            "busy": self.lag.busy(),
            "replays": self.replays.summary(),
            "cluster": self.cluster.status(),
            "connections": len(self.clients),
            "sockets": self.count.total,
            "tasks": self.supervisor.running,
            "task_failures": self.supervisor.failures,
            "bot_failures": self.bots.failures,
            "bot_timeouts": self.bots.timeouts,
            "bots_thinking": self.bots.in_flight,
            "bot_crowded_decisions": self.bots.crowded,
            "uptime_s": round(time.time() - self.started_at, 1),
        }
