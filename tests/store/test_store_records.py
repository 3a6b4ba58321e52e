"""Finished-match records: kept after the table is gone, optionally expiring."""

from __future__ import annotations

import time

import pytest
import redis.asyncio as aioredis

from server.store import Store


async def test_record_round_trip_and_index(store: Store) -> None:
    assert await store.load_record("t1") is None
    assert await store.record_ids() == []
    await store.save_record("t2", b"rec2")
    await store.save_record("t1", b"rec1")
    await store.save_record("t1", b"rec1-v2")  # overwrite, still one id
    assert await store.record_ids() == ["t1", "t2"]
    assert await store.load_record("t1") == b"rec1-v2"


async def test_record_ttl_and_expired_ids_are_dropped(
    store: Store, redis_client: aioredis.Redis
) -> None:
    await store.save_record("short", b"r", ttl_s=120)
    assert 0 < await redis_client.ttl(store.keys.record("short")) <= 120
    assert await store.record_ids() == ["short"]
    # Simulate the moment after expiry without waiting: Redis dropped the value and the
    # index entry's expiry time is in the past.
    await redis_client.delete(store.keys.record("short"))
    await redis_client.zadd(store.keys.records, {"short": time.time() - 1})
    assert await store.record_ids() == []
    with pytest.raises(ValueError):
        await store.save_record("bad", b"r", ttl_s=0)
