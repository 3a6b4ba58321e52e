"""Two ``hello``s with one token at the same moment (issue 30, item 5; red-team finding).

A session has exactly one current token and one live connection (docs/PROTOCOL.md,
"Sessions and tokens"). Two connections presenting the same token at once used to leave
the session without a live connection in 9 rounds of 20: the store rotated the token for
both, in one order, while the server closed the other connection in the order the store's
answers came back, so the connection it kept could hold the token the other rotation had
already replaced (closed 4009 at its first command). Now the later rotation wins, whatever
order the answers come in: exactly one connection lives, it holds the session's one
current token, and every other token (the presented one once the survivor has spoken, the
loser's if it got one) is refused.

Real server and real sockets on 127.0.0.1, many rounds.
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgpack
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from server.app import Running
from server.sessions import token_digest

from .netclient import NetClient

ROUNDS = 20


async def _until_reply(ws: ClientConnection, cid: int) -> dict[str, Any]:
    """The reply to command ``cid``, or ``{"type": "closed", "code": ...}``."""
    try:
        while True:
            msg = msgpack.unpackb(await asyncio.wait_for(ws.recv(), 10))
            if msg.get("id") == cid:
                return dict(msg)
    except ConnectionClosed as exc:
        return {"type": "closed", "code": exc.rcvd.code if exc.rcvd else None}


async def _call(ws: ClientConnection, frame: dict[str, Any]) -> dict[str, Any]:
    """Send a command; its reply, or ``closed`` (before or after the send)."""
    try:
        await ws.send(msgpack.packb(frame))
    except ConnectionClosed as exc:
        return {"type": "closed", "code": exc.rcvd.code if exc.rcvd else None}
    return await _until_reply(ws, frame["id"])


def _hello(token: str) -> bytes:
    return msgpack.packb({"type": "hello", "id": 1, "versions": [1], "name": "Ana",
                          "token": token})


async def test_two_hellos_with_one_token_leave_one_live_connection_and_one_token(
        server: Running, url: str) -> None:
    first = await NetClient.open(url, "Ana")
    player, token = first.welcome["player_id"], first.welcome["session"]
    await first.call("list_tables")
    await first.close()
    bad: list[str] = []
    for round_ in range(ROUNDS):
        a = await connect(url, compression=None)
        b = await connect(url, compression=None)
        await asyncio.gather(a.send(_hello(token)), b.send(_hello(token)))
        welcomes = await asyncio.gather(_until_reply(a, 1), _until_reply(b, 1))
        assert all(w["type"] in ("welcome", "closed") for w in welcomes), welcomes
        # Every connection that was welcomed speaks: the one that lives is answered.
        answers = []
        for ws, w in zip((a, b), welcomes, strict=True):
            if w["type"] == "welcome":
                answers.append(await _call(ws, {"type": "list_tables", "id": 2}))
            else:
                answers.append(w)
        live = [i for i, r in enumerate(answers) if r["type"] == "ok"]
        if len(live) != 1:
            bad.append(f"round {round_}: {len(live)} live connections ({answers})")
            for ws in (a, b):
                await ws.close()
            break
        survivor = welcomes[live[0]]["session"]
        loser = welcomes[1 - live[0]].get("session")
        if await server.hub.store.session_token(player) != token_digest(survivor):
            bad.append(f"round {round_}: the survivor's token is not the session's")
        for dead in (token, loser):
            if dead is None:
                continue
            probe = await connect(url, compression=None)
            await probe.send(_hello(dead))
            reply = await _until_reply(probe, 1)
            await probe.close()
            if reply.get("code") != "bad_token":
                bad.append(f"round {round_}: a replaced token was accepted ({reply})")
                break
        # The survivor is still alive and answered (the probes did not disturb it).
        ws = (a, b)[live[0]]
        if (await _call(ws, {"type": "ping", "id": 3}))["type"] != "pong":
            bad.append(f"round {round_}: the survivor was closed")
        for ws in (a, b):
            await ws.close()
        if bad:
            break
        token = survivor
    assert bad == []
