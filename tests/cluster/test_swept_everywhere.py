"""A table its owner sweeps leaves every process's memory (issue 30: found by
bench/soak.py; before the fix every process but the owner kept each swept table it had held,
its Table object and its channel subscription, for ever)."""

from __future__ import annotations

import asyncio

from tests.server.netclient import NetClient
from tests.server.test_metrics import scrape, total

from .conftest import Fleet


async def held(fleet: Fleet, i: int) -> float:
    _, samples = await scrape(fleet.ports[i])
    return total(samples, "aluette_tables")


async def test_a_swept_table_leaves_the_processes_that_did_not_own_it(fleet: Fleet):
    for _ in range(2):
        await fleet.start("--sweep-interval", "1", "--waiting-ttl", "1")
    a = await NetClient.open(fleet.url(0), "Ana")
    b = await NetClient.open(fleet.url(1), "Bea")
    table = (await a.call("create_table", options={"deals": 1}))["table"]
    await b.call("join", table=table, seat=1)          # both processes hold the table
    assert await held(fleet, 0) == 1 and await held(fleet, 1) == 1
    # Nobody changes the waiting table: its owner closes it, and both players hear so.
    for c in (a, b):
        await c.wait_event(lambda e: e["type"] == "table_changed"
                           and e["table"]["status"] == "abandoned", timeout=20)
    async with asyncio.timeout(10):
        while await held(fleet, 0) + await held(fleet, 1) > 0:  # noqa: ASYNC110 - no event
            await asyncio.sleep(0.1)
    await a.close()
    await b.close()
