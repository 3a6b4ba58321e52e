"""``Store``: versioned, write-through persistence of tables, logs, records and sessions.

Why versioned: the table task is the only writer of a table in normal operation, but
during a restart or a split-brain two server processes can both believe they own it. Each
commit names the version it was computed from; Redis refuses a commit on a stale version
(``VersionConflict``) so the loser reloads instead of overwriting a newer state.

Why a bounded event log next to the snapshot: a reconnecting client says "I saw up to seq
N"; replaying N+1.. is cheaper and smoother than a full snapshot. When those entries were
trimmed, ``read_log`` says so (``None``) and the caller sends a snapshot instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import NamedTuple, TypeVar

import redis.asyncio as aioredis
from redis.commands.core import AsyncScript
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from server.store import scripts
from server.store.bus import CLOSED, TableCommit
from server.store.client import unavailable_on_error
from server.store.errors import StorageUnavailable, VersionConflict
from server.store.keys import Keys, check_id, check_token_hash

T = TypeVar("T")
#: What a call that got no answer from the store raises: a timeout (ours or the socket's),
#: a dropped or refused connection, or a pool with no free connection.
NO_ANSWER = (TimeoutError, OSError, RedisConnectionError, RedisTimeoutError)
log = logging.getLogger(__name__)

_SEQ_BYTES = 8
PROBE_S = 0.5  # how long a store that looked dead has to answer a PING before it is called down
PROBE_TICK_S = 0.01  # the probe's watcher wakes this often to see whether our loop stalled
PROBE_LATE_S = 0.02  # a wake-up this late is our loop's stall, given back to the probe
PROBE_MAX_STALL_S = 5.0  # at most this much stalled time is given back
PROBE_RETRY_S = 0.05  # pause between the probe's PINGs
_SEQ_MAX = (1 << 53) - 1  # Lua numbers are doubles: seqs above 2**53 would lose precision


def encode_log_entry(seq: int, payload: bytes) -> bytes:
    """8-byte big-endian seq, then the payload: sortable, and readable by Lua's struct."""
    if not 0 <= seq <= _SEQ_MAX:
        raise ValueError(f"log seq {seq} out of range 0..2**53-1")
    return seq.to_bytes(_SEQ_BYTES, "big") + bytes(payload)


def decode_log_entry(raw: bytes) -> tuple[int, bytes]:
    """Inverse of ``encode_log_entry``."""
    return int.from_bytes(raw[:_SEQ_BYTES], "big"), raw[_SEQ_BYTES:]


def _text(raw: bytes | str) -> str:
    """A Redis reply as text (this client answers bytes; redis-py's types allow str too)."""
    return raw.decode() if isinstance(raw, bytes) else raw


def _blob(raw: bytes | str) -> bytes:
    """A Redis reply as bytes (see :func:`_text`)."""
    return raw if isinstance(raw, bytes) else raw.encode()


def _nonce() -> bytes:
    """A per-call id that lets a retried script recognise its own earlier success."""
    return os.urandom(12)


class Rotated(NamedTuple):
    """A session's token rotated by a hello: its name, and the rotation's generation."""

    name: str
    generation: int


class StoredTable(NamedTuple):
    """A table as stored: its version, its document as last written whole, and the deltas
    committed since, oldest first (each of them the table's own format: the store keeps
    bytes)."""

    version: int
    doc: bytes
    deltas: list[bytes]


