"""The play-now queue in the store, shared by every server process (issue 27).

Keys, in one hash slot (``{mm}``):

==========================  =======  =====================================================
``p:{mm}:reqs``             hash     player id -> request (msgpack, the matchmaker's)
``p:{mm}:offline``          hash     player id -> when their last connection closed
``p:{mm}:lease``            string   the process that runs the matchmaker (expires)
``p:{mm}:seated``           channel  ``[player, table, seat, rated]`` for each seat made
==========================  =======  =====================================================

Taking four requests for a table is one Lua script that removes them only if each is
still exactly as the matchmaker read it: a request withdrawn, replaced or taken by another
matchmaker meanwhile (a lease that changed hands) fails the whole take, so nobody is
seated twice.
"""

from __future__ import annotations

from collections.abc import Sequence

from .base import _blob, _text
from .client import unavailable_on_error
from .store import Store

# KEYS: requests hash. ARGV: player, request, player, request... Removes them all if each
# is still that request; 1 if it did, 0 if it changed nothing.
TAKE = """
for i = 1, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[i]) ~= ARGV[i + 1] then return 0 end
end
for i = 1, #ARGV, 2 do redis.call('HDEL', KEYS[1], ARGV[i]) end
return 1
"""

# KEYS: requests, offline. ARGV: player, when it went offline (as read). Drops the
# request of a player still offline since then.
DROP_OFFLINE = """
if redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[2], ARGV[1])
return redis.call('HDEL', KEYS[1], ARGV[1])
"""

# KEYS: lease. ARGV: process, ttl ms. Takes the lease if free or ours (and renews it).
LEASE = """
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
"""

RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class QueueStore:
    def __init__(self, store: Store) -> None:
        self.store = store
        base = f"{store.prefix}:{{mm}}"
        self.reqs = f"{base}:reqs"
        self.offline = f"{base}:offline"
        self.lease = f"{base}:lease"
        self.channel = f"{base}:seated"
        self._scripts: dict[str, object] = {}

    async def _run(self, name: str, text: str, keys: list[str], args: list[object]) -> int:
        redis = self.store.redis
        if self._scripts.get("client") is not redis:      # rebound: register again
            self._scripts = {"client": redis}
        script = self._scripts.get(name)
        if script is None:
            script = self._scripts[name] = redis.register_script(text)
        return int(await script(keys=keys, args=args))  # type: ignore[operator]

    async def put(self, player: str, request: bytes) -> int:
        """Queue (or replace) ``player``'s request; returns how many wait now."""
        with unavailable_on_error("queue"):
            async with self.store.redis.pipeline(transaction=True) as pipe:
                pipe.hset(self.reqs, player, request)
                pipe.hdel(self.offline, player)
                pipe.hlen(self.reqs)
                _, _, waiting = await pipe.execute()
        return int(waiting)

    async def remove(self, player: str) -> bool:
        with unavailable_on_error("unqueue"):
            async with self.store.redis.pipeline(transaction=True) as pipe:
                pipe.hdel(self.reqs, player)
                pipe.hdel(self.offline, player)
                removed, _ = await pipe.execute()
        return bool(removed)

    async def all(self) -> dict[str, bytes]:
        with unavailable_on_error("read the queue"):
            raw = await self.store.redis.hgetall(self.reqs)
        return {_text(k): _blob(v) for k, v in raw.items()}

    async def waiting(self) -> int:
        with unavailable_on_error("count the queue"):
            return int(await self.store.redis.hlen(self.reqs))

    async def take(self, taken: Sequence[tuple[str, bytes]]) -> bool:
        """Remove these requests, all or none, if each is still exactly as read."""
        args: list[object] = []
        for player, request in taken:
            args += [player, request]
        with unavailable_on_error("take from the queue"):
            return bool(await self._run("take", TAKE, [self.reqs], args))

    # -- players who went away while queued -----------------------------------------

    async def went_offline(self, player: str, now: float) -> None:
        with unavailable_on_error("note offline"):
            if await self.store.redis.hexists(self.reqs, player):
                await self.store.redis.hset(self.offline, player, repr(now))

    async def came_back(self, player: str) -> None:
        with unavailable_on_error("note online"):
            await self.store.redis.hdel(self.offline, player)

    async def offline_since(self) -> dict[str, float]:
        with unavailable_on_error("read offline"):
            raw = await self.store.redis.hgetall(self.offline)
        return {_text(k): float(_text(v)) for k, v in raw.items()}

    async def drop_offline(self, player: str, since: float) -> bool:
        with unavailable_on_error("drop offline"):
            return bool(await self._run("drop", DROP_OFFLINE, [self.reqs, self.offline],
                                        [player, repr(since)]))

    # -- the matchmaker's lease and its news ------------------------------------------

    async def hold_lease(self, process: str, ttl_s: float) -> bool:
        with unavailable_on_error("matchmaker lease"):
            return bool(await self._run("lease", LEASE, [self.lease],
                                        [process, int(ttl_s * 1000)]))

    async def release_lease(self, process: str) -> None:
        with unavailable_on_error("matchmaker release"):
            await self._run("release", RELEASE, [self.lease], [process])

    async def announce(self, message: bytes) -> None:
        with unavailable_on_error("announce a seat"):
            await self.store.redis.publish(self.channel, message)
