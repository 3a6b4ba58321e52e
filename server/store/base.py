"""``StoreBase``: the Redis client every part of the store shares, and the proof that the
store is down before anyone hears so (``_proven``, ``answers_within``).

The store's parts (``tables.py``, ``sessions.py``, ``records.py``, ``leases.py``) each
derive from it and name the Lua scripts they use in ``SCRIPTS``; ``Store`` (``store.py``)
puts them together.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import itertools
import logging
import os
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, ClassVar, TypeVar

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.commands.core import AsyncScript
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError
from redis.exceptions import TimeoutError as RedisTimeoutError

from server.store.client import unavailable_on_error
from server.store.errors import StorageUnavailable
from server.store.keys import Keys
from server.store.line import Line

T = TypeVar("T")
#: What a call that got no answer from the store raises: a timeout (ours or the socket's),
#: a dropped or refused connection, or a pool with no free connection.
NO_ANSWER = (TimeoutError, OSError, RedisConnectionError, RedisTimeoutError)
log = logging.getLogger(__name__)

PROBE_S = 0.5  # how long a store that looked dead has to answer a PING before it is called down
PROBE_TICK_S = 0.01  # the probe's watcher wakes this often to see whether our loop stalled
PROBE_LATE_S = 0.02  # a wake-up this late is our loop's stall, given back to the probe
PROBE_MAX_STALL_S = 5.0  # at most this much stalled time is given back
PROBE_RETRY_S = 0.05  # pause between the probe's PINGs


def _text(raw: bytes | str) -> str:
    """A Redis reply as text (this client answers bytes; redis-py's types allow str too)."""
    return raw.decode() if isinstance(raw, bytes) else raw


def _blob(raw: bytes | str) -> bytes:
    """A Redis reply as bytes (see :func:`_text`)."""
    return raw if isinstance(raw, bytes) else raw.encode()


#: This process's nonces: a random start, then a count (issue 32: ``os.urandom`` per
#: commit was a system call each, 0.8% of a process at full pace).
_NONCE_START = os.urandom(8)
_nonces = itertools.count()


def _new_nonce_start() -> None:
    """A forked process draws its own start: with its parent's, both would count the same
    nonces, and a commit could be taken for another's earlier success."""
    global _NONCE_START, _nonces
    _NONCE_START, _nonces = os.urandom(8), itertools.count()


os.register_at_fork(after_in_child=_new_nonce_start)


def _nonce() -> bytes:
    """A per-call id that lets a retried script recognise its own earlier success (unique
    per process and call; another process's start is another random 8 bytes)."""
    return _NONCE_START + next(_nonces).to_bytes(8, "big")



class StoreBase:
    """One ``redis.asyncio.Redis`` client, its key layout, and the Lua scripts registered on
    it: each part of the store lists its own in ``SCRIPTS`` (attribute name -> source)."""

    SCRIPTS: ClassVar[Mapping[str, str]] = {}

    def __init__(self, redis: aioredis.Redis, prefix: str = "aluette",
                 sharded: bool = True) -> None:
        self.redis = redis
        #: On a Redis Cluster events go out with SPUBLISH (sharded pub/sub, issue 11).
        self.sharded = sharded   # (SPUBLISH works on a single Redis >= 7 too)
        self.keys = Keys(prefix)
        #: The commits' line (server/store/line.py), on one node; a Cluster routes each
        #: call to its slot's node, so there the calls go through redis-py.
        self._line = Line(redis) if self.one_node else None
        #: Told of every public call: its method's name, seconds, and whether it succeeded
        #: (``/metrics``: server/metrics.py; ``time_public_calls`` times them). None:
        #: nobody listens.
        self.observe: Callable[[str, float, bool], None] | None = None
        #: The scripts of the stores kept beside this one (:meth:`script`), by source.
        self._beside: dict[str, AsyncScript] = {}
        for part in reversed(type(self).__mro__):
            for name, source in vars(part).get("SCRIPTS", {}).items():
                setattr(self, name, redis.register_script(source))

    async def run_script(self, script: AsyncScript, keys: Sequence[str],
                         args: Sequence[bytes | str | int | float]) -> Any:
        """``script`` on the commits' line (the calls made for every command: issue 32), or
        through redis-py on a Cluster; a store that does not know the script yet is sent
        it through redis-py. Raises redis-py's errors (the caller maps them)."""
        line = self._line
        if line is None:
            return await script(keys=keys, args=args)
        try:
            return await line.call("EVALSHA", script.sha, len(keys), *keys, *args)
        except NoScriptError:
            return await script(keys=keys, args=args)   # loads it, then runs it

    def script(self, source: str) -> AsyncScript:
        """``source`` registered on the current client, once: for the stores kept beside
        this one over its client (the players' history, accounts and queue), whose scripts
        are not among its parts' ``SCRIPTS``; :meth:`rebind` forgets them with the old
        client."""
        script = self._beside.get(source)
        if script is None:
            script = self._beside[source] = self.redis.register_script(source)
        return script

    async def run_command(self, *args: bytes | str | int | float) -> Any:
        """One plain command on the commits' line (one node), or through redis-py on a
        Cluster: for the calls of a command's path, which redis-py's pool and retry wrapper
        cost more than the store does (issue 32). The reply is as hiredis reads it
        (bytes, ints, lists), not converted by redis-py's response callbacks."""
        line = self._line
        if line is None:
            return await self.redis.execute_command(*args)  # type: ignore[no-untyped-call, unused-ignore]
        return await line.call(*args)

    @property
    def one_node(self) -> bool:
        """The store is one Redis (or Valkey), not a Cluster: a script may then reach keys
        of several hash tags (the commit numbers its lobby change itself, issue 32)."""
        return not isinstance(self.redis, RedisCluster)

    @property
    def prefix(self) -> str:
        return self.keys.prefix

    def rebind(self, redis: aioredis.Redis) -> None:
        """Use ``redis`` from now on (the embedded store was restarted on a new port).

        Every registered Lua script is registered again on the new client, found by type
        rather than by name so that scripts added later are never left on the old client.
        The caller closes the old client afterwards; calls in flight on it fail as
        ``StorageUnavailable``, as they would in any outage.
        """
        self.redis = redis
        self._line = Line(redis) if self.one_node else None
        self._beside.clear()
        for name, value in list(vars(self).items()):
            if isinstance(value, AsyncScript):
                setattr(self, name, redis.register_script(value.script))

    async def answers_within(self, seconds: float) -> bool:
        """True if Redis answers a PING within ``seconds`` of *our* time; never raises.

        Time our own event loop spent blocked does not count against the store: its answer
        may have been in the socket all along, unread, and a PING whose reply timeout ran
        out during the stall proves nothing. A watcher measures how late the loop wakes;
        the probe gets that time back (up to ``PROBE_MAX_STALL_S``) and PINGs again while
        time is left. A store that is really frozen or gone is still reported after
        ``seconds`` of a loop that was free to hear it.
        """
        loop = asyncio.get_running_loop()
        stalled = 0.0

        async def watch() -> None:
            nonlocal stalled
            while True:
                before = loop.time()
                await asyncio.sleep(PROBE_TICK_S)
                late = loop.time() - before - PROBE_TICK_S
                if late > PROBE_LATE_S:
                    stalled += late

        watcher = asyncio.ensure_future(watch())
        start = loop.time()
        try:
            while True:
                remaining = start + seconds + min(stalled, PROBE_MAX_STALL_S) - loop.time()
                if remaining <= 0:
                    return False
                try:
                    if await asyncio.wait_for(self.ping(), remaining):
                        return True
                except TimeoutError:
                    pass
                # A pause before the next PING, which also lets the watcher count a stall
                # that has just ended.
                await asyncio.sleep(PROBE_RETRY_S)
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher

    async def _proven(self, what: str, call: Callable[[], Awaitable[T]]) -> T:
        """Run an idempotent store call; report ``StorageUnavailable`` only if the store
        proves it is down.

        A timeout can be our own fault: an event loop that stalled past the reply timeout
        cancels a call whose reply is already in the socket (and a pool that waited for a
        free connection through the same stall gives up the same way). So a failed call is
        sent once more if the store answers a PING (:meth:`answers_within`, which does not
        count our own stalls against it). Only for calls that are safe to repeat: reads,
        and writes that recognise a second delivery (the commit's nonce).
        """
        try:
            with unavailable_on_error(what):
                return await call()
        except StorageUnavailable as exc:
            # Only a call that got no answer can have been cut off by us; an answer that
            # was an error (out of memory, read-only, a script error) is the store's.
            if not isinstance(exc.__cause__, NO_ANSWER):
                raise
            if not await self.answers_within(PROBE_S):
                log.warning("storage unavailable: %s, and no answer to a PING", exc)
                raise
        try:
            with unavailable_on_error(f"{what} (second try)"):
                return await call()
        except StorageUnavailable as exc:
            log.warning("storage unavailable: %s, although it answered a PING", exc)
            raise

    async def ping(self) -> bool:
        """True if Redis answers PING; for health checks, so it never raises."""
        try:
            return bool(await self.redis.ping())
        except Exception:
            return False


#: Calls not timed: health probes (their time is not the store's work).
_UNTIMED = frozenset({"ping", "answers_within", "rebind",
                      "run_script"})   # timed as the call of the part that runs it


def _timed(name: str, method: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    """``method``, reporting its time and outcome to its object's ``observe`` (``/metrics``:
    one clock read on each side of a network round trip; nothing when nobody observes)."""
    @functools.wraps(method)
    async def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        observe = self.observe
        if observe is None:
            return await method(self, *args, **kwargs)
        start = time.perf_counter()
        ok = True      # a refused commit (VersionConflict) is an answer, not a failure
        try:
            return await method(self, *args, **kwargs)
        except StorageUnavailable:
            ok = False
            raise
        finally:
            observe(name, time.perf_counter() - start, ok)
    return call


def time_public_calls(cls: type) -> None:
    """Time every public call of every part of ``cls`` once, here rather than in each part
    (the wrapper lives beside ``_proven``, the other thing every store call passes
    through, so following a call leads to one file, not two). ``cls`` has an ``observe``
    like ``StoreBase``'s: the ``Store``, and the players' stores kept beside it."""
    for name in dir(cls):
        method = getattr(cls, name)
        if (not name.startswith("_") and name not in _UNTIMED
                and inspect.iscoroutinefunction(method)):
            setattr(cls, name, _timed(name, method))
