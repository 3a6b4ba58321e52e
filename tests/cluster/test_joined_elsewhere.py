"""A table made on one process and joined at once from another: the maker hears the match
start (found by bench/soak.py, issue 30; before the fix the maker's process subscribed to
the table's channel after the other process had already published the joins and the
auto-start, and in 7 of 8 tries the maker heard nothing more until it resumed)."""

from __future__ import annotations

from tests.server.netclient import NetClient

from .conftest import Fleet


async def test_the_maker_hears_a_match_that_players_elsewhere_started(fleet: Fleet):
    for _ in range(2):
        await fleet.start()
    for trial in range(6):
        ana = await NetClient.open(fleet.url(0), f"Ana{trial}")
        others = [await NetClient.open(fleet.url(1), f"P{trial}{i}") for i in range(3)]
        table = (await ana.call("create_table", options={
            "deals": 1, "auto_start": True, "bot_delay_ms": 0}))["table"]
        for seat, other in enumerate(others, start=1):
            await other.call("join", table=table, seat=seat)
        # R8: the deal starts once the fourth seat is taken; the maker, alone on its
        # process, must hear it without resuming.
        await ana.wait_event(lambda e: e["type"] == "deal_started", timeout=10)
        for c in (ana, *others):
            await c.close()
