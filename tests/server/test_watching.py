"""``list_tables`` names the tables a player watches (issue 33, finding 3; protocol 1.5).

A spectator used to have to remember its tables itself: ``list_tables`` listed only the
seats to resume. Now its ``watching`` lists the tables the player watches without a seat,
from the store (so it survives a restart), bounded, and gone once the player leaves, sits
down or the table is cleaned up.
"""

from __future__ import annotations

import time
from typing import Any

from redis.asyncio import Redis

import protocol
from server.app import running
from server.store import Store

from .conftest import server_settings
from .netclient import NetClient


async def test_a_spectators_tables_are_listed_and_survive_a_restart(
        redis_url: str, key_prefix: str, redis_client: Redis) -> None:
    settings = server_settings(redis_url, key_prefix)
    async with running(settings) as srv:
        url = f"ws://127.0.0.1:{srv.port}"
        ana = await NetClient.open(url, "Ana")
        table = (await ana.call("create_table", options={"deals": 1}))["table"]
        sam = await NetClient.open(url, "Sam")
        assert (await sam.call("list_tables"))["watching"] == []
        await sam.call("spectate", table=table)
        listed = await sam.call("list_tables")
        assert listed["watching"] == [{"table": table, "status": "waiting"}]
        assert listed["seats"] == []
        # Ana sits there: her table is a seat of hers, never also one she watches.
        assert (await ana.call("list_tables"))["watching"] == []
        token, ids = sam.welcome["session"], sam.ids
        key = srv.hub.store.keys.watching(sam.welcome["player_id"])
        assert 0 < await redis_client.ttl(key) <= settings.session_ttl_s
    async with running(settings) as srv:                      # a restart: same store
        url = f"ws://127.0.0.1:{srv.port}"
        back = await NetClient.open(url, "Sam", token=token, ids=ids)
        listed = await back.call("list_tables")
        assert listed["watching"] == [{"table": table, "status": "waiting"}]
        resumed = await back.call("resume", token=back.welcome["session"], table=table,
                                  last_seq=2**53 - 1)
        assert resumed["seat"] is None and resumed["snapshot"] is True
        await back.close()


async def test_leaving_or_sitting_down_takes_the_table_off_the_list(connect: Any) -> None:
    ana = await connect("Ana")
    first = (await ana.call("create_table", options={"deals": 1}))["table"]
    second = (await ana.call("create_table", options={"deals": 1}))["table"]
    sam = await connect("Sam")
    await sam.call("spectate", table=first)
    await sam.call("spectate", table=second)
    assert [w["table"] for w in (await sam.call("list_tables"))["watching"]] == [second, first]
    await sam.call("leave", table=second)
    assert [w["table"] for w in (await sam.call("list_tables"))["watching"]] == [first]
    await sam.call("join", table=first, seat=1)
    listed = await sam.call("list_tables")
    assert listed["watching"] == [] and listed["seats"] == [
        {"table": first, "seat": 1, "status": "waiting"}]


async def test_a_table_cleaned_up_is_no_longer_listed(connect: Any, server: Any) -> None:
    ana = await connect("Ana")
    table = (await ana.call("create_table", options={"deals": 1}))["table"]
    sam = await connect("Sam")
    await sam.call("spectate", table=table)
    assert (await sam.call("list_tables"))["watching"] != []
    assert await server.hub.lobby.sweep(now=time.time() + 10**6) == [table]
    await server.hub.lobby.listing.entries(fresh=True)
    assert (await sam.call("list_tables"))["watching"] == []


async def test_the_record_is_bounded_to_the_latest_tables(redis_client: Redis,
                                                          key_prefix: str) -> None:
    store = Store(redis_client, key_prefix)
    kept = protocol.MAX_WATCHING
    for i in range(kept + 5):
        await store.note_watching("p1", f"t{i}", now=1000.0 + i, kept=kept, ttl_s=600)
    assert await store.watching("p1") == [f"t{i}" for i in reversed(range(5, kept + 5))]
    await store.note_watching("p1", "t6", now=2000.0, kept=kept, ttl_s=600)  # watched again
    assert (await store.watching("p1"))[0] == "t6"
    assert len(await store.watching("p1")) == kept
    assert 0 < await redis_client.ttl(store.keys.watching("p1")) <= 600
    await store.forget_watching("p1", "t6")
    assert "t6" not in await store.watching("p1")
