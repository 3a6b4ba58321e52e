"""``TableStore``: tables as stored, a versioned document, its deltas and a bounded log.

Why versioned: the table task is the only writer of a table in normal operation, but
during a restart or a split-brain two server processes can both believe they own it. Each
commit names the version it was computed from; Redis refuses a commit on a stale version
(``VersionConflict``) so the loser reloads instead of overwriting a newer state.

Why a bounded event log next to the snapshot: a reconnecting client says "I saw up to seq
N"; replaying N+1.. is cheaper and smoother than a full snapshot. When those entries were
trimmed, ``read_log`` says so (``None``) and the caller sends a snapshot instead.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import ClassVar, NamedTuple

from redis.commands.core import AsyncScript

from server.store import scripts
from server.store.base import StoreBase, _blob, _nonce, _text
from server.store.client import unavailable_on_error
from server.store.errors import StorageUnavailable, VersionConflict

log = logging.getLogger(__name__)

_SEQ_BYTES = 8
#: Lobby changes kept (one per table, at its last change): a process further behind than
#: this reads the whole lobby once instead.
LOBBY_CHANGES_KEPT = 100_000
#: The most changed tables a process reads one by one; past it, it reads the whole lobby.
LOBBY_CHANGES_READ = 5_000
#: The lobby's change keys live this long after the last change.
LOBBY_CHANGES_TTL_S = 7 * 24 * 3600
_SEQ_MAX = (1 << 53) - 1  # Lua numbers are doubles: seqs above 2**53 would lose precision


def encode_log_entry(seq: int, payload: bytes) -> bytes:
    """8-byte big-endian seq, then the payload: sortable, and readable by Lua's struct."""
    if not 0 <= seq <= _SEQ_MAX:
        raise ValueError(f"log seq {seq} out of range 0..2**53-1")
    return seq.to_bytes(_SEQ_BYTES, "big") + bytes(payload)


def decode_log_entry(raw: bytes) -> tuple[int, bytes]:
    """Inverse of ``encode_log_entry``."""
    return int.from_bytes(raw[:_SEQ_BYTES], "big"), raw[_SEQ_BYTES:]


class StoredTable(NamedTuple):
    """A table as stored: its version, its document as last written whole, and the deltas
    committed since, oldest first (each of them the table's own format: the store keeps
    bytes)."""

    version: int
    doc: bytes
    deltas: list[bytes]


