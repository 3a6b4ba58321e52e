"""Rematch (issue 15): another match at the same table, same seats and options, new seed
material (R8a), each match with its own record (R17). Real server, real store."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from server.app import running
from server.game.record import verify_record

from .conftest import server_settings
from .netclient import NetClient
from .players import autoplay, four_humans

CONTRIB = ["0a0a", "1b1b", "2c2c", "3d3d"]


def last_info(client: NetClient, table: str) -> dict[str, Any]:
    return [e["event"]["table"] for e in client.events
            if e["table"] == table and e["event"]["type"] == "table_changed"][-1]


async def test_four_clients_play_a_match_then_a_rematch_without_recreating_the_table(connect):
    clients = [await connect(n) for n in ("Ana", "Bo", "Cy", "Di")]
    table = await four_humans(clients)
    first = await asyncio.gather(*(autoplay(c, table, i) for i, c in enumerate(clients)))
    assert all(r is not None for r in first)
    # While match 1 was played the table already showed match 2's commitment (R8a).
    committed_2 = last_info(clients[0], table)["next_commitment"]
    committed_1 = clients[0].payloads("deals_committed")[0]["commitment"]
    assert committed_2 and committed_2 != committed_1
    ends = [len(c.events) for c in clients]
    for i, c in enumerate(clients[:3]):
        assert await c.call("rematch", table=table, contribution=CONTRIB[i]) == {"table": table}
    # Three asked: nothing starts; everyone sees who asked (an event and the table).
    await clients[3].wait_until(lambda: len(clients[3].payloads("rematch_accepted")) == 3)
    assert [p["seat"] for p in clients[3].payloads("rematch_accepted")] == [0, 1, 2]
    assert last_info(clients[3], table)["rematch"] == [0, 1, 2]
    assert last_info(clients[3], table)["status"] == "finished"
    assert not clients[3].payloads("deals_committed")[1:]
    await clients[3].call("rematch", table=table, contribution=CONTRIB[3])
    second = await asyncio.gather(*(autoplay(c, table, i, start=ends[i])
                                    for i, c in enumerate(clients)))
    assert all(r is not None for r in second)
    for c in clients:
        committed = c.payloads("deals_committed")
        assert [p["match"] for p in committed] == [1, 2]
        assert committed[1] == {"type": "deals_committed", "match": 2,
                                "commitment": committed_2, "contributions": CONTRIB}
        started = [e["event"] for e in c.events[ends[clients.index(c)]:]
                   if e["event"]["type"] in ("rematch_accepted", "deals_committed",
                                             "deal_started")]
        # The last acceptance, then the commitment, then the first deal (R8a, R6).
        assert [e["type"] for e in started[-3:]] == ["rematch_accepted", "deals_committed",
                                                     "deal_started"]
        assert started[-1]["dealer"] == 3          # first_dealer=3 again, as a new match
    # Each match has its own record; get_record without a number is the latest.
    assert second[0]["record"]["match"] == 2 and first[0]["record"]["match"] == 1
    latest = await clients[1].call("get_record", table=table)
    one = await clients[1].call("get_record", table=table, match=1)
    two = await clients[1].call("get_record", table=table, match=2)
    assert latest == two == {"table": table, "match": 2, "record": second[0]["record"]}
    assert one == {"table": table, "match": 1, "record": first[0]["record"]}
    assert verify_record(one["record"], committed_1)["fair"] == "proven"
    assert verify_record(two["record"], committed_2)["fair"] == "proven"
    assert two["record"]["fair"]["contributions"] == CONTRIB
    assert (await clients[1].request("get_record", table=table, match=3))["code"] == \
        "no_such_table"
    # Same seats, same options.
    assert two["record"]["seats"] == one["record"]["seats"] == ["Ana", "Bo", "Cy", "Di"]
    assert two["record"]["options"] == one["record"]["options"]


async def test_rematch_refusals_and_a_newcomer_taking_a_freed_seat(connect):
    clients = [await connect(n) for n in ("Ana", "Bo", "Cy", "Di")]
    watcher = await connect("Eve")
    table = await four_humans(clients)
    await watcher.call("spectate", table=table)
    early = await clients[0].request("rematch", table=table)
    assert (early["type"], early["code"]) == ("error", "wrong_phase")
    await asyncio.gather(*(autoplay(c, table, i) for i, c in enumerate(clients)))
    assert (await watcher.request("rematch", table=table))["code"] == "not_seated"
    # get_record of a running match is refused, of the finished one answered.
    assert (await watcher.call("get_record", table=table))["match"] == 1
    # Di leaves the finished table: the seat is free, and Eve takes it for the rematch.
    assert await clients[3].call("leave", table=table) == {"table": table, "seat": 3}
    assert await watcher.call("join", table=table, seat=3) == {"table": table, "seat": 3}
    for c in clients[:3]:
        await c.call("rematch", table=table)
    # Everyone seated must agree, the newcomer too: still waiting.
    await clients[0].wait_until(lambda: last_info(clients[0], table)["rematch"] == [0, 1, 2])
    assert last_info(clients[0], table)["seats"][3]["name"] == "Eve"
    assert last_info(clients[0], table)["status"] == "finished"
    await watcher.call("rematch", table=table)
    await clients[0].wait_event(lambda e: e["type"] == "deals_committed" and e["match"] == 2)
    playing = last_info(clients[0], table)
    assert playing["status"] == "playing" and playing["match"] == 2
    assert [s["name"] for s in playing["seats"]] == ["Ana", "Bo", "Cy", "Eve"]
    assert (await clients[0].request("rematch", table=table))["code"] == "wrong_phase"


async def test_a_seat_left_empty_gets_a_bot_and_the_partner_draw_is_made_again(connect):
    """R7 for a rematch as for a new match: the draw again, seats moved again."""
    ana, bo = await connect("Ana"), await connect("Bo")
    options = {"deals": 1, "bot_delay_ms": 0, "partner_draw": True}
    table = (await ana.call("create_table", options=options))["table"]
    await bo.call("join", table=table, seat=1)
    await ana.call("add_bot", table=table, seat=2, level="random")
    await ana.call("start", table=table)
    seat_of = {}
    for c in (ana, bo):
        seat_of[c] = (await c.wait_event(lambda e: e["type"] == "hand_dealt"))["event"]["seat"]
    await asyncio.gather(*(autoplay(c, table, seat_of[c]) for c in (ana, bo)))
    assert await bo.call("leave", table=table) == {"table": table, "seat": seat_of[bo]}
    end = len(ana.events)
    await ana.call("rematch", table=table)    # bots agree; Bo left: a bot takes his seat
    await ana.wait_until(lambda: len(ana.payloads("partner_draw")) == 2)
    assert [e["event"]["type"] for e in ana.events[end:]].count("partner_draw") == 1
    info = last_info(ana, table)
    assert info["match"] == 2 and [s["kind"] for s in info["seats"]].count("human") == 1
    kinds = [s["kind"] for s in info["seats"]]
    assert kinds.count("bot") == 3
    assert len(ana.payloads("partner_draw")) == 2


async def test_a_player_away_longer_than_the_grace_period_does_not_block_the_rematch(
        redis_url, key_prefix, redis_client):
    async with running(server_settings(redis_url, key_prefix)) as srv:
        url = f"ws://127.0.0.1:{srv.port}"
        ana, bo = await NetClient.open(url, "Ana"), await NetClient.open(url, "Bo")
        options = {"deals": 1, "bot_delay_ms": 0, "first_dealer": 3, "grace_s": 1}
        table = (await ana.call("create_table", options=options))["table"]
        await bo.call("join", table=table, seat=1)
        await ana.call("start", table=table)
        await asyncio.gather(autoplay(ana, table, 0), autoplay(bo, table, 1))
        await bo.close()                           # Bo goes away without a word
        await ana.wait_event(lambda e: e["type"] == "player_disconnected")
        await ana.call("rematch", table=table)
        assert not ana.payloads("deals_committed")[1:]   # Bo has his grace period
        # When it runs out the rematch starts by itself, a bot in Bo's seat.
        committed = await ana.wait_event(lambda e: e["type"] == "deals_committed"
                                         and e["match"] == 2, timeout=15)
        assert committed["event"]["contributions"][1] is None
        info = last_info(ana, table)
        assert info["seats"][1]["kind"] == "bot" and info["status"] == "playing"
        await ana.close()


@pytest.mark.parametrize("seated", [True, False])
async def test_rematch_needs_a_finished_match(connect, seated):
    ana = await connect("Ana")
    table = (await ana.call("create_table", options={"deals": 1}))["table"]
    other = ana if seated else await connect("Bo")
    code = (await other.request("rematch", table=table))["code"]
    assert code == ("wrong_phase" if seated else "not_seated")


async def test_rematches_cannot_reopen_more_tables_than_the_creators_limit(
        redis_url, key_prefix, redis_client):
    """An attacker at the per-player limit of open tables (2 here) finishes them against
    bots, creates two more, then sends rematches for the finished ones all at once: each
    would reopen a table. They are refused (``too_many_tables``, nothing started) while
    the limit is reached, and a rematch goes through once a table is closed again."""
    settings = server_settings(redis_url, key_prefix, max_tables_per_player=2,
                               rate_per_second=1000, rate_burst=1000)
    async with running(settings) as srv:
        ana = await NetClient.open(f"ws://127.0.0.1:{srv.port}", "Ana")
        options = {"deals": 1, "bot_delay_ms": 0, "first_dealer": 3}

        async def finished_table() -> str:
            first = len(ana.events)
            table = (await ana.call("create_table", options=options))["table"]
            for seat in (1, 2, 3):
                await ana.call("add_bot", table=table, seat=seat, level="random")
            await ana.call("start", table=table)
            await autoplay(ana, table, 0, start=first)
            return table

        done = [await finished_table(), await finished_table()]
        open_now = [(await ana.call("create_table", options=options))["table"]
                    for _ in range(2)]
        replies = await asyncio.gather(*(ana.request("rematch", table=t) for t in done))
        assert [r.get("code") for r in replies] == ["too_many_tables"] * 2, replies
        assert all(r["details"]["limit"] == 2 for r in replies)
        assert [srv.hub.tables[t].state.status for t in done] == ["finished"] * 2
        # Once one of the open tables is finished too, a rematch fits under the limit.
        first = len(ana.events)
        for seat in (1, 2, 3):
            await ana.call("add_bot", table=open_now[0], seat=seat, level="random")
        await ana.call("start", table=open_now[0])
        await autoplay(ana, open_now[0], 0, start=first)
        assert await ana.call("rematch", table=done[0]) == {"table": done[0]}
        assert srv.hub.tables[done[0]].state.status == "playing"
        refused = await ana.request("rematch", table=done[1])
        assert refused["code"] == "too_many_tables"
        await ana.close()


async def test_bots_draw_fresh_randomness_in_each_match(server, connect):
    """A bot's randomness is keyed by the match too: at the same turn of a rematch (same
    first dealer, so the same deal, trick and seat to act) it draws afresh, so a player
    cannot learn a bot's habits in match 1 (say, the random bot's pick on the first trick)
    and count on them in match 2."""
    clients = [await connect(n) for n in ("Ana", "Bo", "Cy", "Di")]
    table_id = await four_humans(clients)
    table = server.hub.tables[table_id]
    key_1, seeds_1 = table.clock.turn, [table.clock.bot_seed(s, "move") for s in range(4)]
    await asyncio.gather(*(autoplay(c, table_id, i) for i, c in enumerate(clients)))
    for i, c in enumerate(clients):
        await c.call("rematch", table=table_id, contribution=CONTRIB[i])
    await clients[0].wait_event(lambda e: e["type"] == "deals_committed" and e["match"] == 2)
    assert table.clock.turn == key_1 is not None     # the same turn of the same deal
    seeds_2 = [table.clock.bot_seed(s, "move") for s in range(4)]
    assert all(a != b for a, b in zip(seeds_1, seeds_2, strict=True))
    assert len(set(seeds_2)) == 4
