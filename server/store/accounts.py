"""Accounts in the store: names, password hashes, the sessions of each account, and the
counters that slow down password guessing (issue 27).

Keys, with prefix ``p`` (every account key shares the hash tag ``{accounts}``, so that the
scripts below may read and write them together on a Redis Cluster; accounts are small):

=====================================  ======  =============================================
``p:{accounts}:a:<kd>``                hash    ``key``, ``name`` (display), ``skeleton``,
                                               ``hash`` (Argon2id, PHC string), ``player``,
                                               ``created``; kept for good
``p:{accounts}:skeletons``             hash    sha256(skeleton) -> account key: confusable
                                               names are one name (``server/accounts``)
``p:{accounts}:players``               hash    player id -> account key (one account per
                                               player id)
``p:{accounts}:s:<kd>``                set     the account's session ids (a session per
                                               device), to revoke them all; expires with
                                               them, renewed at each login and hello
``p:{accounts}:fail:a:<kd>``           hash    login attempts on the account: ``n``,
                                               ``until`` (ms): expires ``ttl`` after the last
``p:{accounts}:fail:ip:<ad>``          hash    the same per address (its digest, never the
                                               address itself)
=====================================  ======  =============================================

``<kd>`` is the first 32 hex digits of sha256(account key): keys are Unicode, key names
stay ASCII. An account's sessions are ordinary sessions (``p:{pl:<sid>}:session``) with two
more fields, ``player`` (the account's player id, when the session id is not it) and
``account`` (the key).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from typing import NamedTuple

from server.store.base import time_public_calls
from server.store.client import unavailable_on_error
from server.store.keys import check_id, check_token_hash
from server.store.store import Store

# KEYS: account hash, skeleton index, player index. ARGV: skeleton digest, key, name,
# skeleton, password hash, player, created (unix s).
# Returns 'ok', or why not: 'taken' (the key), 'confusable' (the skeleton), 'player' (this
# player id already has an account).
REGISTER = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 'taken' end
local owner = redis.call('HGET', KEYS[2], ARGV[1])
if owner and owner ~= ARGV[2] then return 'confusable' end
if redis.call('HEXISTS', KEYS[3], ARGV[6]) == 1 then return 'player' end
redis.call('HSET', KEYS[1], 'key', ARGV[2], 'name', ARGV[3], 'skeleton', ARGV[4],
           'hash', ARGV[5], 'player', ARGV[6], 'created', ARGV[7])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[3], ARGV[6], ARGV[2])
return 'ok'
"""

# KEYS: attempt counters (the account's, the address's). ARGV: now (ms), ttl (s), then per
# key: free attempts, first wait (ms), longest wait (ms).
# An attempt is counted before the password is checked, so attempts sent at once count
# too. A counter past its free attempts sets a wait that doubles with each attempt.
# Returns 0 (go on) or the milliseconds to wait (nothing counted).
ATTEMPT = """
local now = tonumber(ARGV[1])
local wait = 0
for i, key in ipairs(KEYS) do
  local until_ = tonumber(redis.call('HGET', key, 'until') or '0')
  if until_ - now > wait then wait = until_ - now end
end
if wait > 0 then return wait end
for i, key in ipairs(KEYS) do
  local free = tonumber(ARGV[3 * i])
  local base = tonumber(ARGV[3 * i + 1])
  local cap = tonumber(ARGV[3 * i + 2])
  local n = redis.call('HINCRBY', key, 'n', 1)
  if n >= free then
    redis.call('HSET', key, 'until', now + math.min(cap, base * 2 ^ (n - free)))
  end
  redis.call('EXPIRE', key, tonumber(ARGV[2]))
end
return 0
"""

# KEYS: the account's counter, the address's. A login that succeeded: the account's
# attempts are forgotten, the address's count one less (a success is not a guess).
SUCCEEDED = """
redis.call('DEL', KEYS[1])
if tonumber(redis.call('HGET', KEYS[2], 'n') or '0') > 0 then
  redis.call('HINCRBY', KEYS[2], 'n', -1)
end
return 1
"""

