"""A table its owner sweeps leaves every process's memory (issue 30: found by
bench/soak.py; before the fix every process but the owner kept each swept table it had held,
its Table object and its channel subscription, for ever)."""

from __future__ import annotations

import asyncio
import gc

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


async def test_nothing_of_a_swept_table_stays_in_the_other_process(redis_url, key_prefix,
                                                                   redis_client):
    """Two servers in this test process on one store: once the owner has swept a table,
    neither keeps anything of it (the non-owner's lobby listing kept its state, one per
    table for ever: RSS grew by about 14 MiB per 1,000 soak lifecycles). The event bus's
    last-heard table is the one reference allowed (bounded: one per process)."""
    from server.app import running
    from server.table.state import TableState
    from tests.server.conftest import server_settings

    settings = server_settings(redis_url, key_prefix, sweep_interval_s=0.5, waiting_ttl_s=1)
    async with running(settings) as one, running(settings) as two:
        a = await NetClient.open(f"ws://127.0.0.1:{one.port}", "Ana")
        b = await NetClient.open(f"ws://127.0.0.1:{two.port}", "Bea")
        table = (await a.call("create_table", options={"deals": 1}))["table"]
        await b.call("join", table=table, seat=1)
        await b.call("list_tables")                      # the lobby's caches know it
        await a.call("list_tables")
        await b.wait_event(lambda e: e["type"] == "table_changed"
                           and e["table"]["status"] == "abandoned", timeout=20)
        async with asyncio.timeout(10):
            while one.hub.tables or two.hub.tables:  # noqa: ASYNC110 - no event for this
                await asyncio.sleep(0.05)
        await a.close()
        await b.close()
        for srv in (one, two):
            lobby = srv.hub.lobby
            assert table not in lobby.listing._local
            assert table not in lobby.openings._address_of
        gc.collect()
        alive = [o for o in gc.get_objects() if isinstance(o, TableState) and o.id == table]
        assert len(alive) <= 2
