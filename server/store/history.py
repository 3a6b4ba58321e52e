"""Finished matches kept for their players: history, per-player indexes, stats and ratings.

Issue 27. A finished match (its R17 record is stored by the commit that ends it, see
``store.py``) is summarised here as a :class:`StoredMatch`: its table and number, its
options, who sat where (player id, account, name, whether a program played), the result,
and for a rated match each player's rating before and after. Keys, in one hash slot
(``{h}``) so that one transaction writes a match, its indexes, the stats and the ratings:

=====================================  ======  ==========================================
``p:{h}:m:<table>:<n>``                string  the match (msgpack), expires with its age
``p:{h}:all``                          zset    match ids by end time (the count bound)
``p:{h}:by:p:<player>``                zset    a player id's matches by end time
``p:{h}:by:a:<account digest>``        zset    an account's matches by end time
``p:{h}:stats:<account digest>``       hash    ``name``, ``played``, ``won``, ``rated``;
                                               per partner ``pm:`` / ``pw:`` (matches,
                                               won) and ``pn:`` (their name)
``p:{h}:ratings``                      hash    account digest -> msgpack ``[mu, sigma]``
=====================================  ======  ==========================================

Accounts are hashed into key names (an account key may hold any character a name may).
Writing a match twice changes nothing (its key is the proof it was written): the match,
its counters and its ratings go in one ``WATCH``/``MULTI`` transaction, so a rating is
applied exactly once however many processes see the match end.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence

import msgspec
from redis.exceptions import WatchError

from protocol import TableOptions
from protocol.fields import MatchResult

from .base import _blob, _text, time_public_calls
from .client import unavailable_on_error
from .store import Store

#: Attempts of the match transaction when other matches' ratings change meanwhile.
ATTEMPTS = 20

# KEYS: the match's key, the all-matches index (every key it writes is in the history's one
# hash slot). ARGV: the match, its lifetime in seconds, then each write as its number of
# words and the words. The match is kept once: a second delivery changes nothing.
KEEP_ONCE = """
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', tonumber(ARGV[2])) then return 0 end
local i = 3
while i <= #ARGV do
  local n = tonumber(ARGV[i])
  redis.call(unpack(ARGV, i + 1, i + n))
  i = i + n + 1
