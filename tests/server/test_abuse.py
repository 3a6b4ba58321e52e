"""Limits that hold under abuse (issue 10, findings 10-14): real server, real sockets.

Every test here is one thing an attacker did to a running server, and what must happen.
"""

from __future__ import annotations

import asyncio
import socket
import time
from typing import Any

import pytest
from websockets.asyncio.client import connect as ws_connect

from server.app import running

from .conftest import server_settings
from .netclient import NetClient


async def wait_until(pred: Any, timeout: float = 10) -> None:
    """Wait for a server-side condition that has no event of its own (a socket closing,
    a counter going down), yielding to the loop the server runs in; bounded by a timeout."""
    async with asyncio.timeout(timeout):
        while not pred():  # noqa: ASYNC110 - there is no event to wait on for these
            await asyncio.sleep(0.01)


async def raw(url: str):
    return await ws_connect(url, compression=None, max_size=2**20)


async def bots_only(creator: NetClient, **options: Any) -> str:
    table = (await creator.call("create_table", options={"bot_delay_ms": 0, **options}))["table"]
    for seat in (1, 2, 3):
        await creator.call("add_bot", table=table, seat=seat, level="random")
    await creator.call("leave", table=table)
    await creator.call("add_bot", table=table, seat=0, level="random")
    return table


# ------------------------------------------------------------------ finding 10


async def test_a_ping_flood_from_a_client_that_never_reads_is_cut_off(url, server):
    """websockets answers every PING with a PONG; a client that floods PINGs and never
    reads used to pin those PONGs in server memory forever (39 -> 309 MB in 15 s)."""
    ana = await NetClient.open(url, "Ana")
    before = server.hub.count.total
    ana.ws.transport.pause_reading()            # never read a PONG
    for _ in range(2000):
        try:
            ana.ws.protocol.send_ping(b"x" * 125)
            ana.ws.send_data()
        except Exception:   # the server has cut us off already
            break
        await asyncio.sleep(0)
    # The server aborts the connection instead of queueing PONGs for it.
    await wait_until(lambda: server.hub.count.total < before)
    assert not any(c.player_id == ana.welcome["player_id"] for c in server.hub.clients)


