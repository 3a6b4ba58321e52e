"""Sessions, tokens, stored data and records (issue 10, findings 5, 7, 8, 16).

Real server, real store: what a stolen token can do, what strangers leave behind, who
may read a record, and what a failing bot or a shutdown leaves running.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from server.app import running
from server.game.record import verify_record

from .conftest import server_settings
from .netclient import NetClient, ServerError
from .players import autoplay, four_humans


async def test_a_stolen_token_dies_when_its_owner_comes_back(url: str) -> None:
    """An attacker who copied a token used to keep a branch of the session forever."""
    victim = await NetClient.open(url, "Ana")
    stolen = victim.welcome["session"]
    thief = await NetClient.open(url, "Eve", token=stolen)
    assert thief.welcome["player_id"] == victim.welcome["player_id"]
    # The victim's connection is replaced (4009); it reconnects with the token it has.
    await asyncio.wait_for(victim.closed.wait(), 10)
    assert victim.ws.close_code == 4009
    back = await NetClient.open(url, "Ana", token=stolen, ids=victim.ids)
    await back.call("list_tables")                 # its first command: the welcome arrived
    # The thief's connection is closed and its token is dead; the stolen one is dead too.
    await asyncio.wait_for(thief.closed.wait(), 10)
    assert thief.ws.close_code == 4009
    for token in (thief.welcome["session"], stolen):
        with pytest.raises(ServerError) as err:
            await NetClient.open(url, "Eve", token=token)
        assert err.value.code == "bad_token"
    assert (await back.call("list_tables"))["seats"] == []
    await back.close()


async def test_sessions_expire(redis_url: str, key_prefix: str, redis_client: Any) -> None:
    settings = server_settings(redis_url, key_prefix, session_ttl_s=1)
    async with running(settings) as srv:
        url = f"ws://127.0.0.1:{srv.port}"
        ana = await NetClient.open(url, "Ana")
        token, player = ana.welcome["session"], ana.welcome["player_id"]
        await ana.close()
        key = srv.hub.store.keys.session(player)
        async with asyncio.timeout(10):                    # Redis expires the key itself
            while await redis_client.exists(key):  # noqa: ASYNC110 - Redis has no event
                await asyncio.sleep(0.1)
        with pytest.raises(ServerError) as err:
            await NetClient.open(url, "Ana", token=token)
        assert err.value.code == "bad_token"


async def test_strangers_who_join_and_leave_leave_nothing_in_the_table(connect, server):
    """3,000 strangers used to grow the table document from 681 B to 293 KB."""
    ana = await connect("Ana")
    table = (await ana.call("create_table", options={"deals": 1}))["table"]
    before = (await server.hub.store.load_table(table)).doc
    for i in range(20):
        stranger = await connect(f"S{i}")
        await stranger.call("join", table=table, seat=1)
        await stranger.call("leave", table=table)
        await stranger.close()
    after = (await server.hub.store.load_table(table)).doc
    assert len(after) <= len(before) + 16   # only counters moved, nobody was remembered


async def test_every_key_of_a_session_and_a_table_has_a_lifetime(connect, server,
                                                                 redis_client):
    ana = await connect("Ana")
    table = (await ana.call("create_table", options={"deals": 1}))["table"]
    await ana.call("add_bot", table=table, seat=1, level="random")
    prefix = server.hub.store.prefix
    keys = [k.decode() async for k in redis_client.scan_iter(match=f"{prefix}*")]
    forever = {k for k in keys if await redis_client.ttl(k) == -1}
    # Only the indexes (swept) and the store's identity (it must outlive everything) stay.
    # (and the process list, trimmed of processes an hour dead at each heartbeat).
    assert forever <= {f"{prefix}:tables", f"{prefix}:records",
                       f"{prefix}:store-identity", f"{prefix}:procs"}, forever


async def test_a_finished_matchs_record_is_stored_with_its_last_move_and_private_ones_kept_private(
        connect, server):
    clients = [await connect(f"P{i}") for i in range(4)]
    creator = clients[0]
    created = await creator.call("create_table", private=True,
                                 options={"deals": 1, "bot_delay_ms": 0, "first_dealer": 3})
    table, code = created["table"], created["code"]
    for i in (1, 2, 3):
        await clients[i].call("join", table=table, seat=i, code=code)
    await creator.call("start", table=table)
    over = await asyncio.gather(*(autoplay(c, table, i) for i, c in enumerate(clients)))
    # The record is in the store as soon as the match is over: it was written with the
    # last card, in one script (it used to be a second write that was never retried).
    assert await server.hub.store.load_record(table) is not None
    assert verify_record(over[0]["record"])["points"] == over[0]["points"]
    assert (await clients[2].call("get_record", table=table))["record"] == over[0]["record"]
    outsider = await connect("Outsider")
    assert (await outsider.request("get_record", table=table))["code"] == "no_such_table"
    # Still true once the table itself is cleaned up.
    await server.hub.lobby.sweep(now=10**12)
    assert (await outsider.request("get_record", table=table))["code"] == "no_such_table"
    assert (await clients[1].call("get_record", table=table))["record"] == over[0]["record"]


async def test_a_bot_that_raises_is_replaced_by_a_legal_move_and_logged(connect, monkeypatch,
                                                                        caplog):
    import server.bots

    def broken(level, view, rng, budget=None):
        raise RuntimeError("bot bug")

    monkeypatch.setattr(server.bots, "choose_action", broken)
    ana = await connect("Ana")
    table = (await ana.call("create_table", options={"deals": 1, "bot_delay_ms": 0}))["table"]
    await ana.call("start", table=table)          # three bots join, and all of them fail
    over = await autoplay(ana, table, 0)
    assert verify_record(over["record"])["points"] == over["points"]
    assert any("failed to decide" in r.getMessage() for r in caplog.records)


async def test_shutdown_stops_every_task_and_closing_twice_is_safe(redis_url, key_prefix,
                                                                   redis_client):
    cm = running(server_settings(redis_url, key_prefix))
    srv = await cm.__aenter__()
    ana = await NetClient.open(f"ws://127.0.0.1:{srv.port}", "Ana")
    table = await four_humans([ana] + [await NetClient.open(f"ws://127.0.0.1:{srv.port}", n)
                                       for n in ("B", "C", "D")])
    assert srv.hub.supervisor.running >= 2            # the sweep and the table's clock
    held = srv.hub.tables[table]       # a closed table also leaves the registry
    await cm.__aexit__(None, None, None)
    assert srv.hub.supervisor.running == 0
    assert held.closed
    await srv.hub.close()                              # a second close does nothing
