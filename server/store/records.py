"""``RecordStore``: finished matches' records (R17), which outlive their table, and the
expert's reviews of them."""

from __future__ import annotations

import math
import time

from server.store.base import StoreBase, _blob, _text
from server.store.client import unavailable_on_error


class RecordStore(StoreBase):
    """Records and reviews. The records' index (``records``) is a sorted set scored by
    expiry, outside any table's hash tag."""

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