class Store:
    """All persistence the server needs, over one ``redis.asyncio.Redis`` client.

    Every method is async and raises ``StorageUnavailable`` (never a redis exception)
    when Redis cannot serve it; ``ping`` alone never raises. The store owns no
    connection: the caller creates the client (``connect``) and closes it, in the order
    of its lifecycle context managers (docs/ARCHITECTURE.md convention 7).

    Index sets (``tables``, ``records``) live outside the per-table hash tag, so they are
    updated in a separate command from the table keys (a Cluster script cannot span
    slots). They are written *before* creation and cleaned *after* deletion, so an
    interrupted call leaves at worst an id whose ``load_*`` returns ``None``, never a
    table nobody can find.
    """

    def __init__(self, redis: aioredis.Redis, prefix: str = "aluette",
                 sharded: bool = True) -> None:
        self.redis = redis
        #: On a Redis Cluster events go out with SPUBLISH (sharded pub/sub, issue 11).
        self.sharded = sharded   # (SPUBLISH works on a single Redis >= 7 too)
        self.keys = Keys(prefix)
        self._create = redis.register_script(scripts.CREATE)
        self._commit = redis.register_script(scripts.COMMIT)
        self._read_log = redis.register_script(scripts.READ_LOG)
        self._load_table = redis.register_script(scripts.LOAD_TABLE)
        self._session_hello = redis.register_script(scripts.SESSION_HELLO)
        self._session_confirm = redis.register_script(scripts.SESSION_CONFIRM)
        self._take_lease = redis.register_script(scripts.TAKE_LEASE)
        self._release_lease = redis.register_script(scripts.RELEASE_LEASE)
        self._presence = redis.register_script(scripts.PRESENCE)

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

    # -- tables -------------------------------------------------------------------

    async def create_table(
        self,
        table_id: str,
        doc: bytes,
        log: Sequence[tuple[int, bytes]] = (),
        ttl_s: int = 0,
        info: bytes = b"",
    ) -> int:
        """Store a new table at version 1 with ``log`` as its first events; returns 1.

        Raises ``VersionConflict`` (``expected=None``) if the table already exists, so two
        processes can never both think they created it. With ``ttl_s`` the table's keys
        expire that long after its last commit, so nothing outlives a lost table forever.
        """
        return await self._create_table(table_id, doc, _nonce(), log, ttl_s, info)

    async def _create_table(
        self,
        table_id: str,
        doc: bytes,
        nonce: bytes,
        log: Sequence[tuple[int, bytes]] = (),
        ttl_s: int = 0,
        info: bytes = b"",
    ) -> int:
        keys = self.keys
        entries = [encode_log_entry(seq, payload) for seq, payload in log]
        await self._proven(f"index table {table_id}",
                           lambda: self.redis.sadd(keys.tables, table_id))
        # Same nonce on a second delivery: the script recognises its own create.
        ok, version = await self._proven(
            f"create table {table_id}",
            lambda: self._create(keys=[keys.doc(table_id), keys.log(table_id),
                                       keys.deltas(table_id)],
                                 args=[doc, nonce, int(ttl_s), info, *entries]))
        if not ok:
            raise VersionConflict(table_id, None, int(version))
        return 1

    async def load_table(self, table_id: str) -> StoredTable | None:
        """The table as stored, or ``None`` if it does not exist: its version, the document
        as last written whole, and the deltas committed since (read together, in order)."""
        keys = self.keys
        raw = await self._proven(
            f"load table {table_id}",
            lambda: self._load_table(keys=[keys.doc(table_id), keys.deltas(table_id)]))
        if not raw:
            return None
        version, doc, deltas = raw
        return StoredTable(int(version), _blob(doc), [_blob(d) for d in deltas])

    async def table_ids(self) -> list[str]:
        """Ids in the table index, sorted (may include an id whose create was cut off)."""
        raw = await self._proven("list tables", lambda: self.redis.smembers(self.keys.tables))
        return sorted(_text(m) for m in raw)

    async def commit(
        self,
        table_id: str,
        expected_version: int,
        doc: bytes,
        log: Sequence[tuple[int, bytes]] = (),
        log_max: int = 1000,
        *,
        delta: bool = False,
        ttl_s: int = 0,
        reply: tuple[str, bytes] | None = None,
        replies_kept: int = 64,
        replies_ttl_s: int = 86400,
        record: bytes | None = None,
        record_ttl_s: int = 0,
        record_match: int | None = None,
        info: bytes | None = None,
        publish: bytes | None = None,
    ) -> int:
        """Atomically replace the doc, bump the version and append ``log``; one round trip.

        ``delta``: ``doc`` is not a whole document but what changed since the last one
        (issue 32): it is appended to the table's deltas, which a whole document (a commit
        without ``delta``) starts afresh. :meth:`load_table` returns both.

        ``log`` is ``(seq, payload)`` pairs with seqs increasing across commits (the
        table's event sequence); the log keeps the last ``log_max`` entries. If the stored
        version is not ``expected_version`` (or the table is gone), nothing is written and
        ``VersionConflict`` is raised. Returns the new version.

        In the same script: ``reply`` (``(player id, entry)``) is remembered among that
        player's last ``replies_kept`` replies at this table; ``record`` (a finished match's
        record) is stored to outlive the table, as its latest record and, with
        ``record_match``, as that match's own; ``ttl_s`` renews the table keys' lifetime.
        """
        return await self._commit_with_nonce(
            table_id, expected_version, doc, log, log_max, _nonce(), delta=delta, ttl_s=ttl_s,
            reply=reply, replies_kept=replies_kept, replies_ttl_s=replies_ttl_s,
            record=record, record_ttl_s=record_ttl_s, record_match=record_match, info=info,
            publish=publish,
        )

    async def _commit_with_nonce(
        self,
        table_id: str,
        expected_version: int,
        doc: bytes,
        log: Sequence[tuple[int, bytes]],
        log_max: int,
        nonce: bytes,
        *,
        delta: bool = False,
        ttl_s: int = 0,
        reply: tuple[str, bytes] | None = None,
        replies_kept: int = 64,
        replies_ttl_s: int = 86400,
        record: bytes | None = None,
        record_ttl_s: int = 0,
        record_match: int | None = None,
        info: bytes | None = None,
        publish: bytes | None = None,
    ) -> int:
        if log_max < 1:
            raise ValueError("log_max must be at least 1")
        entries = [encode_log_entry(seq, payload) for seq, payload in log]
        keys = self.keys
        replies_key = keys.replies(table_id, reply[0]) if reply else keys.doc(table_id)
        record_keys = [keys.record(table_id)]
        if record_match is not None:
            record_keys.append(keys.record(table_id, record_match))
        call_keys = [keys.doc(table_id), keys.log(table_id), replies_key,
                     keys.events(table_id), keys.deltas(table_id), *record_keys]
        args = [int(expected_version), doc, nonce, int(log_max), int(ttl_s),
                reply[1] if reply else b"", int(replies_kept), int(replies_ttl_s),
                record if record is not None else b"", int(record_ttl_s),
                info if info is not None else b"",
                publish if publish is not None else b"",
                "spublish" if self.sharded else "publish", "delta" if delta else "doc",
                *entries]
        # The store must prove it is down before a player hears "storage unavailable"; a
        # second delivery of this call (same nonce) is recognised, never applied twice.
        ok, version = await self._proven(f"commit table {table_id}",
                                         lambda: self._commit(keys=call_keys, args=args))
        if not ok:
            actual = int(version)
            raise VersionConflict(table_id, expected_version, None if actual < 0 else actual)
        return int(version)

    async def read_log(self, table_id: str, after_seq: int) -> list[tuple[int, bytes]] | None:
        """Log entries with seq > ``after_seq``, oldest first.

        ``[]`` when there is nothing newer. ``None`` when the caller cannot catch up from
        the log (the entry right after ``after_seq`` was trimmed, or the table is gone):
        it should send a fresh snapshot instead.
        """
        reply = await self._proven(
            f"read log of table {table_id}",
            lambda: self._read_log(keys=[self.keys.log(table_id), self.keys.doc(table_id)],
                                   args=[int(after_seq)]))
        if not reply[0]:
            return None
        return [decode_log_entry(raw) for raw in reply[1]]

    async def delete_table(self, table_id: str) -> None:
        """Remove the table's doc and log and its index entry; its record is kept."""
        keys = self.keys
        with unavailable_on_error(f"delete table {table_id}"):
            await self.redis.delete(keys.doc(table_id), keys.log(table_id),
                                    keys.deltas(table_id))
            await self.redis.srem(keys.tables, table_id)

    async def lobby_infos(self, table_ids: Sequence[str]) -> dict[str, bytes]:
        """Every listed table's lobby description, as its last commit stored it (one
        pipelined round trip: ``list_tables`` reads the lobby from Redis, not from one
        process's memory)."""
        async def read() -> list[bytes | None]:
            async with self.redis.pipeline(transaction=False) as pipe:
                for tid in table_ids:
                    pipe.hget(self.keys.doc(tid), "info")
                return list(await pipe.execute())

        raw = await self._proven("read the lobby", read)
        return {tid: info for tid, info in zip(table_ids, raw, strict=True) if info}

    # -- leases, presence, processes (issue 11) ------------------------------------

    async def take_lease(self, table_id: str, process: str, seen: str | None,
                         ttl_s: int) -> bool:
        """Make ``process`` the table's owner if the holder is still ``seen`` (None: no
        holder). A lease has no expiry of its own: it is worth what its holder's
        heartbeat is (``ttl_s`` only lets the key of a forgotten table go)."""
        with unavailable_on_error(f"lease {table_id}"):
            return bool(await self._take_lease(keys=[self.keys.lease(table_id)],
                                               args=[process, seen or "", int(ttl_s)]))

    async def lease_holders(self, table_ids: Sequence[str], refresh_ttl_s: int = 0
                            ) -> list[str | None]:
        """Who holds each table's lease (one pipelined round trip)."""
        if not table_ids:
            return []
        with unavailable_on_error("read leases"):
            async with self.redis.pipeline(transaction=False) as pipe:
                for tid in table_ids:
                    pipe.get(self.keys.lease(tid))
                    if refresh_ttl_s:
                        pipe.expire(self.keys.lease(tid), refresh_ttl_s)
                raw = await pipe.execute()
        step = 2 if refresh_ttl_s else 1
        return [None if r is None else r.decode() for r in raw[::step]]

    async def release_lease(self, table_id: str, process: str) -> None:
        with unavailable_on_error(f"release {table_id}"):
            await self._release_lease(keys=[self.keys.lease(table_id)], args=[process])

    async def presence(self, table_id: str, field: str, delta: int, ttl_s: int) -> int:
        """Count one of this process's connections of a player in or out of a table."""
        with unavailable_on_error(f"presence at {table_id}"):
            return int(await self._presence(keys=[self.keys.present(table_id)],
                                            args=[field, int(delta), int(ttl_s)]))

    async def presence_many(self, changes: Sequence[tuple[str, str, int]], ttl_s: int) -> None:
        """Several presence counts, ``(table, field, delta)``, in one round trip."""
        with unavailable_on_error("presence"):
            async with self.redis.pipeline(transaction=False) as pipe:
                for table_id, field, delta in changes:
                    await self._presence(keys=[self.keys.present(table_id)],
                                         args=[field, int(delta), int(ttl_s)], client=pipe)
                await pipe.execute()

    async def presents(self, table_ids: Sequence[str]) -> dict[str, dict[str, int]]:
        """:meth:`present` of several tables in one round trip."""
        async def read() -> list[dict[bytes | str, bytes | str]]:
            async with self.redis.pipeline(transaction=False) as pipe:
                for table_id in table_ids:
                    pipe.hgetall(self.keys.present(table_id))
                return await pipe.execute()
        raw = await self._proven("presence of tables", read)
        return {tid: {_text(k): int(v) for k, v in counts.items()}
                for tid, counts in zip(table_ids, raw, strict=True)}

    async def present(self, table_id: str) -> dict[str, int]:
        """``{"<process>|<player>": connections}`` at a table, over every process."""
        raw = await self._proven(f"presence at {table_id}",
                                 lambda: self.redis.hgetall(self.keys.present(table_id)))
        return {_text(k): int(v) for k, v in raw.items()}

    async def publish_table(self, table_id: str, message: bytes) -> None:
        """Publish a message on the table's channel, outside a commit (a beacon)."""
        with unavailable_on_error(f"publish {table_id}"):
            await self.redis.spublish(self.keys.events(table_id), message)

    async def publish_closed(self, table_id: str, process: str) -> None:
        """Tell the other processes a table is gone (its keys were just deleted)."""
        closed = TableCommit(process, CLOSED, b"", [], time.time())
        with unavailable_on_error(f"publish {table_id}"):
            await self.redis.spublish(self.keys.events(table_id), closed.encode())

    async def heartbeat(self, process: str, now: float) -> None:
        with unavailable_on_error("heartbeat"):
            await self.redis.zadd(self.keys.procs, {process: now})

    async def leave(self, process: str) -> None:
        with unavailable_on_error("leave"):
            await self.redis.zrem(self.keys.procs, process)

    async def live_processes(self, since: float) -> list[str]:
        """Processes that beat since ``since`` (a dead one's presence is ignored)."""
        with unavailable_on_error("processes"):
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.zremrangebyscore(self.keys.procs, "-inf", f"({since - 3600}")
                pipe.zrangebyscore(self.keys.procs, since, "+inf")
                _, raw = await pipe.execute()
        return [_text(p) for p in raw]

    async def load_replies(self, table_id: str, player_id: str) -> list[bytes]:
        """A player's remembered reply entries at this table, newest first."""
        raw = await self._proven(
            f"load replies at table {table_id}",
            lambda: self.redis.lrange(self.keys.replies(table_id, player_id), 0, -1))
        return [_blob(r) for r in raw]

    # -- finished-match records ---------------------------------------------------

    async def save_record(self, table_id: str, record: bytes, ttl_s: int | None = None) -> None:
        """Keep a finished match's record (R17), optionally expiring after ``ttl_s``.

        The index is a sorted set scored by expiry time so ``record_ids`` can drop ids
        whose record Redis has already expired.
        """
        if ttl_s is not None and ttl_s <= 0:
            raise ValueError("ttl_s must be positive (or None for no expiry)")
        keys = self.keys
        expires = math.inf if ttl_s is None else time.time() + ttl_s
        with unavailable_on_error(f"save record {table_id}"):
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.zadd(keys.records, {table_id: expires})
                pipe.set(keys.record(table_id), record, ex=ttl_s)
                await pipe.execute()

    async def load_record(self, table_id: str, match: int | None = None) -> bytes | None:
        """The table's latest stored record, or that of match number ``match``; ``None``
        if never saved, or expired."""
        raw = await self._proven(
            f"load record {table_id}", lambda: self.redis.get(self.keys.record(table_id, match)))
        return None if raw is None else _blob(raw)

    async def save_review(self, table_id: str, match: int, seat: int, review: bytes,
                          ttl_s: int) -> None:
        """Keep the expert's review of one seat of a finished match, for ``ttl_s`` (every
        review expires: it can always be computed again from the record)."""
        if ttl_s <= 0:
            raise ValueError("ttl_s must be positive")
        key = self.keys.review(table_id, match, seat)
        with unavailable_on_error(f"save review {table_id}"):
            await self.redis.set(key, review, ex=int(ttl_s))

    async def load_review(self, table_id: str, match: int, seat: int) -> bytes | None:
        """A stored review, or None (never made, or expired)."""
        raw = await self._proven(
            f"load review {table_id}",
            lambda: self.redis.get(self.keys.review(table_id, match, seat)))
        return None if raw is None else _blob(raw)

    async def record_ids(self) -> list[str]:
        """Ids of records not yet expired, sorted."""
        with unavailable_on_error("list records"):
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.zremrangebyscore(self.keys.records, "-inf", f"({time.time()}")
                pipe.zrange(self.keys.records, 0, -1)
                _, raw = await pipe.execute()
        return sorted(_text(m) for m in raw)

    # -- sessions -----------------------------------------------------------------

    async def new_session(self, player_id: str, name: str, token_hash: str,
                          ttl_s: int) -> None:
        """A new session whose current token is ``token_hash`` (the raw token is never
        stored); it expires after ``ttl_s`` without a hello or a touch."""
        check_token_hash(token_hash)
        key = self.keys.session(player_id)
        with unavailable_on_error(f"create session {player_id}"):
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.hset(key, mapping={"name": name, "current": token_hash,
                                        "created": int(time.time())})
                pipe.expire(key, int(ttl_s))
                await pipe.execute()

    async def resume_session(self, player_id: str, presented: str, new: str, *,
                             grace_s: int, ttl_s: int, now: float | None = None,
                             name: str | None = None) -> str | None:
        """Rotate the session's token: ``new`` becomes current, ``presented`` stays usable
        for ``grace_s`` (until :meth:`confirm_session`), any older token dies. ``name``, if
        given, becomes the session's name (a hello renames its session, protocol 1.5).
        Returns the session's name, or None when ``presented`` is not this session's
        (unknown, replaced, expired)."""
        rotated = await self.rotate_session(player_id, presented, new, grace_s=grace_s,
                                            ttl_s=ttl_s, now=now, name=name)
        return None if rotated is None else rotated.name

    async def rotate_session(self, player_id: str, presented: str, new: str, *,
                             grace_s: int, ttl_s: int, now: float | None = None,
                             name: str | None = None) -> Rotated | None:
        """:meth:`resume_session`, with the rotation's generation (1, 2, ... per session):
        of two hellos with one token at once, the higher generation holds the token."""
        check_token_hash(presented)
        check_token_hash(new)
        now = time.time() if now is None else now
        with unavailable_on_error(f"resume session {player_id}"):
            reply = await self._session_hello(
                keys=[self.keys.session(player_id)],
                args=[presented, new, int(now), int(grace_s), int(ttl_s), name or ""])
        if not reply[0]:
            return None
        name = reply[1]
        return Rotated(name.decode() if isinstance(name, bytes) else str(name), int(reply[2]))

    async def confirm_session(self, player_id: str, token_hash: str, ttl_s: int) -> bool:
        """The connection holding ``token_hash`` sent a command: retire the token its hello
        presented. False if the session has moved on to another token since."""
        with unavailable_on_error(f"confirm session {player_id}"):
            return bool(await self._session_confirm(
                keys=[self.keys.session(player_id)], args=[token_hash, int(ttl_s)]))

    async def session_token(self, player_id: str) -> str | None:
        """The current token digest of a session, or None (expired)."""
        raw = await self._proven(f"read session {player_id}",
                                 lambda: self.redis.hget(self.keys.session(player_id), "current"))
        return None if raw is None else _text(raw)

    async def touch_session(self, player_id: str, ttl_s: int) -> None:
        """A long-lived connection keeps its session (and the tables it watches, which
        belong to it) from expiring."""
        with unavailable_on_error(f"touch session {player_id}"):
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.expire(self.keys.session(player_id), int(ttl_s))
                pipe.expire(self.keys.watching(player_id), int(ttl_s))
                await pipe.execute()

    # -- tables a player watches ----------------------------------------------------

    async def note_watching(self, player_id: str, table_id: str, *, now: float, kept: int,
                            ttl_s: int) -> None:
        """``player_id`` watches ``table_id`` without a seat: remember it (the latest
        ``kept`` tables only), for as long as the session lives."""
        check_id("table", table_id)
        key = self.keys.watching(player_id)
        with unavailable_on_error(f"note watching {player_id}"):
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.zadd(key, {table_id: now})
                pipe.zremrangebyrank(key, 0, -int(kept) - 1)
                pipe.expire(key, int(ttl_s))
                await pipe.execute()

    async def forget_watching(self, player_id: str, table_id: str) -> None:
        """``player_id`` stopped watching ``table_id``."""
        check_id("table", table_id)
        with unavailable_on_error(f"forget watching {player_id}"):
            await self.redis.zrem(self.keys.watching(player_id), table_id)

    async def watching(self, player_id: str) -> list[str]:
        """The tables ``player_id`` watches, the most recently noted first."""
        raw = await self._proven(
            f"read watching {player_id}",
            lambda: self.redis.zrevrange(self.keys.watching(player_id), 0, -1))
        # Without scores, ZREVRANGE answers members only.
        return [_text(m) for m in raw if isinstance(m, bytes | str)]
