"""Back up a running store, and restore it into a fresh one (issue 30, item 2).

``aluette-server backup FILE`` and ``aluette-server restore FILE``, with the server's own
storage flags (``--redis-url`` or ``--data-dir``, ``--key-prefix``). docs/OPERATIONS.md
has the procedure.

**What is copied.** Every key under the prefix, *logically*: a string's bytes, a hash's
fields, a list's items, a set's members, a sorted set's members and scores, each with its
absolute expiry (a key that would have expired by the time of the restore is not
restored; every other keeps the very moment it expires). Not DUMP/RESTORE: a DUMP payload
is tied to the server's RDB version, and the embedded Valkey's cannot be restored into an
older Redis, which is exactly the move an operator makes from the embedded store to a
Redis. Left out, because they describe processes and not the game: leases, presence
counts, the process list (a restored store's first server takes every table's lease), and
the store identity (the target keeps its own: a restore never makes a store pass for
another one, ``identity.py``).

**Consistency while the server runs.** All the keys of one table share a hash tag
(``keys.py``), and each batch of keys is read in one ``MULTI``, never splitting a tag: a
table's document, its deltas, its event log and its players' remembered replies are
always copied at one instant, as one commit left them. Tables are read before the index
sets (``tables``, ``records``), so a table created during the backup is either whole in it
or absent from it, and one deleted meanwhile is, at worst, a table the index does not
name (its keys expire). A commit acknowledged after the backup read its table is not in
the backup: take the backup, then stop the server (SIGTERM) if nothing may be lost, as
the test does (``tests/store/test_backup.py``).

**The file**: a length-prefixed stream of msgpack records (a header, the keys, a footer
with their count and a SHA-256 of everything before it), written to a temporary name and
renamed, so a backup cut short is never taken for a whole one; ``restore`` checks the
footer before it writes anything, and refuses a target that already holds keys under the
prefix.
"""

from __future__ import annotations

import hashlib
import os
import struct
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Literal

import msgspec
import redis.asyncio as aioredis

from server.store.client import make_client
from server.store.datadir import fsync_dir
from server.store.embedded import running_store
from server.store.errors import IdentityMismatch
from server.store.identity import identity_key, read_identity_file
from server.store.keys import check_prefix
from server.store.runtime import StorageConfig, open_storage

FORMAT = "aluette-backup"
VERSION = 1
#: Keys read (or written) per round trip; a table's keys are never split between two.
BATCH = 200
#: Key suffixes that describe processes, not the game: never backed up.
EPHEMERAL_SUFFIXES = (":lease", ":present")
_LEN = struct.Struct(">I")


class Header(msgspec.Struct, tag="header", kw_only=True):
    format: str
    version: int
    prefix: str
    created_ms: int


class StringKey(msgspec.Struct, tag="string", kw_only=True):
    name: str                 # the key without "<prefix>:"
    expire_at_ms: int = 0     # unix ms; 0: no expiry
    value: bytes


class HashKey(msgspec.Struct, tag="hash", kw_only=True):
    name: str
    expire_at_ms: int = 0
    fields: list[tuple[bytes, bytes]]


class ListKey(msgspec.Struct, tag="list", kw_only=True):
    name: str
    expire_at_ms: int = 0
    items: list[bytes]


class SetKey(msgspec.Struct, tag="set", kw_only=True):
    name: str
    expire_at_ms: int = 0
    members: list[bytes]


class ZSetKey(msgspec.Struct, tag="zset", kw_only=True):
    name: str
    expire_at_ms: int = 0
    members: list[tuple[bytes, float]]


class Footer(msgspec.Struct, tag="footer", kw_only=True):
    keys: int
    sha256: str


Entry = StringKey | HashKey | ListKey | SetKey | ZSetKey
Record = Header | StringKey | HashKey | ListKey | SetKey | ZSetKey | Footer
KeyKind = Literal["string", "hash", "list", "set", "zset"]


class BackupError(Exception):
    """A backup file that is not one, is cut short or altered, or a target not empty."""


class Summary(msgspec.Struct, kw_only=True):
    """What a backup wrote or a restore put back (printed as JSON by the command)."""

    path: str
    prefix: str
    keys: int
    tables: int
    expired_skipped: int = 0
    seconds: float = 0.0


def hash_tag(key: str) -> str:
    """The text Redis Cluster hashes (``keys.py``): between the first ``{`` and the next
    ``}``; the empty string for a key without a tag."""
    start = key.find("{")
    if start < 0:
        return ""
    end = key.find("}", start + 1)
    return key[start + 1:end] if end > start + 1 else ""


def _wanted(key: str, prefix: str) -> bool:
    return (key != identity_key(prefix) and key != f"{prefix}:procs"
            and not key.endswith(EPHEMERAL_SUFFIXES))


