"""The client connection across a server restart: resume by seq, resend by id, exactly once.

An in-process server is stopped (clients get 1001 "going away") and started again on
the same port and Redis prefix. A card played while the client is offline waits, is sent
after the reconnect with its original id, and is applied once.
"""

from __future__ import annotations

import asyncio
from typing import Any

import protocol
from client_cli.connection import Connection, ServerError
from client_cli.model import TableModel
from server.app import running
from server.config import Settings


def settings(redis_url: str, key_prefix: str, port: int = 0) -> Settings:
    return Settings(host="127.0.0.1", port=port, redis_url=redis_url, key_prefix=key_prefix,
                    sweep_interval_s=3600, busy_lag_ms=0)


async def wait_for(cond: Any, changed: asyncio.Event, timeout: float = 15) -> None:
    async with asyncio.timeout(timeout):
        while not cond():
            changed.clear()
            await changed.wait()


async def test_resend_after_restart_same_connection(redis_url: str, key_prefix: str,
                                                    redis_client: Any) -> None:
    changed = asyncio.Event()
    statuses: list[str] = []
    played: list[tuple[int, int, str]] = []

    def on_event(model: TableModel, seq: int, event: Any, before: Any) -> None:
        if isinstance(event, protocol.CardPlayed):
            played.append((seq, event.seat, event.card))
        changed.set()

    def on_status(kind: str, text: str) -> None:
        statuses.append(kind)
        changed.set()

    server_cm = running(settings(redis_url, key_prefix))
    srv = await server_cm.__aenter__()
    port = srv.port
    conn = Connection(f"ws://127.0.0.1:{port}", "Ana", on_event=on_event, on_status=on_status)
    try:
        await conn.start()
        result = await conn.call(protocol.CreateTable, options=protocol.options_from_dict(
            {"deals": 1, "bot_delay_ms": 0, "first_dealer": 3}))   # seat 0 leads (R10)
        table = result["table"]
        for seat in (1, 2, 3):
            await conn.call(protocol.AddBot, table=table, seat=seat, level="random")
        await conn.call(protocol.Start, table=table)
        model = conn.tables[table]
        await wait_for(lambda: model.my_turn, changed)
        assert model.view is not None
        card = model.view.hand[0]
        token = conn.token

        # The server goes away (1001: going away): the client starts reconnecting.
        await server_cm.__aexit__(None, None, None)
        await wait_for(lambda: "lost" in statuses, changed)
        assert not conn.online
        # Played while offline: queued with its id, sent after the reconnect.
        play = asyncio.create_task(conn.call(protocol.Play, table=table, card=card))
        await asyncio.sleep(0)
        assert not play.done()

        server_cm = running(settings(redis_url, key_prefix, port))
        await server_cm.__aenter__()
        async with asyncio.timeout(20):
            assert await play == {"table": table}
        await wait_for(lambda: "resumed" in statuses, changed)
        assert conn.token != token                       # the token rotated on hello
        await wait_for(lambda: any(s == 0 for _, s, _ in played), changed)
        mine = [p for p in played if p[1] == 0]
        assert [c for _, _, c in mine] == [card]          # applied exactly once
        # Resending the same command id again is answered, not re-applied: a new play of
        # the same card is refused because it left the hand.
        try:
            await conn.call(protocol.Play, table=table, card=card)
        except ServerError as exc:
            assert exc.code in ("card_not_in_hand", "not_your_turn")
        seqs = [seq for seq, _, _ in played]
        assert seqs == sorted(set(seqs))                  # no duplicates, in order
        assert model.view is not None and card not in model.view.hand
    finally:
        await conn.close()
        await server_cm.__aexit__(None, None, None)