end
return 1
"""

Pair = tuple[float, float]
#: ``rate`` is given the ratings before the match (account -> (mu, sigma), None for an
#: account never rated) and returns, for each account it rates, its rating before (a new
#: account's default) and after.
RateFn = Callable[[dict[str, Pair | None]], dict[str, tuple[Pair, Pair]]]


class StoredRating(msgspec.Struct, array_like=True):
    mu: float
    sigma: float


class StoredSeat(msgspec.Struct, kw_only=True, omit_defaults=True):
    seat: int
    name: str
    player: str | None = None          # a human's player id
    account: str | None = None         # a registered human's account key
    bot: bool = False                  # a program played it (a bot, or a bot client)
    left: bool = False                 # left the match for good; a bot finished it
    before: StoredRating | None = None
    after: StoredRating | None = None


class StoredMatch(msgspec.Struct, kw_only=True):
    table: str
    match: int
    finished_at: float
    private: bool
    rated: bool
    result: MatchResult
    points: list[int]
    options: TableOptions
    seats: list[StoredSeat]
    #: Players who may read the record of a private table (``TableState.members``).
    members: list[str] = msgspec.field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.table}:{self.match}"

    def visible_to(self, player: str | None, account: str | None) -> bool:
        """A public table's match is everyone's; a private one only for who sat there."""
        if not self.private:
            return True
        return any((player is not None and (s.player == player or player in self.members))
                   or (account is not None and s.account == account) for s in self.seats)


def digest(account: str) -> str:
    """An account key as it appears in key names."""
    return hashlib.sha256(account.encode()).hexdigest()[:32]


class Retention(msgspec.Struct, kw_only=True):
    max_age_s: int = 30 * 24 * 3600
    max_count: int = 100_000


class HistoryStore:
    def __init__(self, store: Store, retention: Retention | None = None) -> None:
        self.store = store
        self.retention = retention or Retention()
        prefix = store.prefix
        self._base = f"{prefix}:{{h}}"

    # ------------------------------------------------------------------ keys


    @property
    def observe(self) -> Callable[[str, float, bool], None] | None:
        """The store's observer (``/metrics``): these calls are the store's work too."""
        return self.store.observe
    def _match(self, match_id: str) -> str:
        return f"{self._base}:m:{match_id}"

    @property
    def _all(self) -> str:
        return f"{self._base}:all"

    @property
    def _ratings(self) -> str:
        return f"{self._base}:ratings"

    def _by_player(self, player: str) -> str:
        return f"{self._base}:by:p:{player}"

    def _by_account(self, account: str) -> str:
        return f"{self._base}:by:a:{digest(account)}"

    def _stats(self, account: str) -> str:
        return f"{self._base}:stats:{digest(account)}"

    def _indexes(self, m: StoredMatch) -> list[str]:
        keys = []
        for s in m.seats:
            if s.player:
                keys.append(self._by_player(s.player))
            if s.account:
                keys.append(self._by_account(s.account))
        return keys

    # ------------------------------------------------------------------ writing

    async def record(self, m: StoredMatch, rate: RateFn | None = None) -> StoredMatch | None:
        """Keep ``m``: its indexes, its players' stats and (``rate``) their ratings, at once.
        Returns the match as stored (with ratings), or None if it was kept already (nothing
        changed).

        A match that rates nobody is kept by one script (issue 32: the transaction's four
        round trips were 5% of a process at the load bench's churn of a match a table); a
        rated one reads its players' ratings first, in a transaction that watches them."""
        accounts = [s.account for s in m.seats if s.account]
        if rate is None or not accounts:
            kept = await self._record_unrated(m)
        else:
            kept = await self._record_rated(m, rate, accounts)
        if kept is None:
            return None
        await self.trim()
        return kept

    async def _record_unrated(self, m: StoredMatch) -> StoredMatch | None:
        key = self._match(m.id)
        args: list[bytes | str | int | float] = [msgspec.msgpack.encode(m),
                                                 self.retention.max_age_s]
        for command in self._writes(m):
            args += [len(command), *command]
        with unavailable_on_error(f"keep match {m.id}"):
            kept = await self.store.run_script(self.store.script(KEEP_ONCE), [key, self._all],
                                               args)
        return m if kept else None

    async def _record_rated(self, m: StoredMatch, rate: RateFn,
                            accounts: list[str]) -> StoredMatch | None:
        redis = self.store.redis
        key = self._match(m.id)
        with unavailable_on_error(f"keep match {m.id}"):
            for _ in range(ATTEMPTS):
                try:
                    async with redis.pipeline(transaction=True) as pipe:
                        await pipe.watch(key, self._ratings)
                        if await pipe.exists(key):
                            return None
                        raw = await pipe.hmget(self._ratings, [digest(a) for a in accounts])
                        before = {a: None if r is None else _pair(_blob(r))
                                  for a, r in zip(accounts, raw, strict=True)}
                        m = _with_ratings(m, rate(before))
                        pipe.multi()  # type: ignore[no-untyped-call]
                        pipe.set(key, msgspec.msgpack.encode(m), ex=self.retention.max_age_s)
                        for command in self._writes(m):
                            pipe.execute_command(*command)
                        await pipe.execute()
                    return m
                except WatchError:
                    continue
            raise WatchError(f"match {m.id}: ratings kept changing")

    def _writes(self, m: StoredMatch) -> list[tuple[str | bytes | int | float, ...]]:
        """Every write that keeps ``m`` but the match's own key: its indexes, its players'
        stats and ratings, as commands (one list for the script and the transaction)."""
        r = self.retention
        out: list[tuple[str | bytes | int | float, ...]] = [("ZADD", self._all, m.finished_at,
                                                              m.id)]
        for k in self._indexes(m):
            out += [("ZADD", k, m.finished_at, m.id), ("EXPIRE", k, r.max_age_s)]
        won = {"team0": 0, "team1": 1}.get(m.result)
        for s in m.seats:
            if not s.account:
                continue
            stats = self._stats(s.account)
            out += [("HSET", stats, "name", s.name), ("HINCRBY", stats, "played", 1)]
            if won == s.seat % 2:
                out.append(("HINCRBY", stats, "won", 1))
            if m.rated:
                out.append(("HINCRBY", stats, "rated", 1))
            partner = m.seats[(s.seat + 2) % 4] if len(m.seats) == 4 else None
            if partner is not None and partner.account and not partner.bot:
                d = digest(partner.account)
                out += [("HINCRBY", stats, f"pm:{d}", 1), ("HSET", stats, f"pn:{d}", partner.name)]
                if won == s.seat % 2:
                    out.append(("HINCRBY", stats, f"pw:{d}", 1))
            if s.after is not None:
                out.append(("HSET", self._ratings, digest(s.account),
                            msgspec.msgpack.encode(s.after)))
        return out

    async def adopt(self, player: str, account: str) -> int:
        """A guest registers (issue 27, item 1: "keeping the session's matches"): the
        matches of their session become their account's too. Returns how many the
        account's index holds now. The accounts module calls it at registration."""
        redis = self.store.redis
        with unavailable_on_error("adopt history"):
            theirs = {_text(i) for i in await redis.zrange(self._by_account(account), 0, -1)}  # type: ignore[arg-type]
            mine = [_text(i) for i in await redis.zrange(self._by_player(player), 0, -1)]  # type: ignore[arg-type]
            new = [i for i in mine if i not in theirs]
            blobs = await redis.mget([self._match(i) for i in new]) if new else []
            stats = self._stats(account)
            async with redis.pipeline(transaction=True) as pipe:
                pipe.zunionstore(self._by_account(account),
                                 [self._by_account(account), self._by_player(player)],
                                 aggregate="MAX")
                for blob in blobs:       # the guest's matches count in the account's stats
                    if blob is None:
                        continue
                    m = msgspec.msgpack.decode(_blob(blob), type=StoredMatch)
                    seat = next((s.seat for s in m.seats if s.player == player), None)
                    if seat is None:
                        continue
                    pipe.hincrby(stats, "played", 1)
                    if m.result == f"team{seat % 2}":
                        pipe.hincrby(stats, "won", 1)
                held, *_ = await pipe.execute()
            return int(held)

    async def trim(self, now: float | None = None) -> int:
        """Forget the matches past the retention's age or count (their stats stay)."""
        now = time.time() if now is None else now
        r = self.retention
        redis = self.store.redis
        with unavailable_on_error("trim history"):
            async with redis.pipeline(transaction=False) as pipe:    # one round trip
                pipe.zrangebyscore(self._all, "-inf", now - r.max_age_s)
                pipe.zcard(self._all)
                old, count = await pipe.execute()
            ids = [_text(o) for o in old]
            extra = int(count) - len(ids) - r.max_count
            if extra > 0:
                ids += [_text(o) for o in  # type: ignore[arg-type]
                        await redis.zrange(self._all, len(ids), len(ids) + extra - 1)]
            if not ids:
                return 0
            blobs = await redis.mget([self._match(i) for i in ids])
            async with redis.pipeline(transaction=True) as pipe:
                for i, blob in zip(ids, blobs, strict=True):
                    if blob is not None:
                        m = msgspec.msgpack.decode(_blob(blob), type=StoredMatch)
                        for k in self._indexes(m):
                            pipe.zrem(k, i)
                    pipe.delete(self._match(i))
                pipe.zrem(self._all, *ids)
                await pipe.execute()
        return len(ids)

    # ------------------------------------------------------------------ reading

    async def page(self, *, player: str | None = None, account: str | None = None,
                   before: float | None = None, limit: int = 20,
                   keep: Callable[[StoredMatch], bool] = lambda m: True,
                   ) -> tuple[list[StoredMatch], float | None]:
        """Matches of an account (or else a player id), the most recent first, ended
        before ``before``; those ``keep`` refuses are skipped. Returns the page and the
        end time to ask the next page from (None: no more)."""
        index = self._by_account(account) if account else self._by_player(player or "-")
        redis = self.store.redis
        out: list[tuple[StoredMatch, float]] = []
        top: float | str = "+inf" if before is None else f"({before}"
        batch = max(limit * 2, 20)
        with unavailable_on_error("read history"):
            while len(out) <= limit:
                rows = await redis.zrevrangebyscore(index, top, "-inf", start=0, num=batch,
                                                    withscores=True)
                ids = [(_text(row[0]), float(row[1])) for row in rows]  # type: ignore[arg-type]
                blobs = await redis.mget([self._match(i) for i, _ in ids]) if ids else []
                for (_, score), blob in zip(ids, blobs, strict=True):
                    if blob is not None:
                        m = msgspec.msgpack.decode(_blob(blob), type=StoredMatch)
                        if keep(m):
                            out.append((m, score))
                    top = f"({score}"
                if len(rows) < batch:
                    break
        more = len(out) > limit
        return [m for m, _ in out[:limit]], (out[limit - 1][1] if more else None)

    async def get(self, match_id: str) -> StoredMatch | None:
        with unavailable_on_error("read match"):
            blob = await self.store.redis.get(self._match(match_id))
        return None if blob is None else msgspec.msgpack.decode(_blob(blob), type=StoredMatch)

    async def ratings(self, accounts: Sequence[str]) -> dict[str, tuple[float, float] | None]:
        if not accounts:
            return {}
        with unavailable_on_error("read ratings"):
            raw = await self.store.redis.hmget(self._ratings, [digest(a) for a in accounts])
        return {a: None if r is None else _pair(_blob(r))
                for a, r in zip(accounts, raw, strict=True)}

    async def stats(self, account: str) -> dict[str, str] | None:
        """The account's counters (``name``, ``played``, ``won``, ``rated``, partners),
        or None if it never finished a match."""
        with unavailable_on_error("read stats"):
            raw = await self.store.redis.hgetall(self._stats(account))
        if not raw:
            return None
        return {(k.decode() if isinstance(k, bytes) else k):
                (v.decode() if isinstance(v, bytes) else v) for k, v in raw.items()}

    async def partner_names(self, digests: Sequence[str]) -> list[str | None]:
        """Names of accounts by their digests (``stats``' partner fields)."""
        if not digests:
            return []
        with unavailable_on_error("read names"):
            async with self.store.redis.pipeline(transaction=False) as pipe:
                for d in digests:
                    pipe.hget(f"{self._base}:stats:{d}", "name")
                raw = await pipe.execute()
        return [None if r is None else (r.decode() if isinstance(r, bytes) else r)
                for r in raw]

    async def count(self) -> int:
        with unavailable_on_error("count history"):
            return int(await self.store.redis.zcard(self._all))

    async def set_rating(self, account: str, mu: float, sigma: float) -> None:
        """Tests and tools: set an account's rating."""
        with unavailable_on_error("set rating"):
            await self.store.redis.hset(self._ratings, digest(account),
                                        msgspec.msgpack.encode(StoredRating(mu, sigma)))


def _pair(raw: bytes) -> tuple[float, float]:
    r = msgspec.msgpack.decode(raw, type=StoredRating)
    return (r.mu, r.sigma)


def _with_ratings(m: StoredMatch, rated: dict[str, tuple[Pair, Pair]]) -> StoredMatch:
    seats = []
    for s in m.seats:
        if s.account and s.account in rated:
            b, a = rated[s.account]
            s = msgspec.structs.replace(s, before=StoredRating(*b), after=StoredRating(*a))
        seats.append(s)
    return msgspec.structs.replace(m, seats=seats)


time_public_calls(HistoryStore)
