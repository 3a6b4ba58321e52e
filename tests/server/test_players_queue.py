"""Play now over a real server and store (issue 27, item 6): queue, unqueue, seated."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from server.app import running

from .conftest import server_settings
from .netclient import NetClient, ServerError
from .players import autoplay, four_humans

FAST = {"deals": 1, "bot_delay_ms": 0}


def matched(c: NetClient) -> list[dict[str, Any]]:
    return [m for m in c.messages if m["type"] == "matched"]


async def wait_matched(c: NetClient, timeout: float = 10) -> dict[str, Any]:
    await c.wait_until(lambda: bool(matched(c)), timeout)
    return matched(c)[0]


@pytest.fixture
async def fast_server(redis_url: str, key_prefix: str, redis_client: Any) -> Any:
    settings = server_settings(redis_url, key_prefix, queue_tick_s=0.05,
                               queue_bots_after_s=0.5, queue_grace_s=0.5)
    async with running(settings) as srv:
        yield srv


async def clients_of(srv: Any, n: int, *, accounts: bool = True) -> list[NetClient]:
    url = f"ws://127.0.0.1:{srv.port}"
    out = [await NetClient.open(url, f"P{i}") for i in range(n)]
    if accounts:
        for i, c in enumerate(out):
            await srv.hub.players.accounts.set(c.welcome["player_id"], f"p{i}")
    return out


async def test_eight_queued_players_make_two_tables_each_seated_once(fast_server):
    clients = await clients_of(fast_server, 8)
    try:
        for c in clients:
            assert (await c.call("queue", rated=True, options=FAST))["queued"] is True
        news = [await wait_matched(c) for c in clients]
        tables: dict[str, list[int]] = {}
        for n in news:
            tables.setdefault(n["table"], []).append(n["seat"])
            assert n["rated"] is True
        assert len(tables) == 2 and all(sorted(s) == [0, 1, 2, 3] for s in tables.values())
        for c, n in zip(clients, news, strict=True):
            assert len(matched(c)) == 1
            # The table follows, as after a join (its head, then the match's start): the
            # hand dealt to this seat is ours.
            dealt = await c.wait_event(lambda e, n=n: e["type"] == "hand_dealt"
                                       and e["seat"] == n["seat"])
            assert dealt["table"] == n["table"]
            page = await c.call("list_tables")
            assert [(s["table"], s["seat"]) for s in page["seats"]] == [(n["table"], n["seat"])]
            info = next(t for t in page["tables"] if t["table"] == n["table"])
            assert info["options"]["rated"] is True and info["status"] == "playing"
        assert await fast_server.hub.queue.queue.waiting() == 0
        # The four of one table play it out: a rated match that changes ratings.
        tid = news[0]["table"]
        group = [(c, n["seat"]) for c, n in zip(clients, news, strict=True) if n["table"] == tid]
        ends = await asyncio.gather(*(autoplay(c, tid, seat) for c, seat in group))
        assert all(e is not None for e in ends)
        async with asyncio.timeout(10):
            await fast_server.hub.players.wait_kept(1)
        m = (await group[0][0].call("history"))["matches"][0]
        assert m["rated"] and all(p["after"] is not None for p in m["players"])
    finally:
        for c in clients:
            await c.close()


async def test_a_casual_player_alone_gets_three_bots_after_the_wait(fast_server):
    (c,) = await clients_of(fast_server, 1, accounts=False)
    try:
        await c.call("queue", rated=False, options=FAST)
        n = await wait_matched(c)
        assert n["seat"] == 0 and n["rated"] is False
        head = await c.wait_event(lambda e: e["type"] == "table_changed"
                                  and e["table"]["status"] == "playing")
        seats = head["event"]["table"]["seats"]
        assert [s["kind"] for s in seats] == ["human", "bot", "bot", "bot"]
        assert {s["level"] for s in seats[1:]} == {"normal"}   # a new player: normal's level
    finally:
        await c.close()


async def test_a_guest_may_not_queue_for_a_rated_game_and_unqueue_says_if_queued(fast_server):
    (c,) = await clients_of(fast_server, 1, accounts=False)
    try:
        with pytest.raises(ServerError) as err:
            await c.call("queue", rated=True)
        assert err.value.code == "not_registered"
        assert (await c.call("unqueue"))["queued"] is False
        await c.call("queue", rated=False, options={"deals": 2})
        assert (await c.call("unqueue"))["queued"] is True
        assert await fast_server.hub.queue.queue.waiting() == 0
    finally:
        await c.close()


async def test_a_player_who_drops_while_queued_leaves_the_queue_after_the_grace(fast_server):
    clients = await clients_of(fast_server, 2)
    ids = [c.welcome["player_id"] for c in clients]
    q = fast_server.hub.queue.queue
    for c in clients:
        await c.call("queue", rated=True, options=FAST)
    token = clients[0].welcome["session"]
    for c in clients:
        await c.close()
    back = await NetClient.open(f"ws://127.0.0.1:{fast_server.port}", "P0", token=token)
    try:
        # P0 came back within the grace and keeps the place; P1 stays away and is dropped.
        playnow = fast_server.hub.queue
        async with asyncio.timeout(10), playnow.changed:
            await playnow.changed.wait_for(lambda: ids[1] in playnow.dropped)
        assert set(await q.all()) == {ids[0]} and ids[0] not in playnow.dropped
        assert await q.offline_since() == {}
    finally:
        await back.close()


async def test_a_player_matched_while_away_finds_the_seat_in_list_tables(
        redis_url: str, key_prefix: str, redis_client: Any):
    settings = server_settings(redis_url, key_prefix, queue_tick_s=0.05,
                               queue_bots_after_s=0.3, queue_grace_s=30, lease_renew_s=0.2)
    async with running(settings) as srv:
        (c,) = await clients_of(srv, 1, accounts=False)
        await c.call("queue", rated=False, options=FAST)
        token = c.welcome["session"]
        await c.close()                           # away, within the queue's grace
        playnow = srv.hub.queue
        async with asyncio.timeout(10), playnow.changed:
            await playnow.changed.wait_for(lambda: playnow.formed >= 1)
        back = await NetClient.open(f"ws://127.0.0.1:{srv.port}", "P0", token=token)
        try:
            assert matched(back) == []            # nobody was there to tell
            page = await back.call("list_tables")
            (seat,) = page["seats"]
            assert seat["seat"] == 0 and seat["status"] == "playing"
            resumed = await back.call("resume", token=back.welcome["session"],
                                      table=seat["table"], last_seq=2**53 - 1)
            assert resumed["seat"] == 0 and resumed["snapshot"] is True
        finally:
            await back.close()


@pytest.fixture
async def slow_bots_server(redis_url: str, key_prefix: str, redis_client: Any) -> Any:
    settings = server_settings(redis_url, key_prefix, queue_tick_s=0.05,
                               queue_bots_after_s=600)
    async with running(settings) as srv:
        yield srv


async def test_taking_a_seat_anywhere_leaves_the_queue(slow_bots_server):
    """Gap of issue 27: a queued player who creates or joins a table is out of the queue,
    so the matchmaker never seats them at a second table."""
    srv = slow_bots_server
    a, e, *others = await clients_of(srv, 5)
    try:
        await a.call("queue", options=FAST)
        await e.call("queue", options=FAST)
        created = await a.call("create_table")
        assert a.welcome["player_id"] not in await srv.hub.queue.queue.all()
        await e.call("join", table=created["table"])
        assert await srv.hub.queue.queue.waiting() == 0
        for c in others:
            await c.call("queue", options=FAST)
        await srv.hub.queue.tick()       # three compatible requests: no table yet
        assert sorted(await srv.hub.queue.queue.all()) == sorted(
            c.welcome["player_id"] for c in others)
        assert srv.hub.queue.formed == 0 and not matched(a) and not matched(e)
    finally:
        for c in (a, e, *others):
            await c.close()


async def test_the_matchmakers_tables_count_against_the_server_table_limit(
        redis_url, key_prefix, redis_client):
    """Gap of issue 27: with room for one more table, eight queued players make one table
    (not two: the limit counts the matchmaker's tables like any); the others wait."""
    settings = server_settings(redis_url, key_prefix, queue_tick_s=0.05,
                               queue_bots_after_s=600, max_tables=2)
    async with running(settings) as srv:
        creator, *clients = await clients_of(srv, 9)
        try:
            await creator.call("create_table")
            for c in clients:
                await c.call("queue", options=FAST)
            async with asyncio.timeout(10):
                async with srv.hub.queue.changed:
                    await srv.hub.queue.changed.wait_for(lambda: srv.hub.queue.formed >= 1)
            await srv.hub.queue.tick()      # nothing more: the server is at its limit
            assert srv.hub.queue.formed == 1
            assert await srv.hub.queue.queue.waiting() == 4
            assert len(await srv.hub.lobby.listing.entries(fresh=True)) == 2
            with pytest.raises(ServerError) as err:
                await creator.call("create_table")
            assert err.value.code == "too_many_tables"
        finally:
            for c in (creator, *clients):
                await c.close()


async def test_the_matchmaker_never_seats_a_player_at_a_match_in_play(slow_bots_server):
    """Gap of issue 27: someone who queues while seated at a match in play is dropped from
    the queue by the matchmaker instead of being seated at a second table."""
    srv = slow_bots_server
    clients = await clients_of(srv, 7)
    try:
        table = await four_humans(clients[:4])
        await clients[0].call("queue", options=FAST)
        for c in clients[4:]:
            await c.call("queue", options=FAST)
        await srv.hub.queue.tick()
        assert srv.hub.queue.formed == 0 and not matched(clients[0])
        assert sorted(await srv.hub.queue.queue.all()) == sorted(
            c.welcome["player_id"] for c in clients[4:])
        page = await clients[0].call("list_tables")
        assert [s["table"] for s in page["seats"]] == [table]
    finally:
        for c in clients:
            await c.close()


async def test_a_seat_by_hand_while_the_matchmaker_takes_the_player_is_refused(
        slow_bots_server):
    """Gap of issue 27 (nobody seated twice, across processes): the matchmaker has taken a
    player's request (its script ran, the table is not made yet) when that player's
    ``join`` or ``create_table`` arrives, on this process or another. The command is
    refused with ``being_matched`` and changes nothing; once the matchmaker is done, a
    seat by hand works again. The take is the matchmaker's own store script."""
    from server.players.queue import MARK_S

    srv = slow_bots_server
    queue = srv.hub.queue.queue
    ana, bo = await clients_of(srv, 2)
    try:
        waiting = (await bo.call("create_table"))["table"]
        before = await bo.call("list_tables")
        await ana.call("queue", options=FAST)
        request = (await queue.all())[ana.welcome["player_id"]]
        assert await queue.take([(ana.welcome["player_id"], request)], MARK_S)
        for cmd, fields in (("join", {"table": waiting}), ("create_table", {})):
            with pytest.raises(ServerError) as err:
                await ana.call(cmd, **fields)
            assert err.value.code == "being_matched", cmd
        after = await bo.call("list_tables")
        assert after["tables"] == before["tables"]          # nothing changed
        await queue.taken([ana.welcome["player_id"]])
        assert (await ana.call("join", table=waiting))["seat"] == 1
    finally:
        for c in (ana, bo):
            await c.close()


async def test_the_matchmaker_leaves_a_player_alone_while_they_take_a_seat_by_hand(
        slow_bots_server, redis_client):
    """The other order of the same race: a seat by hand is under way (its mark is in the
    store) when four compatible requests are there: the matchmaker makes no table of them,
    and the seat by hand, once done, takes its player out of the queue. A refused seat
    (a full table) leaves no mark behind."""
    from server.players.queue import MARK_S

    srv = slow_bots_server
    queue = srv.hub.queue.queue
    clients = await clients_of(srv, 4)
    ana = clients[0]
    player = ana.welcome["player_id"]
    try:
        assert await queue.hold(player, MARK_S)       # what `join` does first
        for c in clients:
            await c.call("queue", options=FAST)
        assert await srv.hub.queue.tick() == 0
        assert len(await queue.all()) == 4 and not matched(ana)
        await queue.release(player, seated=True)      # the join seated them
        assert await srv.hub.queue.tick() == 0
        assert sorted(await queue.all()) == sorted(c.welcome["player_id"] for c in clients[1:])
        assert not any(matched(c) for c in clients)
        clients += [await NetClient.open(f"ws://127.0.0.1:{srv.port}", f"F{i}")
                    for i in range(4)]
        full = await four_humans(clients[4:], start=False)
        with pytest.raises(ServerError) as err:
            await ana.call("join", table=full)
        assert err.value.code == "table_full"
        assert await redis_client.hlen(queue.joining) == 0
    finally:
        for c in clients:
            await c.close()


#: Bots slow enough that a match of bots is still playing when the test ends.
SLOW_BOTS = {"deals": 5, "bot_delay_ms": 10_000}


async def ask_and_walk_away(c: NetClient) -> str:
    """Play now alone (casual, filled with bots after the wait), then leave the table: the
    bots play on. Returns the table."""
    await c.call("queue", options=SLOW_BOTS)
    n = await wait_matched(c)
    c.messages.clear()
    await c.call("leave", table=n["table"])
    return str(n["table"])


@pytest.mark.parametrize("limit", ["max_tables_per_player", "max_tables_per_address"])
async def test_play_now_counts_against_the_limits_on_open_tables(
        redis_url, key_prefix, redis_client, limit):
    """Found after issue 27: a player (or an address) asking for a game, leaving the table
    of bots it made and asking again opened tables of bots without end; the tables play
    now makes count against their first player's limits, as ``create_table``'s do."""
    settings = server_settings(redis_url, key_prefix, queue_tick_s=0.05,
                               queue_bots_after_s=0.2, **{limit: 2})
    async with running(settings) as srv:
        clients = await clients_of(srv, 3, accounts=False)
        # The same player twice, or (all from 127.0.0.1) a new player each time.
        asking = [clients[0]] * 3 if limit == "max_tables_per_player" else clients
        try:
            made = [await ask_and_walk_away(c) for c in asking[:2]]
            assert len(set(made)) == 2
            statuses = {tid: e.status
                        for tid, e in (await srv.hub.lobby.listing.entries(fresh=True)).items()}
            assert [statuses[t] for t in made] == ["playing", "playing"]
            with pytest.raises(ServerError) as err:
                await asking[2].call("queue", options=SLOW_BOTS)
            assert err.value.code == "too_many_tables"
            assert err.value.reply["details"] == {"limit": 2}
            assert await srv.hub.queue.queue.waiting() == 0     # nothing was queued
        finally:
            for c in clients:
                await c.close()