# KEYS: account hash. ARGV: the hash the caller checked, the new one. A compare-and-set,
# so a password changed meanwhile (on another device) is not overwritten blindly.
SET_HASH = """
if redis.call('HGET', KEYS[1], 'hash') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'hash', ARGV[2])
return 1
"""


def _digest(text: str, n: int = 32) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:n]


class Account(NamedTuple):
    key: str
    name: str
    player: str
    hash: str


class SessionOwner(NamedTuple):
    """Whom a session speaks for: its player id and account key (None: a guest)."""

    player: str
    account: str | None


class Limit(NamedTuple):
    """Free attempts, then a first wait that doubles, up to the longest."""

    free: int
    first_ms: int
    longest_ms: int


def _text(raw: bytes | str | None) -> str | None:
    if raw is None:
        return None
    return raw.decode() if isinstance(raw, bytes) else raw


class AccountStore:
    """The accounts' persistence over the server's :class:`Store` (its client, its prefix;
    the scripts follow the store to a new client when the embedded store restarts)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        p = store.keys.prefix
        self._tag = f"{p}:{{accounts}}"

    # -- keys ------------------------------------------------------------------------


    @property
    def observe(self) -> Callable[[str, float, bool], None] | None:
        """The store's observer (``/metrics``): these calls are the store's work too."""
        return self.store.observe
    def account_key(self, key: str) -> str:
        return f"{self._tag}:a:{_digest(key)}"

    def sessions_key(self, key: str) -> str:
        return f"{self._tag}:s:{_digest(key)}"

    @property
    def skeletons_key(self) -> str:
        return f"{self._tag}:skeletons"

    @property
    def players_key(self) -> str:
        return f"{self._tag}:players"

    def fails_key(self, kind: str, subject: str) -> str:
        return f"{self._tag}:fail:{kind}:{_digest(subject)}"

    # -- accounts --------------------------------------------------------------------

    async def register(self, *, key: str, name: str, skeleton: str, password_hash: str,
                       player: str) -> str:
        """Create the account; ``'ok'`` or ``'taken'``, ``'confusable'``, ``'player'``."""
        check_id("player", player)
        script = self.store.script(REGISTER)
        with unavailable_on_error("register account"):
            reply = await script(
                keys=[self.account_key(key), self.skeletons_key, self.players_key],
                args=[_digest(skeleton, 64), key, name, skeleton, password_hash, player,
                      int(time.time())])
        return _text(reply) or "error"

    async def account(self, key: str) -> Account | None:
        raw = await self.store._proven(   # a read: safe to send twice
            "read account",
            lambda: self.store.redis.hmget(self.account_key(key), "name", "player", "hash"))
        name, player, hashed = (_text(v) for v in raw)
        if name is None or player is None or hashed is None:
            return None
        return Account(key=key, name=name, player=player, hash=hashed)

    async def accounts_of(self, players: list[str]) -> dict[str, str]:
        """The account key of each of these players that has one (for other code: ratings
        count only registered players, profiles are found by player id)."""
        if not players:
            return {}
        raw = await self.store._proven(
            "read players' accounts", lambda: self.store.redis.hmget(self.players_key, players))
        return {p: k for p, k in zip(players, (_text(v) for v in raw), strict=True)
                if k is not None}

    async def name_owner(self, key: str, skeleton: str) -> str | None:
        """The account key that owns this name or one confusable with it, if any."""
        async def read() -> list[bytes | str | None]:
            async with self.store.redis.pipeline(transaction=False) as pipe:
                pipe.exists(self.account_key(key))
                pipe.hget(self.skeletons_key, _digest(skeleton, 64))
                exists, owner = await pipe.execute()
            return [key if exists else None, owner]
        found, owner = await self.store._proven("read account name", read)
        return _text(found) or _text(owner)

    async def set_hash(self, key: str, old: str, new: str) -> bool:
        script = self.store.script(SET_HASH)
        with unavailable_on_error("set password"):
            return bool(await script(keys=[self.account_key(key)], args=[old, new]))

    # -- sessions ----------------------------------------------------------------------

    async def owner(self, session_id: str) -> SessionOwner:
        """Whom the session ``session_id`` speaks for (a guest's: itself, no account)."""
        key = self.store.keys.session(session_id)
        raw = await self.store._proven(
            "read session owner", lambda: self.store.redis.hmget(key, "player", "account"))
        player, account = (_text(v) for v in raw)
        return SessionOwner(player or session_id, account)

    async def adopt(self, session_id: str, account: str, name: str, ttl_s: int) -> None:
        """The guest session ``session_id`` now belongs to ``account`` (it registered):
        its player id stays, its name becomes the account's."""
        skey = self.store.keys.session(session_id)
        with unavailable_on_error("adopt session"):
            async with self.store.redis.pipeline(transaction=False) as pipe:
                pipe.hset(skey, mapping={"account": account, "name": name})
                pipe.sadd(self.sessions_key(account), session_id)
                pipe.expire(self.sessions_key(account), int(ttl_s) * 2)
                await pipe.execute()

    async def open_session(self, session_id: str, *, player: str, account: str, name: str,
                           token_hash: str, ttl_s: int) -> None:
        """A new session (a device's login) speaking for ``account``'s player."""
        check_token_hash(token_hash)
        skey = self.store.keys.session(check_id("session", session_id))
        with unavailable_on_error("open account session"):
            async with self.store.redis.pipeline(transaction=False) as pipe:
                pipe.hset(skey, mapping={"name": name, "current": token_hash, "player": player,
                                         "account": account, "created": int(time.time())})
                pipe.expire(skey, int(ttl_s))
                pipe.sadd(self.sessions_key(account), session_id)
                pipe.expire(self.sessions_key(account), int(ttl_s) * 2)
                await pipe.execute()

    async def keep_sessions(self, account: str, ttl_s: int) -> None:
        """An account session said hello: its account's list of sessions lives on."""
        with unavailable_on_error("renew account sessions"):
            await self.store.redis.expire(self.sessions_key(account), int(ttl_s) * 2)

    async def revoke(self, account: str, keep: str | None = None) -> list[str]:
        """Delete every session of ``account`` but ``keep``; returns the ids revoked."""
        skey = self.sessions_key(account)
        with unavailable_on_error("revoke account sessions"):
            raw = await self.store.redis.smembers(skey)
            ids = sorted(s for s in (_text(v) for v in raw) if s and s != keep)
            if ids:
                async with self.store.redis.pipeline(transaction=False) as pipe:
                    for sid in ids:
                        pipe.delete(self.store.keys.session(sid))
                    pipe.srem(skey, *ids)
                    await pipe.execute()
        return ids

    async def sessions_alive(self, session_ids: list[str]) -> set[str]:
        """Which of these sessions still exist (the others were revoked or expired)."""
        async def read() -> set[str]:
            async with self.store.redis.pipeline(transaction=False) as pipe:
                for sid in session_ids:
                    pipe.exists(self.store.keys.session(sid))
                found = await pipe.execute()
            return {sid for sid, n in zip(session_ids, found, strict=True) if n}
        return await self.store._proven("read sessions", read)

    async def revoke_one(self, account: str, session_id: str) -> int:
        """Delete one session of ``account`` (a device logs out); 1 if it was there."""
        with unavailable_on_error("revoke session"):
            async with self.store.redis.pipeline(transaction=False) as pipe:
                pipe.delete(self.store.keys.session(session_id))
                pipe.srem(self.sessions_key(account), session_id)
                deleted, _ = await pipe.execute()
        return int(deleted)

    # -- login attempts ----------------------------------------------------------------

    async def attempt(self, account: str, address: str, per_account: Limit,
                      per_address: Limit, ttl_s: int) -> int:
        """Count one login attempt; 0, or how many ms to wait first (nothing counted)."""
        script = self.store.script(ATTEMPT)
        with unavailable_on_error("count login attempt"):
            wait = await script(
                keys=[self.fails_key("a", account), self.fails_key("ip", address)],
                args=[int(time.time() * 1000), int(ttl_s), *per_account, *per_address])
        return int(wait)

    async def succeeded(self, account: str, address: str) -> None:
        script = self.store.script(SUCCEEDED)
        with unavailable_on_error("reset login attempts"):
            await script(keys=[self.fails_key("a", account), self.fails_key("ip", address)])


time_public_calls(AccountStore)
