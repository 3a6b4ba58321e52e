"""Helpers shared by the store tests (fixtures live in conftest.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import redis.asyncio as aioredis

from server.store import Store


async def all_keys(client: aioredis.Redis, match: str = "*") -> list[bytes]:
    """Every key matching ``match`` (SCAN, so it is safe on a shared server)."""
    return [key async for key in client.scan_iter(match=match, count=500)]


async def check_presence_batches(store: Store, ttl_of: Callable[[str], Awaitable[int]]
                                 ) -> None:
    """The presence writer's batch and the keeper's read of several tables (issue 32: one
    script on one node, a pipeline on a Cluster) mean what one count at a time means: a
    table may come twice in a batch, a count that reaches 0 leaves, each hash gets the
    batch's lifetime."""
    await store.presence_many([("pa", "proc-a|p1", 1), ("pa", "proc-a|p2", 2),
                               ("pb", "proc-a|p1", 1), ("pa", "proc-a|p2", -1)], 60)
    await store.presence_many([("pb", "proc-a|p1", -1), ("pc", "proc-b|p3", 1)], 90)
    await store.presence_many([], 60)
    assert await store.presents(["pa", "pb", "pc", "pd"]) == {
        "pa": {"proc-a|p1": 1, "proc-a|p2": 1}, "pb": {}, "pc": {"proc-b|p3": 1}, "pd": {}}
    assert await store.presents([]) == {}
    assert await store.present("pa") == {"proc-a|p1": 1, "proc-a|p2": 1}
    assert 0 < await ttl_of("pa") <= 60
    assert 60 < await ttl_of("pc") <= 90