def _batches(keys: Iterable[str]) -> Iterator[list[str]]:
    """Keys in batches of about :data:`BATCH`, each tag's keys in one batch, untagged keys
    (the index sets) in the last batches."""
    groups: dict[str, list[str]] = {}
    for key in keys:
        groups.setdefault(hash_tag(key), []).append(key)
    untagged = groups.pop("", [])
    batch: list[str] = []
    for tag in sorted(groups):
        if batch and len(batch) + len(groups[tag]) > BATCH:
            yield batch
            batch = []
        batch.extend(sorted(groups[tag]))
    if batch:
        yield batch
    for i in range(0, len(untagged), BATCH):
        yield sorted(untagged)[i:i + BATCH]


async def _scan(redis: aioredis.Redis, prefix: str) -> list[str]:
    out: set[str] = set()
    async for raw in redis.scan_iter(match=f"{prefix}:*", count=1000):
        key = raw.decode() if isinstance(raw, bytes) else str(raw)
        if _wanted(key, prefix):
            out.add(key)
    return sorted(out)


def _kind(raw: bytes | str) -> str:
    return raw.decode() if isinstance(raw, bytes) else raw


async def _read_batch(redis: aioredis.Redis, prefix: str, keys: list[str]) -> list[Entry]:
    """One batch's keys, read in one MULTI (at one instant)."""
    types_pipe = redis.pipeline(transaction=False)
    for key in keys:
        types_pipe.type(key)
    kinds = [_kind(k) for k in await types_pipe.execute()]
    pipe = redis.pipeline(transaction=True)
    pipe.time()
    live: list[tuple[str, str]] = []
    for key, kind in zip(keys, kinds, strict=True):
        match kind:
            case "string":
                pipe.get(key)
            case "hash":
                pipe.hgetall(key)
            case "list":
                pipe.lrange(key, 0, -1)
            case "set":
                pipe.smembers(key)
            case "zset":
                pipe.zrange(key, 0, -1, withscores=True)
            case "none":
                continue                # gone since the scan
            case _:
                raise BackupError(f"key {key} is a {kind}: this store never makes one")
        pipe.pttl(key)
        live.append((key, kind))
    replies = await pipe.execute()
    seconds, micros = replies[0]
    now_ms = int(seconds) * 1000 + int(micros) // 1000
    entries: list[Entry] = []
    strip = len(prefix) + 1
    for i, (key, kind) in enumerate(live):
        value, pttl = replies[1 + 2 * i], replies[2 + 2 * i]
        if pttl == -2 or value is None:
            continue                    # expired or deleted between the two round trips
        name = key[strip:]
        expire = now_ms + int(pttl) if int(pttl) > 0 else 0
        match kind:
            case "string":
                entries.append(StringKey(name=name, expire_at_ms=expire, value=bytes(value)))
            case "hash":
                entries.append(HashKey(name=name, expire_at_ms=expire,
                                       fields=sorted(value.items())))
            case "list":
                entries.append(ListKey(name=name, expire_at_ms=expire, items=list(value)))
            case "set":
                entries.append(SetKey(name=name, expire_at_ms=expire,
                                      members=sorted(value)))
            case _:
                entries.append(ZSetKey(name=name, expire_at_ms=expire,
                                       members=[(m, float(s)) for m, s in value]))
    return entries


class _Writer:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        self.file = open(self.tmp, "wb")  # noqa: SIM115 - closed in close()/abort()
        self.digest = hashlib.sha256()
        self.encoder = msgspec.msgpack.Encoder()

    def write(self, record: Record) -> None:
        data = self.encoder.encode(record)
        chunk = _LEN.pack(len(data)) + data
        if not isinstance(record, Footer):
            self.digest.update(chunk)
        self.file.write(chunk)

    def close(self, keys: int) -> None:
        self.write(Footer(keys=keys, sha256=self.digest.hexdigest()))
        self.file.flush()
        os.fsync(self.file.fileno())
        self.file.close()
        os.replace(self.tmp, self.path)
        fsync_dir(self.path.parent)

    def abort(self) -> None:
        self.file.close()
        self.tmp.unlink(missing_ok=True)


async def backup(redis: aioredis.Redis, prefix: str, path: Path) -> Summary:
    """Copy every key under ``prefix`` (but the ephemeral ones) into ``path``."""
    check_prefix(prefix)
    started = time.monotonic()
    keys = await _scan(redis, prefix)
    writer = _Writer(path)
    count = tables = 0
    try:
        writer.write(Header(format=FORMAT, version=VERSION, prefix=prefix,
                            created_ms=int(time.time() * 1000)))
        for batch in _batches(keys):
            for entry in await _read_batch(redis, prefix, batch):
                writer.write(entry)
                count += 1
                tables += entry.name.endswith(":doc") and entry.name.startswith("{t:")
        writer.close(count)
    except BaseException:
        writer.abort()
        raise
    return Summary(path=str(path), prefix=prefix, keys=count, tables=tables,
                   seconds=round(time.monotonic() - started, 3))


