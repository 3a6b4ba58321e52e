"""Connecting to Redis with failure behaviour suited to a live game.

redis-py's defaults (5 s timeouts, exponential retries up to seconds) would freeze a table
for ~10 s when Redis goes away. A player should instead get "storage unavailable" within a
couple of seconds, and the server's health check should flip just as fast.

Two more things a busy server needs from its client:

* **A pool that waits.** redis-py's default pool *raises* when more commands are in flight
  than it has connections (100), which at 400 tables after a GC pause, or when 800 clients
  disconnect at once, told players "storage unavailable" while Redis was fine. Clients
  made here use a ``BlockingConnectionPool``: a command waits up to ``pool_timeout_s`` for
  a free connection, and only then fails as ``StorageUnavailable``.
* **Every connection checks whose store it reached** (``IdentityGuard``, used by
  ``runtime.py``): before dialling, the guard may veto the address (the embedded store
  that listened there has died); after AUTH, the connection reads the store-identity key
  and compares it with the identity the server started with. A store that does not hold
  it is never sent a command: the connection is dropped and the caller gets
  ``StorageUnavailable``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlparse, urlunparse

import redis.asyncio as aioredis
from redis.asyncio.connection import (
    BlockingConnectionPool,
    Connection,
    SSLConnection,
    UnixDomainSocketConnection,
    parse_url,
)
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

from server.store.errors import StorageUnavailable

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 1.0
SOCKET_TIMEOUT_S = 2.0
HEALTH_CHECK_INTERVAL_S = 10
RETRIES = 1
MAX_CONNECTIONS = 256
POOL_TIMEOUT_S = 2.0


class StoreIdentityChanged(RedisConnectionError):
    """A new connection reached a store that does not hold our identity (or may not be
    dialled at all). A redis ``ConnectionError``, so the pool drops the connection and
    ``unavailable_on_error`` turns it into ``StorageUnavailable``; never seen by callers."""


class IdentityGuard:
    """What every new connection of one client must find before it is used.

    ``expected`` is the store identity the server started with (``identity.py``), kept
    under ``key``. ``may_dial`` (optional) is asked before each TCP connect: the embedded
    store's runtime answers "no" once the process that listened on that port is gone, so
    a dead store's port, which anyone may have taken, is never dialled again.

    ``ok`` is the outcome of the last check (None before the first). A mismatch is
    logged once at CRITICAL, not once per connection attempt; a later match is logged
    too, so the log shows when the right store came back.
    """

    def __init__(
        self,
        key: str,
        expected: str,
        where: str,
        may_dial: Callable[[], bool] | None = None,
    ) -> None:
        self.key = key
        self.expected = expected
        self.where = where
        self._may_dial = may_dial
        self.ok: bool | None = None
        self.mismatches = 0

    def before_dial(self) -> None:
        if self._may_dial is not None and not self._may_dial():
            raise StoreIdentityChanged(
                f"{self.where} is no longer our store's address; not dialling it"
            )

    async def handshake(self, conn: Connection) -> None:
        """redis-py's ``redis_connect_func``: AUTH (and the rest of redis-py's own
        handshake), then the identity check, before the pool hands the connection out."""
        await conn.on_connect()
        await conn.send_command("GET", self.key, check_health=False)
        raw = await conn.read_response()
        found = raw.decode("ascii", "replace") if isinstance(raw, bytes) else raw
        if found != self.expected:
            self.mismatches += 1
            if self.ok is not False:
                log.critical(
                    "store identity mismatch at %s: expected %s, found %s; refusing to use "
                    "this store (every storage call fails until ours is back)",
                    self.where, self.expected, found if found is not None else "none",
                )
            self.ok = False
            raise StoreIdentityChanged(f"store at {self.where} does not hold our identity")
        if self.ok is False:
            log.warning("store identity at %s verified again; storage resumes", self.where)
        self.ok = True


class _Guarded:
    """Mixin: a connection that asks its guard before dialling and checks after AUTH."""

    _guard: IdentityGuard

    def __init__(self, *args: Any, guard: IdentityGuard, **kwargs: Any) -> None:
        kwargs["redis_connect_func"] = guard.handshake
        super().__init__(*args, **kwargs)
        self._guard = guard

    async def _connect(self) -> None:
        self._guard.before_dial()
        await super()._connect()  # type: ignore[misc]


class GuardedConnection(_Guarded, Connection):
    pass


class GuardedSSLConnection(_Guarded, SSLConnection):
    pass


class GuardedUnixConnection(_Guarded, UnixDomainSocketConnection):
    pass


_GUARDED: dict[type, type] = {
    Connection: GuardedConnection,
    SSLConnection: GuardedSSLConnection,
    UnixDomainSocketConnection: GuardedUnixConnection,
}


def make_client(
    url: str,
    *,
    password: str | None = None,
    guard: IdentityGuard | None = None,
    max_connections: int = MAX_CONNECTIONS,
    pool_timeout_s: float = POOL_TIMEOUT_S,
    socket_connect_timeout: float = CONNECT_TIMEOUT_S,
    socket_timeout: float = SOCKET_TIMEOUT_S,
    retries: int = RETRIES,
    health_check_interval: int = HEALTH_CHECK_INTERVAL_S,
) -> aioredis.Redis:
    """A client for ``url`` (no I/O yet) with the fail-fast policy and a waiting pool.

    * one retry of a connection error, after ~20-200 ms: enough to ride over a pooled
      connection that went stale across a Redis restart, not enough to stall a table;
    * timeouts (connect 1 s, reply 2 s) are not retried, so an unresponsive server is
      reported in about ``socket_timeout``;
    * ``health_check_interval``: a connection idle that long is PINGed before reuse;
    * ``decode_responses=False``: documents and records are bytes (msgpack);
    * at most ``max_connections`` connections; a command finding none free waits up to
      ``pool_timeout_s``, then fails (a redis ``ConnectionError``: "No connection
      available."), which the store reports as ``StorageUnavailable``;
    * ``password``: given separately, so it never has to be part of a URL that is logged.
    """
    if max_connections < 1:
        raise ValueError("max_connections must be at least 1")
    options: dict[str, Any] = dict(parse_url(url))
    base = options.pop("connection_class", Connection)
    if password is not None:
        options["password"] = password
    if guard is not None:
        options["connection_class"] = _GUARDED[base]
        options["guard"] = guard
    else:
        options["connection_class"] = base
    pool = BlockingConnectionPool(
        max_connections=max_connections,
        timeout=pool_timeout_s,
        decode_responses=False,
        socket_connect_timeout=socket_connect_timeout,
        socket_timeout=socket_timeout,
        # Retry only connection errors (a stale pooled socket after a restart, a
        # BusyLoadingError), never timeouts: a server that did not answer within
        # socket_timeout will not answer a retry any faster, and the retry would double
        # the time a player waits to hear "storage unavailable".
        retry=Retry(
            ExponentialBackoff(cap=0.2, base=0.02),
            retries,
            supported_errors=(RedisConnectionError,),
        ),
        retry_on_error=[RedisConnectionError],
        health_check_interval=health_check_interval,
        **options,
    )
    return aioredis.Redis.from_pool(pool)


async def connect(
    url: str,
    *,
    check: bool = True,
    password: str | None = None,
    socket_connect_timeout: float = CONNECT_TIMEOUT_S,
    socket_timeout: float = SOCKET_TIMEOUT_S,
    retries: int = RETRIES,
    health_check_interval: int = HEALTH_CHECK_INTERVAL_S,
    max_connections: int = MAX_CONNECTIONS,
    pool_timeout_s: float = POOL_TIMEOUT_S,
) -> aioredis.Redis:
    """A client for ``url`` that reports an outage in seconds instead of hanging.

    The policy is ``make_client``'s. With ``check`` (the default) the server is PINGed
    once so a wrong URL fails at startup with ``StorageUnavailable`` rather than on the
    first player's move. No identity check: the server itself uses ``open_storage``.
    """
    client = make_client(
        url,
        password=password,
        max_connections=max_connections,
        pool_timeout_s=pool_timeout_s,
        socket_connect_timeout=socket_connect_timeout,
        socket_timeout=socket_timeout,
        retries=retries,
        health_check_interval=health_check_interval,
    )
    if check:
        try:
            with unavailable_on_error(f"connect to {redact_url(url)}"):
                await client.ping()
        except StorageUnavailable:
            await client.aclose()
            raise
    return client


def redact_url(url: str) -> str:
    """``url`` without its password (in the userinfo or a ``password=`` query), for logs."""
    try:
        parsed = urlparse(url)
        pairs = parse_qsl(parsed.query, keep_blank_values=True)
        secret_query = any(k.lower() == "password" for k, _ in pairs)
        if parsed.password is None and not secret_query:
            return url  # unchanged (urlunparse would turn "unix:///x" into "unix:/x")
        netloc = parsed.netloc
        if parsed.password is not None:
            userinfo, _, hostport = netloc.rpartition("@")
            user = userinfo.split(":", 1)[0]
            netloc = f"{user}:***@{hostport}"
        query = urlencode([(k, "***" if k.lower() == "password" else v) for k, v in pairs],
                          safe="*")
        return urlunparse(parsed._replace(netloc=netloc, query=query))
    except ValueError:
        return "<unparseable redis url>"


@contextmanager
def unavailable_on_error(what: str) -> Iterator[None]:
    """Turn any Redis/socket failure inside the block into ``StorageUnavailable``.

    All ``RedisError``s are mapped, not only connection ones: OOM, read-only replica,
    cluster-down and loading all mean "cannot persist right now" to the caller, and the
    shell must never see a client-library exception. The original stays as ``__cause__``
    for the log.
    """
    try:
        yield
    except (RedisError, OSError) as exc:  # OSError covers the builtin TimeoutError
        raise StorageUnavailable(f"{what}: {type(exc).__name__}: {exc}") from exc
