"""A command's reply and its commit's events go out in one write, at once, and a peer that
sends is not pinged (issue 32).

A play's reply and the events of its commit reach the player who played as one system call,
not one each: at human pace every write is a ``send`` of its own, the largest single cost
in a profile of 1,000 tables (BENCHMARKS.md). They are written by the step that committed
the play, not a later turn of the loop (which cost 7-9% of the plays per second at full
pace). Order is kept (docs/PROTOCOL.md: the reply first, then the events), and a peer that
does not read is still closed (4008) once its unsent bytes pass the bound:
tests/server/test_abuse.py.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from websockets.frames import Frame, Opcode

from server.app import running
from server.viewer import hold_write, writes_held
from server.wire import Client

from .conftest import server_settings
from .netclient import NetClient
from .players import four_humans


def _peer(server: Any, player_id: str) -> Client:
    return next(c for c in server.hub.clients if c.player_id == player_id)


async def test_a_plays_reply_and_its_events_are_one_write(connect, server):
    clients = [await connect(f"P{i}") for i in range(4)]
    table = await four_humans(clients)                  # dealer 3: seat 0 leads (R10)
    hand = await clients[0].wait_event(lambda e: e["type"] == "hand_dealt")
    peer = _peer(server, clients[0].welcome["player_id"])
    writes: list[bytes] = []
    writers: list[asyncio.Task[Any] | None] = []
    transport = peer.ws.transport
    write = transport.write

    def counted(data: bytes | bytearray | memoryview) -> None:
        writes.append(bytes(data))
        writers.append(asyncio.current_task())
        write(data)

    transport.write = counted  # type: ignore[method-assign]
    try:
        seen = len(clients[0].events)
        reply = await clients[0].request("play", table=table, card=hand["event"]["cards"][0])
        assert reply["type"] == "ok"
        await clients[0].wait_event(lambda e: e["type"] == "card_played")
    finally:
        transport.write = write  # type: ignore[method-assign]
    # The reply and the play's events (card_played, the next turn) in one write, in order,
    # made by the task that committed the play (a callback of a later turn has none).
    assert len(writes) == 1, [len(w) for w in writes]
    assert writers[0] is not None
    played = [e["event"]["type"] for e in clients[0].events[seen:]]
    assert played[0] == "card_played" and len(played) >= 2
    # The reply's frame first (docs/PROTOCOL.md), then the events' frames.
    assert writes[0].index(b"\xa2ok") < writes[0].index(b"\xa5event")


def _count_pings(client: NetClient) -> list[float]:
    """The server's PINGs this real client receives (it answers them as ever)."""
    pings: list[float] = []
    ws = client.ws
    process = ws.process_event

    def counted(event: Any) -> None:
        if isinstance(event, Frame) and event.opcode is Opcode.PING:
            pings.append(time.monotonic())
        process(event)

    ws.process_event = counted  # type: ignore[method-assign]
    return pings


async def test_keepalive_pings_only_a_silent_peer(redis_url, key_prefix, redis_client):
    """A peer that sends is there: the server pings only one silent for a whole interval
    (issue 32: at human pace the pings of 4,000 players cost 4% of a process), and still
    pings, and so can drop, a silent one."""
    settings = server_settings(redis_url, key_prefix, ping_interval_s=0.2, ping_timeout_s=5)
    async with running(settings) as srv:
        url = f"ws://127.0.0.1:{srv.port}"
        chatty, silent = await NetClient.open(url, "Chatty"), await NetClient.open(url, "Quiet")
        heard, idle = _count_pings(chatty), _count_pings(silent)
        async with asyncio.timeout(20):
            while len(idle) < 4:                     # four intervals of silence, pinged
                reply = await chatty.request("ping")    # the protocol's own ping (a command)
                assert reply["type"] == "pong"
                await asyncio.sleep(0.05)
        assert heard == [], heard
        await chatty.close()
        await silent.close()


async def test_a_silent_peer_that_never_answers_the_ping_is_dropped(redis_url, key_prefix,
                                                                    redis_client):
    settings = server_settings(redis_url, key_prefix, ping_interval_s=0.2, ping_timeout_s=0.3)
    async with running(settings) as srv:
        url = f"ws://127.0.0.1:{srv.port}"
        gone = await NetClient.open(url, "Gone")
        player = gone.welcome["player_id"]
        assert any(c.player_id == player for c in srv.hub.clients)
        gone.ws.transport.pause_reading()          # reads nothing: no pong ever comes
        async with asyncio.timeout(10):
            while any(c.player_id == player for c in srv.hub.clients):  # noqa: ASYNC110
                await asyncio.sleep(0.05)
        gone.ws.transport.abort()


def test_held_writes_go_out_at_the_outermost_holds_end_in_order_even_on_failure() -> None:
    done: list[str] = []
    assert not hold_write(lambda: done.append("now"))     # no hold: the caller writes
    try:
        with writes_held():
            assert hold_write(lambda: done.append("a"))
            with writes_held():
                assert hold_write(lambda: done.append("b"))
            assert done == []                             # the inner end writes nothing
            raise RuntimeError("a failure inside")
    except RuntimeError:
        pass
    assert done == ["a", "b"]
    assert not hold_write(lambda: done.append("later"))   # the hold is over
