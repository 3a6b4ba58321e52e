"""A table's spectator count is news (issue 31, item 8: ``TableInfo.spectators`` in a
``table_changed``), but news that costs a commit and a frame to every viewer: a client
looping ``spectate``/``leave`` made one of each per command (issue 30's red-team note). A
table now tells its count at most once per ``SPECTATORS_EVERY_S``: the first change at
once, the rest together after the pause, and the last count always."""

from __future__ import annotations

import time
from typing import Any

from server.app import running
from server.table.attending import SPECTATORS_EVERY_S

from .conftest import server_settings
from .netclient import NetClient


def told(client: NetClient, table: str) -> list[int]:
    return [e["event"]["table"]["spectators"] for e in client.events
            if e["table"] == table and e["event"]["type"] == "table_changed"]


async def test_a_spectate_leave_loop_costs_a_commit_a_second_at_most(
        redis_url: str, key_prefix: str, redis_client: Any) -> None:
    # The loop as fast as a client may go: the command rate limit out of the way.
    settings = server_settings(redis_url, key_prefix, rate_per_second=10_000.0,
                               rate_burst=10_000)
    async with running(settings) as srv:
        url = f"ws://127.0.0.1:{srv.port}"
        ana = await NetClient.open(url, "Ana")
        sam = await NetClient.open(url, "Sam")
        try:
            table = (await ana.call("create_table", options={"deals": 1}))["table"]
            held = srv.hub.lobby.tables[table]
            before_version, before_told = held.version, len(told(ana, table))
            start = time.monotonic()
            for _ in range(40):
                await sam.call("spectate", table=table)
                await sam.call("leave", table=table)
            await sam.call("spectate", table=table)          # Sam stays: one watches
            await ana.wait_until(lambda: told(ana, table)[-1:] == [1], timeout=5)
            elapsed = time.monotonic() - start
            bound = 2 + elapsed / SPECTATORS_EVERY_S
            assert held.version - before_version <= bound, (held.version, before_version)
            assert len(told(ana, table)) - before_told <= bound, told(ana, table)
        finally:
            await ana.close()
            await sam.close()
