"""A table's tasks live exactly as long as the table (issue 29: a task scope per table).

Every table runs a clock and a follower; both belong to the table and end with it. Before
the task scope, a swept table's follower stayed blocked on its inbox forever, keeping a
task and the whole ``Table`` for the life of the process.
"""

from __future__ import annotations

import asyncio
import gc
import time

from server.app import running
from server.table import Table

from .conftest import server_settings
from .netclient import NetClient

TABLES = 1000


def _tables_alive() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, Table))


#: Tasks of the process's own that may be alive at one count and not the other.
TRANSIENT = 4


def _table_tasks() -> list[str]:
    return sorted(t.get_name() for t in asyncio.all_tasks() if t.get_name().startswith("table "))


async def _ended(tasks: list[asyncio.Task[object]]) -> None:
    """Wait for the tables' tasks to end, then let their done-callbacks run."""
    if tasks:
        await asyncio.wait(tasks, timeout=10)
    await asyncio.sleep(0)


async def test_sweeping_a_thousand_tables_leaves_no_task_and_no_table_behind(
        redis_url, key_prefix, redis_client):
    settings = server_settings(redis_url, key_prefix, waiting_ttl_s=0, max_tables=2 * TABLES,
                               max_tables_per_player=2 * TABLES,
                               max_tables_per_address=2 * TABLES,
                               rate_per_second=100_000, rate_burst=100_000)
    async with running(settings) as srv:
        url = f"ws://127.0.0.1:{srv.port}"
        owner = await NetClient.open(url, "Owner")
        tasks_before = len(asyncio.all_tasks())
        tables_before = _tables_alive()
        made = []
        for _ in range(TABLES):
            made.append((await owner.call("create_table", options={"deals": 1}))["table"])
        assert _tables_alive() == tables_before + TABLES
        assert len(asyncio.all_tasks()) >= tasks_before + TABLES   # each runs its clock

        removed = await srv.hub.lobby.sweep(now=time.time() + 60)
        assert sorted(removed) == sorted(made)

        await _ended([t for t in asyncio.all_tasks() if t.get_name().startswith("table ")])
        # The process's own short-lived tasks (a presence flush, a store probe, a lobby
        # refresh) come and go meanwhile: a few may be alive at either count. The leak this
        # guards against left one task per table (1,000 here).
        assert len(asyncio.all_tasks()) <= tasks_before + TRANSIENT
        assert _table_tasks() == []
        assert _tables_alive() == tables_before
        await owner.close()
