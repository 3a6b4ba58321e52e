"""What docs/PROTOCOL.md promises, checked on the wire (issue 10, findings 1, 2, 15, 17).

Each test is written from the document, as an independent client would check it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgpack
import pytest

from .netclient import NetClient, ServerError
from .players import four_humans

QUIET = {"deals": 1, "bot_delay_ms": 10_000, "first_dealer": 3,   # bots wait and do not
         "signals": "off"}                                      # signal: a quiet table


def after(client: NetClient, mark: int) -> list[dict[str, Any]]:
    return client.messages[mark:]


async def settle(*clients: NetClient) -> None:
    """Every client has answered a ping: everything sent before it has arrived."""
    for c in clients:
        await c.call("ping")


async def sent_then(client: NetClient, kind: str, **fields: Any) -> list[dict[str, Any]]:
    """Send one command; return every message that arrived after it (settled by a ping)."""
    mark = len(client.messages)
    reply = await client.request(kind, **fields)
    assert reply["type"] == "ok", reply
    await settle(client)
    return [m for m in after(client, mark) if m.get("type") != "pong"]


def shape(messages: list[dict[str, Any]]) -> list[str]:
    return [m["event"]["type"] if m["type"] == "event" else m["type"] for m in messages]


# ------------------------------------------------------------------ finding 1: the order


async def test_create_then_join_add_remove_start_each_ok_comes_before_its_events(connect):
    ana, bo = await connect("Ana"), await connect("Bo")
    got = await sent_then(ana, "create_table", options=QUIET)
    table = got[0]["result"]["table"]
    # The first event after create_table is seq 1 (finding: it was 0).
    assert shape(got) == ["ok", "table_changed"] and got[1]["seq"] == 1
    assert shape(await sent_then(bo, "join", table=table, seat=1)) == ["ok", "table_changed"]
    assert shape(await sent_then(ana, "add_bot", table=table, seat=2, level="random")) == [
        "ok", "table_changed"]
    assert shape(await sent_then(ana, "remove_bot", table=table, seat=2)) == [
        "ok", "table_changed"]
    got = await sent_then(ana, "start", table=table)
    assert shape(got)[0] == "ok"
    # R8a (1.3): the commitment to the deals comes first, before any card.
    assert shape(got)[1:] == ["deals_committed", "deal_started", "hand_dealt", "turn",
                              "table_changed"]
    seqs = [m["seq"] for m in got[1:]]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))


async def test_play_signal_vote_discard_ok_before_events(connect):
    clients = [await connect(f"P{i}") for i in range(4)]
    table = await four_humans(clients, chanter=True, signals="private")
    await settle(*clients)
    # R9: the vote, seat 0 first (left of dealer 3).
    assert shape(await sent_then(clients[0], "chanter_vote", table=table, vote=True)) == [
        "ok", "chanter_vote", "turn"]
    for seat in (1, 2):
        await clients[seat].call("chanter_vote", table=table, vote=True)
    got = await sent_then(clients[3], "chanter_vote", table=table, vote=True)
    assert shape(got) == ["ok", "chanter_vote", "chanter_result", "talon_dealt", "turn"]
    hand0 = [c for m in clients[0].events if m["event"]["type"] in ("hand_dealt", "talon_dealt")
             for c in m["event"]["cards"]]
    got = await sent_then(clients[0], "discard", table=table, cards=hand0[:6])
    assert shape(got) == ["ok", "chanter_discarded", "turn"]
    got = await sent_then(clients[1], "signal", table=table, signal="useless_hand")
    assert shape(got) == ["ok", "signal_sent"]


async def test_play_ok_before_card_played(connect):
    clients = [await connect(f"P{i}") for i in range(4)]
    table = await four_humans(clients)
    hand = (await clients[0].wait_event(lambda e: e["type"] == "hand_dealt"))["event"]["cards"]
    await settle(*clients)
    got = await sent_then(clients[0], "play", table=table, card=hand[0])
    assert shape(got) == ["ok", "card_played", "turn"]
    assert got[1]["seq"] + 1 == got[2]["seq"]


async def test_resume_ok_comes_first_and_its_seq_is_where_the_replay_ends(connect, url):
    clients = [await connect(f"P{i}") for i in range(4)]
    table = await four_humans(clients)
    await clients[0].wait_event(lambda e: e["type"] == "turn")
    last = max(clients[0].seqs(table))
    hand = (await clients[0].wait_event(lambda e: e["type"] == "hand_dealt"))["event"]["cards"]
    await clients[0].call("play", table=table, card=hand[0])
    await clients[2].wait_event(lambda e: e["type"] == "card_played")
    # A second connection of the same session resumes from before the play.
    again = await NetClient.open(url, "P0", token=clients[0].welcome["session"],
                                 ids=clients[0].ids)
    mark = len(again.messages)
    reply = await again.request("resume", token=again.welcome["session"], table=table,
                                last_seq=last)
    await settle(again)
    got = after(again, mark)
    assert got[0] == reply and reply["type"] == "ok"
    events = [m for m in got if m["type"] == "event"]
    upto, replayed = reply["result"]["seq"], reply["result"]["replayed"]
    # The replay: exactly last+1 .. seq; then live events only, after it, in order (the old
    # connection's drop may add presence news; it never goes backwards).
    assert [m["seq"] for m in events[:replayed]] == list(range(last + 1, upto + 1))
    assert [m["seq"] for m in events] == list(range(last + 1, last + 1 + len(events)))
    assert [m["event"]["type"] for m in events[:2]] == ["card_played", "turn"]
    # However the two connections raced, the seat ends up shown connected.
    seen = [m["event"] for m in events if m["event"]["type"] == "table_changed"]
    assert not seen or seen[-1]["table"]["seats"][0]["connected"] is True
    await again.close()


# ------------------------------------------------------------------ finding 2: the codes


async def test_documented_codes_and_details(connect):
    ana = await connect("Ana")
    table = (await ana.call("create_table", options=QUIET))["table"]
    bo = await connect("Bo")
    # leave for a table you are not at: not_at_table (it answered ok).
    assert (await bo.request("leave", table=table))["code"] == "not_at_table"
    # start fills empty seats with bots; start again: not_ready (it answered wrong_phase).
    await ana.call("start", table=table)
    assert (await ana.request("start", table=table))["code"] == "not_ready"
    # card_not_in_hand names the card.
    hand = (await ana.wait_event(lambda e: e["type"] == "hand_dealt"))["event"]["cards"]
    foreign = next(c for c in ("3o", "3c", "2o", "2c", "9c", "1o", "Rb") if c not in hand)
    err = await ana.request("play", table=table, card=foreign)
    assert err["code"] == "card_not_in_hand" and err["details"] == {"card": foreign}
    # A missing field names itself.
    await ana.send_raw(msgpack.packb({"type": "play", "id": 9001, "card": "3o"}))
    err = await ana.reply(9001)
    assert err["code"] == "invalid_field" and err["details"] == {"field": "$.table"}
    # A seat taken names the seat.
    other = (await bo.call("create_table", options=QUIET))["table"]
    err = await ana.request("join", table=other, seat=0)
    assert err["code"] == "seat_taken" and err["details"] == {"seat": 0}


async def test_get_record_with_a_hostile_id_is_no_such_table_not_an_internal_error(
        connect, caplog):
    ana = await connect("Ana")
    for bad in ("{}", "a b", "t{x}", "é"):
        assert (await ana.request("get_record", table=bad))["code"] == "no_such_table"
    assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]


# ------------------------------------------------------------------ findings 15 and 17


async def test_an_old_join_id_resent_after_leaving_subscribes_nothing(connect, server):
    ana, bo = await connect("Ana"), await connect("Bo")
    table = (await ana.call("create_table", options=QUIET, private=True))
    tid, code = table["table"], table["code"]
    first = await bo.request("join", cid=777, table=tid, seat=1, code=code)
    await bo.call("leave", table=tid)
    again = await bo.request("join", cid=777, table=tid, seat=1, code=code)
    assert again == first                       # the original answer...
    live = server.hub.tables[tid]
    assert all(v.player != bo.welcome["player_id"] for v in live.viewers)   # ...and no watcher
    mark = len(bo.messages)
    await ana.call("add_bot", table=tid, seat=2, level="random")
    await settle(ana, bo)
    assert [m for m in after(bo, mark) if m["type"] == "event"] == []


async def test_a_seated_player_who_spectates_their_table_keeps_their_seat_view(connect):
    clients = [await connect(f"P{i}") for i in range(4)]
    table = await four_humans(clients)
    mark = len(clients[1].messages)
    await clients[1].call("spectate", table=table)
    await settle(clients[1])
    snap = [m["event"] for m in after(clients[1], mark)
            if m["type"] == "event" and m["event"]["type"] == "snapshot"]
    assert snap and snap[0]["view"]["viewer"] == 1 and len(snap[0]["view"]["hand"]) == 9
    changed = [m["event"] for m in after(clients[1], mark)
               if m["type"] == "event" and m["event"]["type"] == "table_changed"]
    assert changed[-1]["table"]["seats"][1]["connected"] is True


async def test_a_joining_player_is_shown_connected_and_a_refused_command_tells_nobody(
        connect):
    ana, bo = await connect("Ana"), await connect("Bo")
    table = (await ana.call("create_table", options=QUIET))["table"]
    await bo.call("join", table=table, seat=1)
    seen = await ana.wait_event(lambda e: e["type"] == "table_changed"
                                and e["table"]["seats"][1]["kind"] == "human")
    assert seen["event"]["table"]["seats"][1]["connected"] is True
    await ana.call("start", table=table)
    await settle(ana, bo)
    marks = (len(ana.messages), len(bo.messages))
    # Out of turn (seat 0 leads, R10), then a chanter vote at a table without chanter, then
    # a resume of a seat that never dropped: none of it is news for the others.
    hand = (await bo.wait_event(lambda e: e["type"] == "hand_dealt"))["event"]["cards"]
    assert (await bo.request("play", table=table, card=hand[0]))["code"] == "not_your_turn"
    assert (await bo.request("chanter_vote", table=table, vote=True))["code"] == "wrong_phase"
    await bo.call("resume", token=bo.welcome["session"], table=table, last_seq=2**53)
    await settle(ana, bo)
    assert [m for m in after(ana, marks[0]) if m["type"] == "event"] == []


async def test_sigterm_close_code_is_the_documented_1001(redis_url, key_prefix, redis_client):
    from server.app import running

    from .conftest import server_settings

    cm = running(server_settings(redis_url, key_prefix))
    srv = await cm.__aenter__()
    ana = await NetClient.open(f"ws://127.0.0.1:{srv.port}", "Ana")
    await cm.__aexit__(None, None, None)
    await asyncio.wait_for(ana.closed.wait(), 10)
    assert ana.ws.close_code == 1001


# ------------------------------------------------------------------ codes only a server
# state can produce (the conformance suite points here for them)


async def test_shutting_down_refuses_and_hello_1001(connect, server, url):
    ana = await connect("Ana")
    server.hub.closing = True                      # as SIGTERM does, before it closes all
    try:
        err = await ana.request("create_table", options={"deals": 1})
        assert err["code"] == "shutting_down"
        with pytest.raises(ServerError) as refused:
            await NetClient.open(url, "Late")
        assert refused.value.code == "shutting_down"
    finally:
        server.hub.closing = False


async def test_an_internal_error_leaks_nothing(connect, server, monkeypatch, caplog):
    ana = await connect("Ana")

    def broken(*args, **kw):
        raise KeyError("secret internals")

    monkeypatch.setattr(server.hub.lobby, "page", broken)
    err = await ana.request("list_tables")
    assert err["code"] == "internal_error" and "secret" not in err["message"]
    assert err["details"] is None
    assert any("internal error on ListTables" in r.getMessage() for r in caplog.records)
    assert (await ana.call("ping")) is not None     # the connection stays


async def test_a_table_that_keeps_changing_is_a_conflict(connect, server, monkeypatch):
    """Another process moving the table on at every attempt: nothing is applied, and the
    player is told ``conflict`` (it was reported as storage_unavailable)."""
    from server.store import VersionConflict

    ana = await connect("Ana")
    table = (await ana.call("create_table", options=QUIET))["table"]
    live = server.hub.tables[table]
    before = live.state.to_bytes()

    async def always_stale(table_id, expected, *args, **kw):
        raise VersionConflict(table_id, expected, expected + 1)

    monkeypatch.setattr(live.store, "commit", always_stale)
    err = await ana.request("add_bot", table=table, seat=1, level="random")
    assert err["code"] == "conflict"
    monkeypatch.undo()
    stored = (await server.hub.store.load_table(table)).doc
    assert stored == before and live.state.to_bytes() == before


async def test_a_move_after_the_match_is_match_over(connect):
    from .players import autoplay

    ana = await connect("Ana")
    table = (await ana.call("create_table", options={"deals": 1, "bot_delay_ms": 0,
                                                       "signals": "off"}))["table"]
    await ana.call("start", table=table)
    await autoplay(ana, table, 0)
    err = await ana.request("play", table=table, card="3o")
    assert err["code"] == "match_over"
