"""Connecting to Redis with failure behaviour suited to a live game.

redis-py's defaults (5 s timeouts, exponential retries up to seconds) would freeze a table
for ~10 s when Redis goes away. A player should instead get "storage unavailable" within a
couple of seconds, and the server's health check should flip just as fast.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

from server.store.errors import StorageUnavailable

CONNECT_TIMEOUT_S = 1.0
SOCKET_TIMEOUT_S = 2.0
HEALTH_CHECK_INTERVAL_S = 10
RETRIES = 1


async def connect(
    url: str,
    *,
    check: bool = True,
    socket_connect_timeout: float = CONNECT_TIMEOUT_S,
    socket_timeout: float = SOCKET_TIMEOUT_S,
    retries: int = RETRIES,
    health_check_interval: int = HEALTH_CHECK_INTERVAL_S,
) -> aioredis.Redis:
    """A client for ``url`` that reports an outage in seconds instead of hanging.

    * one retry of a connection error, after ~20-200 ms: enough to ride over a pooled
      connection that went stale across a Redis restart, not enough to stall a table;
    * timeouts (connect 1 s, reply 2 s) are not retried, so an unresponsive server is
      reported in about ``socket_timeout``;
    * ``health_check_interval``: a connection idle that long is PINGed before reuse;
    * ``decode_responses=False``: documents and records are bytes (msgpack).

    With ``check`` (the default) the server is PINGed once so a wrong URL fails at
    startup with ``StorageUnavailable`` rather than on the first player's move.
    """
    client = aioredis.from_url(
        url,
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
    )
    if check:
        try:
            with unavailable_on_error(f"connect to {url}"):
                await client.ping()
        except StorageUnavailable:
            await client.aclose()
            raise
    return client


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
