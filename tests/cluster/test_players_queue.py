"""Play now over two server processes sharing one queue (issue 27, item 6): real processes,
one real store; players on both sides, nobody seated twice."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.server.netclient import NetClient

from .conftest import Fleet, registered


async def test_two_processes_share_one_queue_without_seating_anyone_twice(
        fleet: Fleet, redis_client: Any):
    for _ in range(2):
        await fleet.start("--queue-tick", "0.05")
    clients = [await NetClient.open(fleet.url(i % 2), f"P{i}") for i in range(12)]
    try:
        await registered(fleet, redis_client, clients, "p")
        # Everyone asks at once, on both processes: three tables' worth.
        await asyncio.gather(*(c.call("queue", rated=True, options={"deals": 1})
                               for c in clients))

        def news(c: NetClient) -> list[dict[str, Any]]:
            return [m for m in c.messages if m["type"] == "matched"]
        for c in clients:
            await c.wait_until(lambda c=c: bool(news(c)), timeout=15)
        seats: dict[str, set[int]] = {}
        for c in clients:
            (n,) = news(c)                    # told once, on whichever process it is
            assert n["seat"] not in seats.setdefault(n["table"], set())
            seats[n["table"]].add(n["seat"])
        assert len(seats) == 3 and all(s == {0, 1, 2, 3} for s in seats.values())
        # Each one's seat, as the lobby of either process tells it.
        for i, c in enumerate(clients):
            page = await c.call("list_tables")
            assert [(s["table"], s["seat"]) for s in page["seats"]] == [
                (news(c)[0]["table"], news(c)[0]["seat"])], i
        assert await redis_client.hlen(f"{fleet.key_prefix}:{{mm}}:reqs") == 0
    finally:
        for c in clients:
            await c.close()
