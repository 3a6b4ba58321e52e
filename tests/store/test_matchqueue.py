"""The play-now queue's store (issue 27): a take is all or nothing, so two matchmakers
(a lease changing hands) never seat a player twice. Real Valkey."""

from __future__ import annotations

import asyncio
from typing import Any

from server.store import Store
from server.store.matchqueue import QueueStore


async def test_overlapping_takes_seat_each_player_once(redis_client: Any, key_prefix: str):
    q = QueueStore(Store(redis_client, key_prefix))
    for i in range(6):
        await q.put(f"p{i}", f"req{i}".encode())
    a = [(f"p{i}", f"req{i}".encode()) for i in (0, 1, 2, 3)]
    b = [(f"p{i}", f"req{i}".encode()) for i in (2, 3, 4, 5)]
    took = await asyncio.gather(q.take(a), q.take(b))
    assert sorted(took) == [False, True]
    left = set(await q.all())
    assert left == ({"p4", "p5"} if took[0] else {"p0", "p1"})


async def test_a_take_fails_when_a_request_was_replaced_or_withdrawn(redis_client: Any,
                                                                    key_prefix: str):
    q = QueueStore(Store(redis_client, key_prefix))
    await q.put("p0", b"old")
    await q.put("p1", b"r1")
    await q.put("p0", b"new")               # asked again with other options
    assert not await q.take([("p0", b"old"), ("p1", b"r1")])
    assert await q.remove("p1")
    assert not await q.take([("p0", b"new"), ("p1", b"r1")])
    assert await q.all() == {"p0": b"new"}


async def test_one_matchmaker_lease_at_a_time(redis_client: Any, key_prefix: str):
    q = QueueStore(Store(redis_client, key_prefix))
    assert await q.hold_lease("a", 5)
    assert not await q.hold_lease("b", 5)
    assert await q.hold_lease("a", 5)        # renewed by its holder
    await q.release_lease("b")               # not b's to let go
    assert not await q.hold_lease("b", 5)
    await q.release_lease("a")
    assert await q.hold_lease("b", 5)
