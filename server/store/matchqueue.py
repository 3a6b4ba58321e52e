"""The play-now queue in the store, shared by every server process (issue 27).

Keys, in one hash slot (``{mm}``):

==========================  =======  =====================================================
``p:{mm}:reqs``             hash     player id -> request (msgpack, the matchmaker's)
``p:{mm}:offline``          hash     player id -> when their last connection closed
``p:{mm}:lease``            string   the process that runs the matchmaker (expires)
``p:{mm}:seated``           channel  ``[player, table, seat, rated]`` for each seat made
``p:{mm}:taking``           hash     player id -> until when (ms) the matchmaker seats them
``p:{mm}:joining``          hash     player id -> until when (ms) a seat elsewhere is taken
==========================  =======  =====================================================

Taking four requests for a table is one Lua script that removes them only if each is
still exactly as the matchmaker read it: a request withdrawn, replaced or taken by another
matchmaker meanwhile (a lease that changed hands) fails the whole take, so nobody is
seated twice.

A seat taken by hand (``create_table``, ``join``, ``rematch``) on any process races the
matchmaker: both sides mark the player in the store first, each in one script that looks
at the other's mark. A command that may seat a player ``hold``s them (refused while the
matchmaker is ``taking`` them); a take skips a player being seated elsewhere (``joining``)
and marks the four it takes. Whichever script runs first wins; the other side sees its
mark. The marks end when their work ends (``release``, ``taken``), or by their deadline
if a process died meanwhile; both hashes expire when idle.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .base import _blob, _text, time_public_calls
from .client import unavailable_on_error
from .store import Store

#: Milliseconds since the epoch, by the store's clock (every process reads the same one).
_NOW = "local t = redis.call('TIME'); local now = t[1] * 1000 + math.floor(t[2] / 1000)\n"

# KEYS: requests, taking, joining. ARGV: mark ms, then player, request, player, request...
# Removes them all if each is still that request and nobody is seating them elsewhere, and
# marks them as being seated by the matchmaker; 1 if it did, 0 if it changed nothing.
# ARGV[1] = 0 removes without marking (a request dropped, never seated).
TAKE = _NOW + """
for i = 2, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[i]) ~= ARGV[i + 1] then return 0 end
  if tonumber(redis.call('HGET', KEYS[3], ARGV[i]) or '0') > now then return 0 end
end
local mark = tonumber(ARGV[1])
for i = 2, #ARGV, 2 do
  redis.call('HDEL', KEYS[1], ARGV[i])
  if mark > 0 then redis.call('HSET', KEYS[2], ARGV[i], now + mark) end
end
if mark > 0 then redis.call('PEXPIRE', KEYS[2], 2 * mark) end
return 1
"""

# KEYS: taking, joining. ARGV: player, mark ms. Marks the player as taking a seat by hand,
# unless the matchmaker is seating them now: 1 if marked, 0 if refused.
HOLD = _NOW + """
if tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0') > now then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], now + tonumber(ARGV[2]))
redis.call('PEXPIRE', KEYS[2], 2 * tonumber(ARGV[2]))
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

# KEYS: joining, requests, offline. ARGV: player, '1' if seated. The seat by hand is done:
# the mark goes, and the request too if it seated them (one script: atomic, and on the
# commits' line with the rest of a join, issue 32).
RELEASE_SEAT = """
redis.call('HDEL', KEYS[1], ARGV[1])
if ARGV[2] == '1' then
  redis.call('HDEL', KEYS[2], ARGV[1])
  redis.call('HDEL', KEYS[3], ARGV[1])
end
return 0
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
        self.taking = f"{base}:taking"
        self.joining = f"{base}:joining"

    @property
    def observe(self) -> Callable[[str, float, bool], None] | None:
        """The store's observer (``/metrics``): these calls are the store's work too."""
        return self.store.observe

    async def _run(self, text: str, keys: list[str], args: list[object]) -> int:
        return int(await self.store.run_script(self.store.script(text), keys,
                                               args))  # type: ignore[arg-type]

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

    async def take(self, taken: Sequence[tuple[str, bytes]], mark_s: float = 0.0) -> bool:
        """Remove these requests, all or none, if each is still exactly as read and none of
        these players is taking a seat by hand; ``mark_s``: mark them as being seated by the
        matchmaker for that long (until :meth:`taken`)."""
        args: list[object] = [int(mark_s * 1000)]
        for player, request in taken:
            args += [player, request]
        with unavailable_on_error("take from the queue"):
            return bool(await self._run(TAKE, [self.reqs, self.taking, self.joining],
                                        args))

    async def taken(self, players: Sequence[str]) -> None:
        """The matchmaker is done with these players (seated, or put back)."""
        with unavailable_on_error("matchmaker done"):
            await self.store.redis.hdel(self.taking, *players)

    async def hold(self, player: str, mark_s: float) -> bool:
        """Mark ``player`` as taking a seat by hand for at most ``mark_s``; False (and no
        mark) while the matchmaker is seating them."""
        with unavailable_on_error("hold a seat"):
            return bool(await self._run(HOLD, [self.taking, self.joining],
                                        [player, int(mark_s * 1000)]))

    async def release(self, player: str, seated: bool) -> None:
        """The seat by hand is done: the mark goes, and the request too if it seated them."""
        with unavailable_on_error("release a seat"):
            await self._run(RELEASE_SEAT,
                            [self.joining, self.reqs, self.offline],
                            [player, "1" if seated else ""])

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
            return bool(await self._run(DROP_OFFLINE, [self.reqs, self.offline],
                                        [player, repr(since)]))

    # -- the matchmaker's lease and its news ------------------------------------------

    async def hold_lease(self, process: str, ttl_s: float) -> bool:
        with unavailable_on_error("matchmaker lease"):
            return bool(await self._run(LEASE, [self.lease],
                                        [process, int(ttl_s * 1000)]))

    async def release_lease(self, process: str) -> None:
        with unavailable_on_error("matchmaker release"):
            await self._run(RELEASE, [self.lease], [process])

    async def announce(self, message: bytes) -> None:
        with unavailable_on_error("announce a seat"):
            await self.store.redis.publish(self.channel, message)


time_public_calls(QueueStore)