class TableStore(StoreBase):
    """Tables: create, commit (one versioned round trip), load, read the log, delete, and
    the lobby's description of each.

    The index set (``tables``) lives outside the per-table hash tag, so it is updated in a
    separate command from the table keys (a Cluster script cannot span slots). It is
    written *before* creation and cleaned *after* deletion, so an interrupted call leaves at
    worst an id whose ``load_table`` returns ``None``, never a table nobody can find.
    """

    SCRIPTS: ClassVar[Mapping[str, str]] = {
        "_create": scripts.CREATE,
        "_commit": scripts.COMMIT,
        "_read_log": scripts.READ_LOG,
        "_load_table": scripts.LOAD_TABLE,
        "_note_lobby": scripts.NOTE_LOBBY,
        "_lobby_changes": scripts.LOBBY_CHANGES,
    }
    _create: AsyncScript
    _commit: AsyncScript
    _read_log: AsyncScript
    _load_table: AsyncScript
    _note_lobby: AsyncScript
    _lobby_changes: AsyncScript

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
        call_keys = [keys.doc(table_id), keys.log(table_id), keys.deltas(table_id)]
        one_node = self.one_node
        if one_node:        # indexed and noted in the same script
            call_keys += [keys.tables, keys.lobby_changes, keys.lobby_clock]
        else:               # another slot: indexed first, noted after
            await self._proven(f"index table {table_id}",
                               lambda: self.redis.sadd(keys.tables, table_id))
        args: list[bytes | str | int] = [doc, nonce, int(ttl_s), info,
                                         table_id if one_node else "", LOBBY_CHANGES_KEPT,
                                         LOBBY_CHANGES_TTL_S, *entries]
        # Same nonce on a second delivery: the script recognises its own create.
        ok, version = await self._proven(f"create table {table_id}",
                                         lambda: self.run_script(self._create, call_keys, args))
        if not ok:
            raise VersionConflict(table_id, None, int(version))
        if info and not one_node:
            await self._lobby_changed(table_id)
        return 1

    async def load_table(self, table_id: str) -> StoredTable | None:
        """The table as stored, or ``None`` if it does not exist: its version, the document
        as last written whole, and the deltas committed since (read together, in order)."""
        stored = await self.load_table_if_newer(table_id, 0)   # versions start at 1
        assert not isinstance(stored, int)
        return stored

    async def load_table_if_newer(self, table_id: str, version: int) -> StoredTable | int | None:
        """The table as stored if its version is past ``version``; else its version alone
        (the document is neither sent nor decoded); ``None`` if it does not exist.

        A table catches up when its subscription takes effect (every table a process
        makes or loads) and usually finds nothing new: it then cost a whole document read
        and decoded for nothing (issue 32)."""
        keys = self.keys
        raw = await self._proven(
            f"load table {table_id}",
            lambda: self._load_table(keys=[keys.doc(table_id), keys.deltas(table_id)],
                                     args=[version]))
        if not raw:
            return None
        if len(raw) == 1:
            return int(raw[0])
        stored, doc, deltas = raw
        return StoredTable(int(stored), _blob(doc), [_blob(d) for d in deltas])

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
        nonce: bytes | None = None,
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

        ``nonce`` marks this call (a fresh one by default): a second delivery of the script
        with the same nonce, as redis-py's retry after a lost reply, reports the version it
        made instead of a conflict.
        """
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
        note = info is not None and self.one_node
        if note:      # the lobby change numbered in the same round trip
            call_keys += [keys.lobby_changes, keys.lobby_clock]
        args = [int(expected_version), doc, nonce or _nonce(), int(log_max), int(ttl_s),
                reply[1] if reply else b"", int(replies_kept), int(replies_ttl_s),
                record if record is not None else b"", int(record_ttl_s),
                info if info is not None else b"",
                publish if publish is not None else b"",
                "spublish" if self.sharded else "publish", "delta" if delta else "doc",
                table_id if note else "", LOBBY_CHANGES_KEPT, LOBBY_CHANGES_TTL_S,
                *entries]
        # The store must prove it is down before a player hears "storage unavailable"; a
        # second delivery of this call (same nonce) is recognised, never applied twice.
        ok, version = await self._proven(f"commit table {table_id}",
                                         lambda: self.run_script(self._commit, call_keys, args))
        if not ok:
            actual = int(version)
            raise VersionConflict(table_id, expected_version, None if actual < 0 else actual)
        if info is not None and not note:
            await self._lobby_changed(table_id)
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
        await self._lobby_changed(table_id)

    async def _lobby_changed(self, table_id: str) -> None:
        """Number a change of ``table_id``'s lobby entry, after it is stored, so that the
        other processes read that entry again, and only the entries that changed
        (:meth:`lobby_changes`). Before, every process read every table's entry every two
        seconds, finished ones included (issue 32): its cost grew with the tables kept,
        not the tables played, and was paid once per process.

        The change itself is stored by then, so a note that fails is logged, not raised:
        the others see the entry at their next whole read (``LOBBY_WHOLE_S`` in
        server/lobby/listing.py), a little late, never lost."""
        keys = self.keys
        try:
            await self._proven(
                "note a lobby change",
                lambda: self._note_lobby(keys=[keys.lobby_changes, keys.lobby_clock],
                                         args=[table_id, LOBBY_CHANGES_KEPT,
                                               LOBBY_CHANGES_TTL_S]))
        except StorageUnavailable as exc:
            log.warning("table %s: its lobby change was not noted (%s)", table_id, exc)

    async def lobby_changes(self, after: int) -> tuple[int, list[str] | None]:
        """The lobby's last change number, and the tables whose entries changed after
        change ``after`` (``None``: read every table; ``after`` -1 asks for that)."""
        keys = self.keys
        raw = await self._proven(
            "read the lobby's changes",
            lambda: self._lobby_changes(keys=[keys.lobby_changes, keys.lobby_clock],
                                        args=[int(after), LOBBY_CHANGES_READ]))
        seq, whole = int(raw[0]), int(raw[1])
        return seq, None if whole else [_text(r) for r in raw[2:]]

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

    async def load_replies(self, table_id: str, player_id: str) -> list[bytes]:
        """A player's remembered reply entries at this table, newest first."""
        raw = await self._proven(
            f"load replies at table {table_id}",
            lambda: self.run_command("LRANGE", self.keys.replies(table_id, player_id), 0, -1))
        return [_blob(r) for r in raw]
