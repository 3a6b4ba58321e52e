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


async def test_a_discard_made_for_us_is_read_from_a_fresh_snapshot(
        redis_url: str, key_prefix: str, redis_client: Any) -> None:
    """R9: the turn timer discards six cards for a player who did not choose them, and
    nobody is told which six, not even that player. Their model cannot apply its own
    ``chanter_discarded`` (tests/spec/model/our_discard_unknown.json): it is stale, and the
    connection asks for a fresh snapshot, which shows the hand of nine and the discard. (The
    terminal client kept all fifteen cards in hand, offering six it no longer had.)"""
    changed = asyncio.Event()

    def on_event(*_: Any) -> None:
        changed.set()

    async with running(settings(redis_url, key_prefix)) as srv:
        url = f"ws://127.0.0.1:{srv.port}"
        conns = [Connection(url, name, on_event=on_event) for name in ("Ana", "Bo", "Cy", "Di")]
        try:
            for conn in conns:
                await conn.start()
            options = protocol.options_from_dict({"deals": 1, "chanter": True,
                                                  "first_dealer": 3, "turn_timer_s": 1})
            table = (await conns[0].call(protocol.CreateTable, options=options))["table"]
            for seat in (1, 2, 3):
                await conns[seat].call(protocol.Join, table=table, seat=seat)
            await conns[0].call(protocol.Start, table=table)
            models = [conn.model(table) for conn in conns]
            for _ in range(4):      # everyone wants the chanter, in turn, before the timer
                await wait_for(lambda: any(m.my_turn for m in models), changed)
                seat = next(s for s, m in enumerate(models) if m.my_turn)
                assert models[seat].view is not None
                assert models[seat].view.phase == "chanter_vote"
                await conns[seat].call(protocol.ChanterVote, table=table, vote=True)
            ana = models[0]          # left of the dealer (R9): she takes from the talon
            await wait_for(lambda: ana.view is not None and len(ana.view.hand) == 15, changed)
            # She does not discard; the timer does it for her after a second.
            await wait_for(lambda: ana.view is not None and len(ana.view.discarded) == 6,
                           changed)
            assert len(ana.view.hand) == 9 and not set(ana.view.hand) & set(ana.view.discarded)
            assert not ana.stale
        finally:
            for conn in conns:
                await conn.close()


async def test_a_slow_reply_is_asked_again_with_the_same_id(
        redis_url: str, key_prefix: str, redis_client: Any) -> None:
    """docs/PROTOCOL.md: a command resent with an id already answered gets the first reply
    and is not applied twice. A reply slower than ``reply_timeout`` (the table busy: here
    its lock held) is asked again with the same id, ``reply_retries`` times, instead of
    the call failing with TimeoutError (the network bots of bench/rolling.py stopped on one
    at 100 tables); the card is played once."""
    changed = asyncio.Event()
    played: list[tuple[int, str]] = []

    def on_event(model: TableModel, seq: int, event: Any, before: Any) -> None:
        if isinstance(event, protocol.CardPlayed):
            played.append((event.seat, event.card))
        changed.set()

    async with running(settings(redis_url, key_prefix)) as srv:
        conn = Connection(f"ws://127.0.0.1:{srv.port}", "Ana", on_event=on_event,
                          reply_timeout=0.2, reply_retries=20)
        try:
            await conn.start()
            table = (await conn.call(protocol.CreateTable, options=protocol.options_from_dict(
                {"deals": 1, "bot_delay_ms": 0, "first_dealer": 3})))["table"]
            for seat in (1, 2, 3):
                await conn.call(protocol.AddBot, table=table, seat=seat, level="random")
            await conn.call(protocol.Start, table=table)
            model = conn.tables[table]
            await wait_for(lambda: model.my_turn, changed)
            assert model.view is not None
            card = model.view.hand[0]
            live = srv.hub.tables[table]
            async with live.lock:              # the table is busy for five reply timeouts
                play = asyncio.create_task(conn.call(protocol.Play, table=table, card=card))
                await asyncio.sleep(5 * conn.reply_timeout)
                assert not play.done(), play   # not given up: asked again, same id
            async with asyncio.timeout(10):
                assert await play == {"table": table}
            await wait_for(lambda: any(s == 0 for s, _ in played), changed)
            assert [c for s, c in played if s == 0] == [card]   # applied exactly once
        finally:
            await conn.close()
