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


async def test_a_commit_keeps_each_matchs_record_and_the_latest(
        store: Store, redis_client: aioredis.Redis) -> None:
    """A table plays several matches (rematch): each record is kept under its number, and
    the table's plain record key is the latest (what get_record without a number reads)."""
    version = await store.create_table("t9", b"doc")
    version = await store.commit("t9", version, b"doc", record=b"m1", record_ttl_s=60,
                                 record_match=1)
    version = await store.commit("t9", version, b"doc")             # no record: nothing
    await store.commit("t9", version, b"doc", record=b"m2", record_ttl_s=60, record_match=2)
    assert await store.load_record("t9") == b"m2"
    assert await store.load_record("t9", 1) == b"m1"
    assert await store.load_record("t9", 2) == b"m2"
    assert await store.load_record("t9", 3) is None
    for key in (store.keys.record("t9", 1), store.keys.record("t9", 2)):
        assert 0 < await redis_client.ttl(key) <= 60
    # Same hash tag as the table's other keys (one slot, one script on a cluster).
    assert store.keys.record("t9", 2).startswith(store.keys.record("t9"))
    with pytest.raises(ValueError):
        store.keys.record("t9", 0)
