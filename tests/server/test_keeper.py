"""The cluster keeper walks the tables while tables are made (issue 32, item 4).

With two processes on one store, the keeper refreshes the presence counts of every table
its process runs, awaiting the store for each. It walked the lobby's live dict of tables:
a table created meanwhile made it fail with ``RuntimeError: dictionary changed size during
iteration`` (47 ``cluster keeper failed`` errors in one load run). It walks a snapshot now.
"""

from __future__ import annotations

import asyncio

from server.app import running

from .conftest import server_settings
from .netclient import NetClient

TABLES = 40


async def test_the_keeper_survives_tables_made_while_it_walks_them(
        redis_url, key_prefix, redis_client) -> None:
    settings = server_settings(redis_url, key_prefix, max_tables_per_player=4 * TABLES,
                               max_tables_per_address=4 * TABLES,
                               rate_per_second=10_000, rate_burst=10_000)
    async with running(settings) as a, running(settings) as b:
        ka, kb = a.hub.cluster, b.hub.cluster
        await kb.keep_once(b.hub.lobby, full=True)    # b beats: a now sees two processes
        await ka.keep_once(a.hub.lobby, full=True)
        assert ka.others_alive() and len(ka.live) == 2
        ana = await NetClient.open(f"ws://127.0.0.1:{a.port}", "Ana")
        for _ in range(TABLES):                       # tables a runs: the walk awaits each
            await ana.call("create_table", options={"deals": 1})

        async def make_more() -> None:
            for _ in range(TABLES):
                await ana.call("create_table", options={"deals": 1})

        async def keep() -> None:
            for _ in range(20):
                await ka.keep_once(a.hub.lobby)       # raised RuntimeError before the fix

        await asyncio.gather(make_more(), keep())
        assert len(a.hub.tables) == 2 * TABLES
        assert all(t.owned for t in a.hub.tables.values())
        await ana.close()
