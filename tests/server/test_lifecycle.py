"""Slow readers, turn timers, clean-up and server limits (issue 5, issue 6)."""

from __future__ import annotations

import asyncio
import socket
import time

from server.app import running
from server.game.record import verify_record
from server.table.watching import SPECTATOR_REPLAY_MAX

from .conftest import server_settings
from .netclient import NetClient


async def bots_only_table(creator: NetClient, **options) -> str:
    """A table whose four seats are bots: the creator sets it up and steps away."""
    table = (await creator.call("create_table", options={"bot_delay_ms": 0, **options}))["table"]
    for seat in (1, 2, 3):
        await creator.call("add_bot", table=table, seat=seat, level="random")
    await creator.call("leave", table=table)
    await creator.call("add_bot", table=table, seat=0, level="random")
    return table


async def test_a_slow_reader_is_dropped_and_resumes_whole(redis_url, key_prefix, redis_client):
    settings = server_settings(redis_url, key_prefix, max_send_buffer=8192)
    async with running(settings) as srv:
        url = f"ws://127.0.0.1:{srv.port}"
        boss, slow, fast = [await NetClient.open(url, n) for n in ("Boss", "Slow", "Fast")]
        table = await bots_only_table(boss, deals=20)
        await fast.call("spectate", table=table)
        await slow.call("spectate", table=table)
        # The slow reader stops reading, with small socket buffers so the server's own
        # outgoing buffer is what fills up.
        slow.ws.transport.get_extra_info("socket").setsockopt(
            socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        slow.ws.transport.pause_reading()
        peer = next(p for p in srv.hub.clients if p.player_id == slow.welcome["player_id"])
        peer.ws.transport.get_extra_info("socket").setsockopt(
            socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        await boss.call("start", table=table)
        await fast.wait_event(lambda e: e["type"] == "match_over", timeout=60)
        # The table's last event: its status turned "finished" right after match_over.
        def finished(e: dict) -> bool:  # type: ignore[type-arg]
            return e["type"] == "table_changed" and e["table"]["status"] == "finished"
        over = await fast.wait_event(finished)
        # The table never waited for it: the match finished, and the slow peer was dropped.
        assert peer.dropped
        slow.ws.transport.resume_reading()
        await asyncio.wait_for(slow.closed.wait(), 20)
        # 4008 if the close frame got through its backlog in time, else the socket was cut.
        assert slow.ws.close_code in (4008, 1006)
        # It reconnects and resumes from its last number. A spectator that far behind gets
        # a head, not the thousand-odd events it missed (issue 30, resume amplification):
        # its stream is whole from there to the end.
        back = await NetClient.open(url, "Slow", token=slow.welcome["session"], ids=slow.ids)
        back.events = list(slow.events)
        last = max(slow.seqs(table))
        got = await back.call("resume", token=back.welcome["session"], table=table,
                              last_seq=last)
        assert got["snapshot"] is True and got["seq"] - last > SPECTATOR_REPLAY_MAX, got
        await back.wait_until(lambda: any(
            m["table"] == table and m["seq"] >= got["seq"] and finished(m["event"])
            for m in back.events))
        # (spectators coming and going are announced after it: protocol 1.5).
        seqs = sorted(s for s in set(back.seqs(table)) if s >= got["seq"])
        assert got["seq"] >= over["seq"] and seqs[0] == got["seq"]
        assert seqs == list(range(seqs[0], seqs[-1] + 1))
        for c in (boss, fast, back):
            await c.close()


async def test_turn_timer_plays_a_default_move(connect):
    ana = await connect("Ana")
    opts = {"deals": 1, "bot_delay_ms": 0, "turn_timer_s": 1, "first_dealer": 3}
    table = (await ana.call("create_table", options=opts))["table"]
    for seat in (1, 2, 3):
        await ana.call("add_bot", table=table, seat=seat, level="random")
    await ana.call("start", table=table)
    # Ana leads (left of dealer 3, R10) but does nothing: the timer plays for her.
    played = await ana.wait_event(lambda e: e["type"] == "card_played", timeout=15)
    assert played["event"]["seat"] == 0
    dealt = ana.payloads("hand_dealt")[0]["cards"]
    assert played["event"]["card"] in dealt


async def test_finished_and_abandoned_tables_are_cleaned_up_but_records_stay(
        redis_url, key_prefix, redis_client):
    settings = server_settings(redis_url, key_prefix, table_ttl_s=0, waiting_ttl_s=0)
    async with running(settings) as srv:
        url = f"ws://127.0.0.1:{srv.port}"
        boss = await NetClient.open(url, "Boss")
        finished = await bots_only_table(boss, deals=1)
        await boss.call("spectate", table=finished)
        await boss.call("start", table=finished)
        over = await boss.wait_event(lambda e: e["type"] == "match_over", timeout=60)
        idle = (await boss.call("create_table", options={"deals": 1}))["table"]
        await boss.close()          # the close handshake is over: nobody is connected
        # Sweep as of a moment past the TTL: the server may still be recording the
        # disconnect (activity "now"), which must not make the test depend on timing.
        removed = await srv.hub.lobby.sweep(now=time.time() + 60)
        assert set(removed) == {finished, idle}
        assert await srv.hub.store.load_table(finished) is None
        again = await NetClient.open(url, "Later")
        record = (await again.call("get_record", table=finished))["record"]
        assert record == over["event"]["record"]
        assert verify_record(record)["points"] == over["event"]["points"]
        assert (await again.request("get_record", table=idle))["code"] == "no_such_table"
        await again.close()


async def test_server_limits_on_tables_and_spectators(redis_url, key_prefix, redis_client):
    settings = server_settings(redis_url, key_prefix, max_tables=1, max_spectators=1)
    async with running(settings) as srv:
        url = f"ws://127.0.0.1:{srv.port}"
        a, b, c = [await NetClient.open(url, n) for n in "abc"]
        table = (await a.call("create_table", options={"deals": 1}))["table"]
        assert (await b.request("create_table", options={"deals": 1}))["code"] == \
            "too_many_tables"
        await b.call("spectate", table=table)
        assert (await c.request("spectate", table=table))["code"] == "too_many_spectators"
        assert len(srv.hub.tables) == 1
        for x in (a, b, c):
            await x.close()


async def test_a_finished_table_no_longer_counts_against_its_address(
        redis_url, key_prefix, redis_client):
    """The per-address limit counts open tables (issue 32: counted one by one only once
    an address has made as many tables as the limit): a match played to its end frees
    its place while the table is still held."""
    settings = server_settings(redis_url, key_prefix, max_tables_per_address=2)
    async with running(settings) as srv:
        url = f"ws://127.0.0.1:{srv.port}"
        a, b, c = [await NetClient.open(url, n) for n in "abc"]
        finished = await bots_only_table(a, deals=1)
        await a.call("spectate", table=finished)
        await a.call("start", table=finished)
        await a.wait_event(lambda e: e["type"] == "match_over", timeout=60)
        assert srv.hub.lobby.get(finished) is not None          # held, finished
        await b.call("create_table", options={"deals": 1})
        await c.call("create_table", options={"deals": 1})    # two made before: one open
        refused = await a.request("create_table", options={"deals": 1})
        assert refused["code"] == "too_many_tables" and refused["details"] == {"limit": 2}
        for x in (a, b, c):
            await x.close()


async def test_a_bot_that_returns_an_illegal_move_does_not_stall_its_table(connect,
                                                                           monkeypatch):
    """Fault injection: a broken bot's refused move is replaced by a legal one and logged."""
    import server.bots
    from server.game import Play

    def broken(level, view, rng, budget=None):
        return Play(view["viewer"], "zz")                  # never a legal card

    monkeypatch.setattr(server.bots, "choose_action", broken)
    ana = await connect("Ana")
    table = await bots_only_table(ana, deals=1)
    await ana.call("spectate", table=table)
    await ana.call("start", table=table)
    over = await ana.wait_event(lambda e: e["type"] == "match_over", timeout=30)
    assert verify_record(over["event"]["record"])["points"] == over["event"]["points"]