async def test_dropping_a_reader_that_never_reads_never_waits_on_it(redis_url, key_prefix,
                                                                    redis_client):
    settings = server_settings(redis_url, key_prefix, max_send_buffer=8192)
    async with running(settings) as srv:
        url = f"ws://127.0.0.1:{srv.port}"
        boss, slow = await NetClient.open(url, "Boss"), await NetClient.open(url, "Slow")
        table = await bots_only(boss, deals=20)
        await boss.call("spectate", table=table)
        await slow.call("spectate", table=table)
        slow.ws.transport.get_extra_info("socket").setsockopt(
            socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        slow.ws.transport.pause_reading()       # and it never reads again
        peer = next(c for c in srv.hub.clients if c.player_id == slow.welcome["player_id"])
        peer.ws.transport.get_extra_info("socket").setsockopt(
            socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        await boss.call("start", table=table)
        await wait_until(lambda: peer.dropped, 60)
        # Its socket is gone within the close timeout, although it read nothing at all.
        await wait_until(lambda: peer.ws.transport is None or peer.ws.transport.is_closing(),
                         settings.close_timeout_s + 3)
        await wait_until(lambda: peer not in srv.hub.clients, settings.close_timeout_s + 3)
        await boss.close()


# ------------------------------------------------------------------ finding 11


async def test_connections_are_limited_per_address_hello_or_not(redis_url, key_prefix,
                                                                redis_client):
    settings = server_settings(redis_url, key_prefix, max_connections_per_address=3)
    async with running(settings) as srv:
        url = f"ws://127.0.0.1:{srv.port}"
        silent = [await raw(url) for _ in range(3)]    # never say hello: they still count
        refused = await raw(url)
        with pytest.raises(Exception):  # noqa: B017 - any close ends the recv
            await asyncio.wait_for(refused.recv(), 5)
        assert refused.close_code == 1013
        for ws in silent:
            await ws.close()
        await wait_until(lambda: srv.hub.count.total == 0)
        ok = await NetClient.open(url, "Later")         # room again
        await ok.close()


async def test_a_silent_connection_is_closed_at_the_hello_timeout(redis_url, key_prefix,
                                                                  redis_client):
    settings = server_settings(redis_url, key_prefix, hello_timeout_s=0.5)
    async with running(settings) as srv:
        ws = await raw(f"ws://127.0.0.1:{srv.port}")
        with pytest.raises(Exception):  # noqa: B017
            await asyncio.wait_for(ws.recv(), 5)
        assert ws.close_code == 4004


async def test_new_sessions_are_limited_per_address(redis_url, key_prefix, redis_client):
    """One client said hello 415 times a second, each storing a session forever."""
    settings = server_settings(redis_url, key_prefix, new_sessions_per_minute=4)
    async with running(settings) as srv:
        url = f"ws://127.0.0.1:{srv.port}"
        first = await NetClient.open(url, "A")
        second = await NetClient.open(url, "B")
        refused = await ws_connect(url, compression=None)
        import msgpack
        await refused.send(msgpack.packb({"type": "hello", "id": 1, "versions": [1],
                                          "name": "C"}))
        reply = msgpack.unpackb(await refused.recv())
        assert reply["code"] == "rate_limited"
        with pytest.raises(Exception):  # noqa: B017
            await asyncio.wait_for(refused.recv(), 5)
        assert refused.close_code == 1013
        # A known session still comes back (its token is not a new session).
        back = await NetClient.open(url, "A", token=first.welcome["session"], ids=first.ids)
        assert back.welcome["player_id"] == first.welcome["player_id"]
        for c in (second, back):
            await c.close()


# ------------------------------------------------------------------ finding 12


async def test_tables_are_limited_per_player_and_concurrent_creates_never_overshoot(
        redis_url, key_prefix, redis_client):
    settings = server_settings(redis_url, key_prefix, max_tables=5)
    async with running(settings) as srv:
        url = f"ws://127.0.0.1:{srv.port}"
        ana = await NetClient.open(url, "Ana")
        for _ in range(3):
            await ana.call("create_table", options={"deals": 1})
        err = await ana.request("create_table", options={"deals": 1})
        assert err["code"] == "too_many_tables" and err["details"] == {"limit": 3}
        others = [await NetClient.open(url, f"P{i}") for i in range(6)]
        replies = await asyncio.gather(*(o.request("create_table", options={"deals": 1})
                                         for o in others))
        assert sorted(r["type"] for r in replies) == ["error"] * 4 + ["ok"] * 2
        assert len(srv.hub.tables) == 5
        for c in (ana, *others):
            await c.close()


async def test_a_waiting_table_left_alone_is_closed_even_with_its_creator_connected(
        redis_url, key_prefix, redis_client):
    settings = server_settings(redis_url, key_prefix, waiting_ttl_s=60)
    async with running(settings) as srv:
        ana = await NetClient.open(f"ws://127.0.0.1:{srv.port}", "Ana")
        table = (await ana.call("create_table", options={"deals": 1}))["table"]
        assert await srv.hub.lobby.sweep(now=time.time() + 61) == [table]
        closed = await ana.wait_event(lambda e: e["type"] == "table_changed"
                                      and e["table"]["status"] == "abandoned")
        assert closed["table"] == table
        assert await srv.hub.store.load_table(table) is None
        await ana.close()


# ------------------------------------------------------------------ finding 13


async def test_bot_cost_is_capped_and_bots_pause_when_nobody_watches(url, server, connect):
    ana = await connect("Ana")
    table = await bots_only(ana, deals=50, bot_budget=4.0, bot_level="expert")
    live = server.hub.tables[table]
    assert live.state.options.bot_budget == 1.0       # the server's --max-bot-budget
    await ana.call("spectate", table=table)
    await ana.call("start", table=table)
    await ana.wait_event(lambda e: e["type"] == "card_played")
    await ana.call("leave", table=table)              # nobody watches any more
    assert not live.humans_watching()
    assert live.clock.due() is None                   # nothing is scheduled: bots paused
    async with live.lock:                             # (a move being stored finishes)
        version = live.version
    await ana.call("ping")
    assert live.version == version
    # Someone comes to watch: the bots play on.
    mark = len(ana.payloads("card_played"))
    await ana.call("spectate", table=table)
    await ana.wait_until(lambda: len(ana.payloads("card_played")) > mark)


# ------------------------------------------------------------------ finding 14


async def test_resume_by_a_stranger_counts_as_a_spectator(redis_url, key_prefix, redis_client):
    settings = server_settings(redis_url, key_prefix, max_spectators=1)
    async with running(settings) as srv:
        url = f"ws://127.0.0.1:{srv.port}"
        ana, bo, cy = [await NetClient.open(url, n) for n in ("Ana", "Bo", "Cy")]
        table = (await ana.call("create_table", options={"deals": 1}))["table"]
        await bo.call("spectate", table=table)
        err = await cy.request("resume", token=cy.welcome["session"], table=table, last_seq=0)
        assert err["code"] == "too_many_spectators"
        assert srv.hub.tables[table].spectators() == 1
        for c in (ana, bo, cy):
            await c.close()


async def test_a_resume_reads_its_replay_without_holding_up_the_table(connect, server, url):
    from .players import four_humans

    clients = [await connect(f"P{i}") for i in range(4)]
    table = await four_humans(clients)
    await clients[0].wait_event(lambda e: e["type"] == "turn")
    last = max(clients[3].seqs(table))
    store = server.hub.store
    release = asyncio.Event()
    reading = asyncio.Event()
    real = store.read_log

    async def slow_read_log(*args: Any, **kw: Any) -> Any:
        reading.set()
        await release.wait()
        return await real(*args, **kw)

    store.read_log = slow_read_log  # type: ignore[method-assign]
    try:
        again = await NetClient.open(url, "P3", token=clients[3].welcome["session"],
                                     ids=clients[3].ids)
        resume = asyncio.create_task(again.request(
            "resume", token=again.welcome["session"], table=table, last_seq=last))
        await asyncio.wait_for(reading.wait(), 5)
        # While the replay is being read, the table takes a play at once.
        hand = (await clients[0].wait_event(lambda e: e["type"] == "hand_dealt"))
        ok = await asyncio.wait_for(
            clients[0].call("play", table=table, card=hand["event"]["cards"][0]), 5)
        assert ok == {"table": table}
        assert not resume.done()
        release.set()
        reply = await resume
        assert reply["type"] == "ok"
        await again.wait_event(lambda e: e["type"] == "card_played")
        seqs = [e["seq"] for e in again.events]
        assert seqs == list(range(last + 1, last + 1 + len(seqs)))   # in order, no gap
    finally:
        store.read_log = real  # type: ignore[method-assign]


async def test_list_tables_is_paginated(redis_url, key_prefix, redis_client):
    settings = server_settings(redis_url, key_prefix, max_tables_per_player=100,
                               max_tables_per_address=100, rate_burst=200)
    async with running(settings) as srv:
        ana = await NetClient.open(f"ws://127.0.0.1:{srv.port}", "Ana")
        made = {(await ana.call("create_table", options={"deals": 1}))["table"]
                for _ in range(55)}
        first = await ana.call("list_tables")
        assert len(first["tables"]) == 50 and first["next"]
        second = await ana.call("list_tables", cursor=first["next"])
        assert len(second["tables"]) == 5 and second["next"] is None
        listed = [t["table"] for t in first["tables"] + second["tables"]]
        assert len(listed) == len(set(listed)) and set(listed) == made
        small = await ana.call("list_tables", limit=7)
        assert len(small["tables"]) == 7
        assert (await ana.request("list_tables", cursor="!!"))["code"] == "invalid_field"
        await ana.close()
