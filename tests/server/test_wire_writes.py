"""What a connection is sent in one turn of the event loop goes out in one write (issue 32).

A play's reply and the events of its commit reach the player who played as one system call,
not one each: at human pace every write is a ``send`` of its own, the largest single cost
in a profile of 1,000 tables (docs/BENCHMARKS.md). Order is kept (docs/PROTOCOL.md: the
reply first, then the events), and a peer that does not read is still closed (4008) once
its unsent bytes pass the bound: tests/server/test_abuse.py.
"""

from __future__ import annotations

from typing import Any

from server.wire import Client

from .players import four_humans


def _peer(server: Any, player_id: str) -> Client:
    return next(c for c in server.hub.clients if c.player_id == player_id)


async def test_a_plays_reply_and_its_events_are_one_write(connect, server):
    clients = [await connect(f"P{i}") for i in range(4)]
    table = await four_humans(clients)                  # dealer 3: seat 0 leads (R10)
    hand = await clients[0].wait_event(lambda e: e["type"] == "hand_dealt")
    peer = _peer(server, clients[0].welcome["player_id"])
    writes: list[bytes] = []
    transport = peer.ws.transport
    write = transport.write

    def counted(data: bytes | bytearray | memoryview) -> None:
        writes.append(bytes(data))
        write(data)

    transport.write = counted  # type: ignore[method-assign]
    try:
        seen = len(clients[0].events)
        reply = await clients[0].request("play", table=table, card=hand["event"]["cards"][0])
        assert reply["type"] == "ok"
        await clients[0].wait_event(lambda e: e["type"] == "card_played")
    finally:
        transport.write = write  # type: ignore[method-assign]
    # The reply and the play's events (card_played, the next turn) in one write, in order.
    assert len(writes) == 1, [len(w) for w in writes]
    played = [e["event"]["type"] for e in clients[0].events[seen:]]
    assert played[0] == "card_played" and len(played) >= 2
    # The reply's frame first (docs/PROTOCOL.md), then the events' frames.
    assert writes[0].index(b"\xa2ok") < writes[0].index(b"\xa5event")
