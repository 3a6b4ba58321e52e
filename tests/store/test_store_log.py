"""The bounded event log: trimming, catch-up reads, and gap detection."""

from __future__ import annotations

import random

import pytest
import redis.asyncio as aioredis

from server.store import Store
from server.store.store import decode_log_entry, encode_log_entry


def test_entry_encoding_round_trips_and_sorts() -> None:
    for seq in (0, 1, 255, 256, 2**40 + 3, 2**53 - 1):
        assert decode_log_entry(encode_log_entry(seq, b"p")) == (seq, b"p")
    assert encode_log_entry(2, b"z") < encode_log_entry(256, b"a")
    with pytest.raises(ValueError):
        encode_log_entry(-1, b"")
    with pytest.raises(ValueError):
        encode_log_entry(2**53, b"")


async def test_log_is_trimmed_to_log_max(store: Store, redis_client: aioredis.Redis) -> None:
    await store.create_table("t", b"d0")
    seq = 0
    for version in range(1, 11):  # 10 commits x 3 entries = seqs 1..30
        entries = [(seq + k, f"e{seq + k}".encode()) for k in (1, 2, 3)]
        seq += 3
        assert await store.commit("t", version, b"d", entries, log_max=5) == version + 1
    assert await redis_client.llen(store.keys.log("t")) == 5

    assert await store.read_log("t", 25) == [(s, f"e{s}".encode()) for s in range(26, 31)]
    assert await store.read_log("t", 28) == [(29, b"e29"), (30, b"e30")]
    assert await store.read_log("t", 30) == []
    assert await store.read_log("t", 99) == []
    assert await store.read_log("t", 24) is None  # 25 was trimmed: resync from snapshot
    assert await store.read_log("t", 0) is None


async def test_empty_log_and_missing_table(store: Store) -> None:
    await store.create_table("t", b"d")
    assert await store.read_log("t", 0) == []
    assert await store.read_log("t", 7) == []
    assert await store.read_log("nope", 0) is None


async def test_a_catch_up_that_finds_nothing_new_gets_no_document(store: Store) -> None:
    """Issue 32: every table catches up when its subscription takes effect, and usually
    finds nothing new; the store then answers with the version alone."""
    assert await store.load_table_if_newer("t", 0) is None          # no such table
    await store.create_table("t", b"d1")
    assert await store.load_table_if_newer("t", 1) == 1             # has it: no document
    assert await store.load_table_if_newer("t", 5) == 1             # (ahead: the same)
    assert await store.load_table_if_newer("t", 0) == (1, b"d1", [])
    assert await store.commit("t", 1, b"x", [], delta=True) == 2
    assert await store.load_table_if_newer("t", 1) == (2, b"d1", [b"x"])   # newer: whole
    assert await store.load_table_if_newer("t", 2) == 2
    assert await store.load_table("t") == (2, b"d1", [b"x"])       # the plain read as ever


async def test_invalid_log_max(store: Store) -> None:
    await store.create_table("t", b"d")
    with pytest.raises(ValueError):
        await store.commit("t", 1, b"d", [(1, b"e")], log_max=0)
    assert await store.load_table("t") == (1, b"d", [])


async def test_read_log_matches_a_model_over_random_histories(store: Store) -> None:
    """Seeded random commits; every possible after_seq is checked against a list model."""
    rng = random.Random(20240611)
    for run in range(4):
        tid = f"m{run}"
        log_max = rng.choice([1, 3, 8, 50])
        await store.create_table(tid, b"d")
        model: list[tuple[int, bytes]] = []
        seq, version = 0, 1
        for _ in range(rng.randint(5, 40)):
            batch = []
            for _ in range(rng.randint(0, 4)):
                seq += 1
                batch.append((seq, rng.randbytes(rng.randint(0, 20))))
            version = await store.commit(tid, version, b"d", batch, log_max=log_max)
            model = (model + batch)[-log_max:]
        for after in range(seq + 2):
            got = await store.read_log(tid, after)
            expected = [e for e in model if e[0] > after]
            if model and model[0][0] > after + 1:
                assert got is None, (run, after)
            else:
                assert got == expected, (run, after)


async def test_huge_batch_is_appended_and_trimmed(store: Store) -> None:
    """A batch larger than Lua's unpack() limit still lands in one atomic commit."""
    await store.create_table("big", b"d")
    batch = [(s, s.to_bytes(4, "big")) for s in range(1, 12_001)]
    assert await store.commit("big", 1, b"d2", batch, log_max=10_000) == 2
    got = await store.read_log("big", 2_000)
    assert got is not None and len(got) == 10_000 and got[0] == (2_001, (2_001).to_bytes(4, "big"))
    assert await store.read_log("big", 1_999) is None
