"""Admission control (issue 11): a saturated process refuses new work, not the games it has.

The saturation is real: a staller keeps the server's own event loop blocked most of the
time (a synchronous sleep, as a CPU-bound loop would be), so the server measures the lag
itself. While it lasts, a new table and a new session get ``server_busy`` (with
``details.retry_after_ms``; the new session is then closed 1013), and nothing is created;
a returning player's session, a join of an existing table and a play are still served.
Once the loop is free again, a new table is created as before.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager

import msgpack
import pytest
from websockets.asyncio.client import connect as ws_connect

from server.app import running

from .conftest import server_settings
from .netclient import NetClient
from .test_abuse import wait_until


@contextmanager
def saturated_loop(block_s: float = 0.1, free_s: float = 0.02) -> Iterator[None]:
    """Block the running loop ``block_s`` out of every ``block_s + free_s`` seconds."""
    loop = asyncio.get_running_loop()
    handle: asyncio.TimerHandle | None = None

    def stall() -> None:
        nonlocal handle
        time.sleep(block_s)
        handle = loop.call_later(free_s, stall)

    handle = loop.call_later(0, stall)
    try:
        yield
    finally:
        assert handle is not None
        handle.cancel()


async def test_a_saturated_server_refuses_new_tables_and_sessions_but_serves_its_games(
        redis_url, key_prefix, redis_client) -> None:
    settings = server_settings(redis_url, key_prefix, busy_lag_ms=10)
    async with running(settings) as srv:
        url = f"ws://127.0.0.1:{srv.port}"
        ana = await NetClient.open(url, "Ana")
        bea = await NetClient.open(url, "Bea")
        waiting = (await ana.call("create_table", options={"bot_delay_ms": 0}))["table"]
        playing = (await ana.call("create_table", options={"bot_delay_ms": 0}))["table"]
        for seat in (1, 2, 3):
            await ana.call("add_bot", table=playing, seat=seat, level="random")
        await ana.call("start", table=playing)
        tables_before = set(srv.hub.tables)
        assert not srv.hub.lag.busy()

        with saturated_loop():
            await wait_until(srv.hub.lag.busy)
            assert (await srv.hub.health())["busy"] is True

            # A new table: refused, with when to come back, and nothing created.
            reply = await bea.request("create_table", options={})
            assert reply["type"] == "error" and reply["code"] == "server_busy", reply
            assert 1000 <= reply["details"]["retry_after_ms"] <= 10_000
            assert set(srv.hub.tables) == tables_before

            # A new session: refused, then closed "try again later".
            stranger = await ws_connect(url, compression=None)
            await stranger.send(msgpack.packb({"type": "hello", "id": 1, "versions": [1],
                                               "name": "Cy"}))
            reply = msgpack.unpackb(await asyncio.wait_for(stranger.recv(), 10))
            assert reply["code"] == "server_busy", reply
            with pytest.raises(Exception):  # noqa: B017 - the close is the point
                await asyncio.wait_for(stranger.recv(), 10)
            assert stranger.close_code == 1013

            # What is already here is served: a returning session, a join, a play.
            back = await NetClient.open(url, "Ana", token=ana.welcome["session"],
                                        ids=ana.ids)
            assert back.welcome["player_id"] == ana.welcome["player_id"]
            assert (await bea.call("join", table=waiting))["seat"] == 1
            table = srv.hub.tables[playing]
            await wait_until(lambda: table.match is not None and table.match.to_act == 0)
            card = table.match.hands[0][0]
            assert (await back.call("play", table=playing, card=card)) == {"table": playing}
            assert card not in table.match.hands[0]
            assert srv.hub.lag.busy(), "the loop was free again before the checks were done"

        await wait_until(lambda: not srv.hub.lag.busy())
        created = await bea.call("create_table", options={})
        assert created["table"] in srv.hub.tables
        for c in (back, bea):
            await c.close()


async def test_admission_control_can_be_turned_off(redis_url, key_prefix, redis_client) -> None:
    """``--busy-lag-ms 0``: however late the loop, new tables are taken."""
    settings = server_settings(redis_url, key_prefix, busy_lag_ms=0)
    async with running(settings) as srv:
        ana = await NetClient.open(f"ws://127.0.0.1:{srv.port}", "Ana")
        with saturated_loop():
            await wait_until(lambda: srv.hub.lag.recent_ms() > 10)
            assert not srv.hub.lag.busy()
            assert (await ana.call("create_table", options={}))["table"] in srv.hub.tables
        await ana.close()

