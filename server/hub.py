"""The server's state with a lifecycle: an async context manager over its parts.

``Hub`` owns, and starts and stops in order: the supervisor of every background task, the
bot runner, the session registry (:mod:`.sessions`), the lobby and its tables
(:mod:`.lobby`), and the sweep. Connections are served by :mod:`.dispatch`. Nothing here is
module-global: a test can run two hubs side by side.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from typing import Any

from server.store import Storage, Store

from .botrunner import BotRunner
from .cluster import Cluster
from .config import Settings
from .lobby import Lobby
from .sessions import Sessions
from .supervisor import Supervisor
from .wire import Client, ConnectionCount

log = logging.getLogger(__name__)


class Hub:
    def __init__(self, store: Store, settings: Settings, storage: Storage | None = None) -> None:
        self.store = store
        self.settings = settings
        self.storage = storage
        self.supervisor = Supervisor()
        self.bots = BotRunner(settings.bot_workers, settings.bot_timeout_s)
        self.sessions = Sessions(store, settings)
        self.cluster = Cluster(store, settings, self.supervisor)
        self.lobby = Lobby(store, settings, self.supervisor, self.bots, self.cluster)
        self.count = ConnectionCount()
        self.clients: set[Client] = set()
        self.started_at = time.time()
        self.closing = False
        self._closed = False
        self._lags: collections.deque[float] = collections.deque(maxlen=600)

    @property
    def tables(self) -> dict[str, Any]:
        return self.lobby.tables

    async def __aenter__(self) -> Hub:
        await self.lobby.load_all()
        self.cluster.start(self.lobby)
        self.supervisor.spawn("sweep", self._sweep_forever())
        self.supervisor.spawn("loop lag", self._measure_lag())
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
        await self.lobby.close()
        await self.cluster.stop()
        await self.supervisor.close()
        self.bots.close()

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(self.settings.sweep_interval_s)
            try:
                await self.lobby.sweep()
            except Exception:
                log.exception("sweep failed; trying again at the next interval")

    async def _measure_lag(self) -> None:
        """How late the event loop wakes up (every 100 ms): what a command waits before
        it even starts; the last minute's samples feed ``/healthz``."""
        loop = asyncio.get_running_loop()
        while True:
            start = loop.time()
            await asyncio.sleep(0.1)
            self._lags.append((loop.time() - start - 0.1) * 1000)

    def loop_lag(self) -> dict[str, float]:
        lags = sorted(self._lags)
        if not lags:
            return {}
        return {"p50": round(lags[len(lags) // 2], 2),
                "p99": round(lags[min(len(lags) - 1, int(0.99 * len(lags)))], 2),
                "max": round(lags[-1], 2)}

    async def health(self) -> dict[str, Any]:
        """``/healthz``: storage really answering as *our* store (its identity checked),
        and what this process holds."""
        if self.storage is not None:
            ok = await self.storage.check()
            store_status: dict[str, Any] = self.storage.status()
        else:
            ok, store_status = await self.store.ping(), {}
        return {
            "status": "ok" if ok else "storage_unavailable",
            "storage": ok,
            "store": store_status,
            "tables": len(self.lobby.tables),
            "stalled_tables": self.lobby.stalled(),
            "owned_tables": self.lobby.owned(),
            "loop_lag_ms": self.loop_lag(),
            "cluster": self.cluster.status(),
            "connections": len(self.clients),
            "sockets": self.count.total,
            "tasks": self.supervisor.running,
            "task_failures": self.supervisor.failures,
            "bot_failures": self.bots.failures,
            "uptime_s": round(time.time() - self.started_at, 1),
        }
