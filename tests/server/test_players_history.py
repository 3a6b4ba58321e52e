"""Match history, ratings and profiles (issue 27, items 3-5): real server, real store.

Accounts are linked the way the accounts module's login does it (the session hash's
``account`` field), through :class:`server.players.accounts.SessionAccounts`.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from openskill.models import PlackettLuce

from server.app import Running

from .netclient import NetClient, ServerError
from .players import autoplay, four_humans

NAMES = ("Ana", "Bo", "Cy", "Di")


async def registered(server: Running, connect: Any, names: tuple[str, ...] = NAMES
                     ) -> list[NetClient]:
    clients = [await connect(n) for n in names]
    for c, n in zip(clients, names, strict=True):
        await server.hub.players.accounts.set(c.welcome["player_id"], n.casefold())
    return clients


async def play_out(server: Running, clients: list[NetClient], table: str,
                   kept_before: int = 0) -> dict[str, Any]:
    ends = await asyncio.gather(*(autoplay(c, table, i) for i, c in enumerate(clients)))
    assert all(e is not None for e in ends)
    async with asyncio.timeout(10):
        await server.hub.players.wait_kept(kept_before + 1)
    result = ends[0]
    assert result is not None
    return result


def expected(result: str, before: list[tuple[float, float]] | None = None
             ) -> list[tuple[float, float]]:
    """What openskill itself computes for seats 0-3 (R5: teams 0+2, 1+3)."""
    model = PlackettLuce()
    r = [model.rating() if before is None else model.rating(mu=m, sigma=s)
         for m, s in (before or [(0, 0)] * 4)]
    ranks = {"team0": [0, 1], "team1": [1, 0], "draw": [0, 0]}[result]
    (a, c), (b, d) = model.rate([[r[0], r[2]], [r[1], r[3]]], ranks=ranks)
    return [(x.mu, x.sigma) for x in (a, b, c, d)]


async def test_a_rated_match_updates_ratings_exactly_as_openskill_and_is_in_history(
        server, connect):
    clients = await registered(server, connect)
    table = await four_humans(clients, rated=True)
    over = await play_out(server, clients, table)
    want = expected(over["result"])
    for i, c in enumerate(clients):
        page = await c.call("history")
        assert [(m["table"], m["match"]) for m in page["matches"]] == [(table, 1)]
        m = page["matches"][0]
        assert m["rated"] and m["seat"] == i and m["result"] == over["result"]
        assert m["points"] == over["points"] and m["options"]["rated"] is True
        after = m["players"][i]["after"]
        assert after["mu"] == pytest.approx(want[i][0], abs=1e-4)
        assert after["sigma"] == pytest.approx(want[i][1], abs=1e-4)
        prof = await clients[(i + 1) % 4].call("profile", name=NAMES[i])
        assert prof["rating"]["mu"] == pytest.approx(want[i][0], abs=1e-4)
        assert prof["played"] == 1 and prof["rated_played"] == 1
        won = over["result"] == f"team{i % 2}"
        assert prof["won"] == int(won)
        assert prof["partners"] == [{"name": NAMES[(i + 2) % 4], "matches": 1,
                                     "won": int(won)}]
        assert [r["table"] for r in prof["recent"]] == [table]
        assert [s["level"] for s in prof["ladder"]] == ["random", "easy", "normal", "expert"]
    # The record the entry links to is the match's (R17).
    record = await clients[0].call("get_record", table=table, match=1)
    assert record["record"]["match"] == 1
    # Issue 27, item 9: nobody's id or token reaches anyone else (history, profiles).
    for c in clients:
        seen = b"".join(c.frames)
        for other in clients:
            if other is not c:
                assert other.welcome["player_id"].encode() not in seen
                assert other.welcome["session"].encode() not in seen


async def test_a_second_rated_match_starts_from_the_first_ones_ratings(server, connect):
    clients = await registered(server, connect)
    table = await four_humans(clients, rated=True)
    first = await play_out(server, clients, table)
    ends = [len(c.events) for c in clients]
    for c in clients:
        await c.call("rematch", table=table)
    second = await asyncio.gather(*(autoplay(c, table, i, start=ends[i])
                                    for i, c in enumerate(clients)))
    async with asyncio.timeout(10):
        await server.hub.players.wait_kept(2)
    want = expected(second[0]["result"], expected(first["result"]))
    page = await clients[0].call("history", limit=1)
    assert page["matches"][0]["match"] == 2 and page["next"] is not None
    rest = await clients[0].call("history", limit=1, cursor=page["next"])
    assert [m["match"] for m in rest["matches"]] == [1] and rest["next"] is None
    for i in range(4):
        after = page["matches"][0]["players"][i]["after"]
        assert (after["mu"], after["sigma"]) == pytest.approx(want[i], abs=1e-4)


async def test_casual_tables_and_tables_with_bots_change_no_rating(server, connect):
    clients = await registered(server, connect)
    casual = await four_humans(clients)            # not created rated
    await play_out(server, clients, casual)
    with_bot = (await clients[0].call("create_table", options={
        "deals": 1, "bot_delay_ms": 0, "rated": True}))["table"]
    await clients[0].call("add_bot", table=with_bot, seat=1, level="random")
    for i in (2, 3):
        await clients[i].call("join", table=with_bot, seat=i)
    await clients[0].call("start", table=with_bot)
    await asyncio.gather(*(autoplay(clients[i], with_bot, i) for i in (0, 2, 3)))
    async with asyncio.timeout(10):
        await server.hub.players.wait_kept(2)
    page = await clients[0].call("history")
    assert [m["rated"] for m in page["matches"]] == [False, False]
    assert page["matches"][0]["players"][1]["bot"] is True
    prof = await clients[1].call("profile", name="Ana")
    assert prof["rating"] is None and prof["played"] == 2 and prof["rated_played"] == 0


async def test_a_player_who_leaves_a_rated_match_takes_the_loss_partner_unchanged(
        server, connect):
    clients = await registered(server, connect)
    table = await four_humans(clients, rated=True)
    await clients[1].call("leave", table=table)          # seat 1 (team 1) leaves for good
    await asyncio.gather(*(autoplay(clients[i], table, i) for i in (0, 2, 3)))
    async with asyncio.timeout(10):
        await server.hub.players.wait_kept(1)
    m = (await clients[0].call("history"))["matches"][0]
    assert m["rated"] and m["players"][1]["left"] is True
    assert m["players"][1]["name"] == "Bo" and m["players"][1]["registered"] is True
    want = expected("team0")     # team 1 lost, whatever the bot made of it
    for seat in (0, 1, 2):
        after = m["players"][seat]["after"]
        assert (after["mu"], after["sigma"]) == pytest.approx(want[seat], abs=1e-4)
    assert m["players"][3]["after"] is None              # the partner: unchanged
    assert (await clients[0].call("profile", name="Di"))["rating"] is None


async def test_a_profile_shows_no_private_table_to_someone_who_did_not_sit_there(
        server, connect):
    clients = await registered(server, connect)
    opts = {"deals": 1, "bot_delay_ms": 0, "first_dealer": 3}
    private = await clients[0].call("create_table", options=opts, private=True)
    for i in (1, 2, 3):
        await clients[i].call("join", table=private["table"], seat=i, code=private["code"])
    await clients[0].call("start", table=private["table"])
    await play_out(server, clients, private["table"])
    outsider = await connect("Eve")
    prof = await outsider.call("profile", name="Ana")
    assert prof["played"] == 1 and prof["recent"] == []
    assert (await outsider.call("history", name="Ana"))["matches"] == []
    mine = await clients[2].call("profile", name="Ana")
    assert [r["table"] for r in mine["recent"]] == [private["table"]]


async def test_guests_have_a_history_by_session_but_no_profile(server, connect):
    clients = [await connect(n) for n in NAMES]
    table = await four_humans(clients, rated=True)
    await play_out(server, clients, table)
    page = await clients[3].call("history")
    assert [(m["table"], m["rated"], m["seat"]) for m in page["matches"]] == [
        (table, False, 3)]
    with pytest.raises(ServerError) as err:
        await clients[0].call("profile", name="Bo")
    assert err.value.code == "no_such_player"
    with pytest.raises(ServerError) as err:
        await clients[0].call("history", cursor="not a cursor")
    assert err.value.code == "invalid_field"


async def test_the_sweep_keeps_a_match_its_ending_process_did_not(server, connect,
                                                                 redis_client, key_prefix):
    clients = await registered(server, connect)
    table = await four_humans(clients, rated=True)
    await play_out(server, clients, table)
    # As if the process that ended the match had stopped before keeping it.
    await redis_client.delete(f"{key_prefix}:{{h}}:m:{table}:1")
    assert (await clients[0].call("history"))["matches"] == []
    swept = await server.hub.lobby.sweep(now=server.hub.lobby.clock() + 10**6)
    assert table in swept
    async with asyncio.timeout(10):
        await server.hub.players.wait_kept(2)
    assert [m["table"] for m in (await clients[0].call("history"))["matches"]] == [table]


async def test_a_rematch_keeps_the_match_its_ending_process_did_not(server, connect):
    """The process whose commit ended a match stopped before keeping it, and the players
    start a rematch before any sweep: the commit that begins match 2 keeps match 1 (its
    history and its ratings), so no rated match is lost between two matches."""
    clients = await registered(server, connect)
    table = await four_humans(clients, rated=True)
    held = server.hub.lobby.tables[table]
    keep, held.on_finish = held.on_finish, None      # as if it stopped before keeping
    ends = await asyncio.gather(*(autoplay(c, table, i) for i, c in enumerate(clients)))
    assert (await clients[0].call("history"))["matches"] == []
    held.on_finish = keep                           # another process goes on with the table
    starts = [len(c.events) for c in clients]
    for c in clients:
        await c.call("rematch", table=table)
    await clients[0].wait_event(lambda e: e["type"] == "hand_dealt", timeout=10)
    async with asyncio.timeout(10):
        await server.hub.players.wait_kept(1)
    page = await clients[0].call("history")
    assert [(m["table"], m["match"]) for m in page["matches"]] == [(table, 1)]
    want = expected(ends[0]["result"])
    for i in range(4):
        after = page["matches"][0]["players"][i]["after"]
        assert (after["mu"], after["sigma"]) == pytest.approx(want[i], abs=1e-4)
    assert all(len(c.events) > s for c, s in zip(clients, starts, strict=True))


async def test_a_rated_queue_with_hints_is_refused(server, connect):
    (ana,) = await registered(server, connect, ("Ana",))
    with pytest.raises(ServerError) as err:
        await ana.call("queue", rated=True, options={"hints": True})
    assert err.value.code == "invalid_field"


async def test_registered_players_guests_first_see_their_rated_match_on_their_profiles(
        server, connect):
    """Issue 27, done when: four players (guests who register, keeping their session and
    its matches), a rated match, and each profile shows the rating openskill computes."""
    clients = [await connect(n) for n in NAMES]
    warmup = await four_humans(clients)                  # played as guests: casual
    await play_out(server, clients, warmup)
    for c, n in zip(clients, NAMES, strict=True):
        await c.call("register", name=n, password="correct horse battery")
    ends = [len(c.events) for c in clients]
    table = await four_humans(clients, rated=True)
    over = await asyncio.gather(*(autoplay(c, table, i, start=ends[i])
                                  for i, c in enumerate(clients)))
    async with asyncio.timeout(10):
        await server.hub.players.wait_kept(2)
    want = expected(over[0]["result"])
    for i, n in enumerate(NAMES):
        prof = await clients[(i + 1) % 4].call("profile", name=n.upper())   # any case
        assert prof["name"] == n and prof["rated_played"] == 1 and prof["played"] == 2
        assert (prof["rating"]["mu"], prof["rating"]["sigma"]) == pytest.approx(want[i],
                                                                              abs=1e-4)
        # The guest's match is the account's too (registration kept the session's).
        assert [r["table"] for r in prof["recent"]] == [table, warmup]


async def test_a_registered_account_without_a_finished_match_has_an_empty_profile(
        server, connect):
    """Gap of issue 27: an account exists from its `register`, so `profile` answers it
    (no match, no rating yet) instead of `no_such_player`; an unknown name still does."""
    ana, bo = await connect("Ana"), await connect("Bo")
    await ana.call("register", name="Ana", password="correct horse battery")
    prof = await bo.call("profile", name="ANA")
    assert (prof["name"], prof["played"], prof["won"], prof["rated_played"]) == ("Ana", 0, 0, 0)
    assert prof["rating"] is None and prof["partners"] == [] and prof["recent"] == []
    assert prof["ladder"]
    with pytest.raises(ServerError) as err:
        await bo.call("profile", name="Nobody")
    assert err.value.code == "no_such_player"