def read_backup(path: Path) -> tuple[Header, list[Entry]]:
    """The header and entries of a whole, unaltered backup file; else :class:`BackupError`."""
    data = path.read_bytes()
    decoder = msgspec.msgpack.Decoder(Record)
    digest = hashlib.sha256()
    records: list[Record] = []
    pos = 0
    while pos < len(data):
        if pos + _LEN.size > len(data):
            raise BackupError(f"{path}: cut short")
        (size,) = _LEN.unpack_from(data, pos)
        chunk = data[pos:pos + _LEN.size + size]
        if len(chunk) < _LEN.size + size:
            raise BackupError(f"{path}: cut short")
        try:
            record = decoder.decode(chunk[_LEN.size:])
        except msgspec.DecodeError as exc:
            raise BackupError(f"{path}: not an Aluette backup ({exc})") from None
        if not isinstance(record, Footer):
            digest.update(chunk)
        records.append(record)
        pos += len(chunk)
    if not records or not isinstance(records[0], Header) or records[0].format != FORMAT:
        raise BackupError(f"{path}: not an Aluette backup")
    header = records[0]
    if header.version != VERSION:
        raise BackupError(f"{path}: backup format version {header.version}; this server "
                          f"reads version {VERSION}")
    footer = records[-1]
    if not isinstance(footer, Footer):
        raise BackupError(f"{path}: cut short (no footer)")
    entries = [r for r in records[1:-1] if not isinstance(r, Header | Footer)]
    if footer.keys != len(entries) or footer.sha256 != digest.hexdigest():
        raise BackupError(f"{path}: altered or damaged (its checksum does not match)")
    return header, entries


async def restore(redis: aioredis.Redis, prefix: str, path: Path) -> Summary:
    """Put the keys of ``path`` under ``prefix`` in a store that holds none yet."""
    check_prefix(prefix)
    started = time.monotonic()
    _header, entries = read_backup(path)
    async for raw in redis.scan_iter(match=f"{prefix}:*", count=1000):
        key = raw.decode() if isinstance(raw, bytes) else str(raw)
        if key != identity_key(prefix):
            raise BackupError(f"the store already holds keys under {prefix!r} (e.g. {key}); "
                              "restore into a fresh store or another --key-prefix")
    seconds, micros = await redis.time()
    now_ms = int(seconds) * 1000 + int(micros) // 1000
    skipped = restored = tables = 0
    pipe = redis.pipeline(transaction=False)
    for entry in entries:
        if entry.expire_at_ms and entry.expire_at_ms <= now_ms + 1000:
            skipped += 1              # it would have expired by now (or within a second)
            continue
        key = f"{prefix}:{entry.name}"
        _write(pipe, key, entry)
        if entry.expire_at_ms:
            pipe.pexpireat(key, entry.expire_at_ms)
        restored += 1
        tables += entry.name.endswith(":doc") and entry.name.startswith("{t:")
        if len(pipe) >= BATCH:
            await pipe.execute()
    await pipe.execute()
    return Summary(path=str(path), prefix=prefix, keys=restored, tables=tables,
                   expired_skipped=skipped, seconds=round(time.monotonic() - started, 3))


def _write(pipe: aioredis.client.Pipeline, key: str, entry: Entry) -> None:
    match entry:
        case StringKey(value=value):
            pipe.set(key, value)
        case HashKey(fields=fields):
            pipe.hset(key, mapping=dict(fields))
        case ListKey(items=items):
            for i in range(0, len(items), 1000):
                pipe.rpush(key, *items[i:i + 1000])
        case SetKey(members=members):
            for i in range(0, len(members), 1000):
                pipe.sadd(key, *members[i:i + 1000])
        case ZSetKey(members=members):
            for i in range(0, len(members), 1000):
                pipe.zadd(key, dict(members[i:i + 1000]))


def _running_embedded(data_dir: Path) -> tuple[str, str, str | None] | None:
    """The live embedded store of ``data_dir`` (url, password) and the directory's identity."""
    reached = running_store(data_dir)
    if reached is None:
        return None
    return reached[0], reached[1], read_identity_file(Path(data_dir).resolve())


async def run(command: Literal["backup", "restore"], path: Path, cfg: StorageConfig
              ) -> Summary:
    """``aluette-server backup|restore FILE``: reach the store ``cfg`` names and do it.

    A backup of the embedded store whose server is running reads that server's store (its
    data directory is locked: the pid file names the store and the identity is checked);
    otherwise, and for every restore, the store is opened as the server opens it (an
    embedded store is started on the data directory, a fresh one gets its identity).
    """
    if command == "backup" and not cfg.redis_url:
        reached = _running_embedded(cfg.data_dir)
        if reached is not None:
            url, password, mine = reached
            client = make_client(url, password=password, max_connections=4)
            try:
                key = identity_key(cfg.key_prefix)
                held = await client.get(key)
                if mine is not None and (held is None or _kind(held) != mine):
                    raise IdentityMismatch(url, mine, None if held is None else _kind(held),
                                           f"the data directory {cfg.data_dir}")
                return await backup(client, cfg.key_prefix, path)
            finally:
                await client.aclose()
    async with open_storage(cfg) as storage:
        redis = storage.store.redis
        if command == "backup":
            return await backup(redis, cfg.key_prefix, path)
        return await restore(redis, cfg.key_prefix, path)


__all__ = ["BackupError", "Summary", "backup", "read_backup", "restore", "run"]
