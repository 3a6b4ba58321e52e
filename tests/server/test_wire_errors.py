"""Bad input over a real connection (issue 3 and 5): a clear code, nothing changed, no crash."""

from __future__ import annotations

import asyncio

import msgpack
import pytest
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed

import protocol

from .netclient import NetClient, ServerError


async def raw(url: str):
    return await ws_connect(url, compression=None, max_size=2**20)


async def test_first_frame_must_be_hello(url):
    ws = await raw(url)
    await ws.send(msgpack.packb({"type": "list_tables", "id": 3}))
    reply = msgpack.unpackb(await ws.recv())
    assert reply["code"] == "hello_required" and reply["id"] == 3
    with pytest.raises(ConnectionClosed):
        await asyncio.wait_for(ws.recv(), 5)
    assert ws.close_code == protocol.CloseCode.PROTOCOL_ERROR


async def test_unsupported_version_lists_ours_and_closes_4001(url):
    with pytest.raises(ServerError) as err:
        await NetClient.open(url, "Ana", versions=[99])
    assert err.value.code == "unsupported_version"
    assert err.value.reply["details"]["supported"] == list(protocol.SUPPORTED_VERSIONS)


@pytest.mark.parametrize(("frame", "code"), [
    (b"\xc1\xc1", "bad_frame"),                                   # not msgpack
    (msgpack.packb([1, 2, 3]), "bad_frame"),                      # not a map
    ("a text frame", "bad_frame"),                                # frames are binary
    (msgpack.packb({"type": "fly", "id": 9}), "unknown_type"),
    (msgpack.packb({"id": 9}), "unknown_type"),
    (msgpack.packb({"type": "play", "id": 9, "table": "t", "card": 3}), "invalid_field"),
    (msgpack.packb({"type": "play", "id": 9, "table": "t"}), "invalid_field"),
    (msgpack.packb({"type": "play", "id": 9, "table": "t", "card": "Xx"}), "unknown_card"),
    (msgpack.packb({"type": "join", "id": 9, "table": "t", "seat": 7}), "invalid_field"),
    (msgpack.packb({"type": "join", "id": 9, "table": "t" * 500}), "invalid_field"),
    (msgpack.packb({"type": "signal", "id": 9, "table": "t", "signal": "aces"}),
     "invalid_field"),
    (msgpack.packb({"type": "list_tables", "id": 9, "pad": "x" * 20000}), "frame_too_large"),
])
async def test_bad_frames_get_their_code_and_the_connection_stays(connect, server, frame, code):
    ana = await connect("Ana")
    table = (await ana.call("create_table", options={"deals": 1}))["table"]
    before = await server.hub.store.load_table(table)
    await ana.send_raw(frame)
    async with asyncio.timeout(10), ana.changed:
        await ana.changed.wait_for(lambda: ana.unsolicited_errors or 9 in ana.replies)
    reply = ana.replies.pop(9, None) or ana.unsolicited_errors.pop()
    assert reply["type"] == "error" and reply["code"] == code and reply["message"]
    # Still connected, nothing changed.
    assert (await ana.call("list_tables"))["tables"][0]["table"] == table
    assert await server.hub.store.load_table(table) == before


async def test_well_formed_commands_refused_for_a_field_never_close(connect):
    """Issue 33, finding 2: twelve `play {card: 5}` closed the connection with 4000.

    A message (a map with a string type and a valid id) refused for a field, a card or
    an unknown type is answered under its id and does not count as malformed."""
    ana = await connect("Ana")
    table = (await ana.call("create_table", options={"deals": 1}))["table"]
    refused: list[tuple[str, dict[str, object]]] = [
        ("play", {"table": table, "card": 5}),
        ("play", {"table": table, "card": "Xx"}),
        ("join", {"table": table, "seat": 7}),
        ("premove", {"table": table, "card": "3o"}),   # a command of a newer minor version
    ]
    codes = [(await ana.request(kind, **fields))["code"] for kind, fields in refused * 6]
    assert codes == ["invalid_field", "unknown_card", "invalid_field", "unknown_type"] * 6
    assert (await ana.call("list_tables"))["tables"][0]["table"] == table
    assert not ana.closed.is_set()


async def test_the_tenth_frame_that_is_not_a_message_closes_4000(connect):
    ana = await connect("Ana")
    not_messages = [b"\xc1", msgpack.packb([1]), msgpack.packb({"id": 3}),
                    msgpack.packb({"type": "ping"}), msgpack.packb({"type": "ping", "id": -1})]
    for frame in (not_messages * 2)[:9]:
        await ana.send_raw(frame)
    await ana.wait_until(lambda: sum(m["type"] == "error" for m in ana.messages) == 9)
    assert (await ana.call("list_tables"))["tables"] == []          # still open at nine
    await ana.send_raw(b"\xc1")
    await asyncio.wait_for(ana.closed.wait(), 10)
    assert ana.ws.close_code == protocol.CloseCode.PROTOCOL_ERROR


async def test_frame_over_the_transport_limit_closes_1009(connect):
    ana = await connect("Ana")
    await ana.send_raw(b"\x00" * (protocol.TRANSPORT_MAX_BYTES + 10))
    await asyncio.wait_for(ana.closed.wait(), 10)
    assert ana.ws.close_code == 1009


async def test_names_lose_control_characters(connect):
    evil = await connect("Ev\x1b[31mil\x07")
    assert evil.welcome["name"] == "Ev[31mil"
    table = (await evil.call("create_table", options={"deals": 1}, name="T\x1b]0;x\x07"))
    info = (await evil.call("list_tables"))["tables"][0]
    assert info["table"] == table["table"]
    assert "\x1b" not in info["name"] and "\x1b" not in info["seats"][0]["name"]


async def test_rate_limit_refuses_then_disconnects_a_flood(connect):
    ana = await connect("Ana")
    for i in range(200):
        await ana.ws.send(msgpack.packb({"type": "ping", "id": 1000 + i}))
    await asyncio.wait_for(ana.closed.wait(), 10)
    codes = [m.get("code") for m in ana.messages if m["type"] == "error"]
    assert "rate_limited" in codes
    assert sum(1 for m in ana.messages if m["type"] == "pong") >= protocol.RATE_BURST - 5
    assert ana.ws.close_code == protocol.CloseCode.RATE_LIMITED
