"""Playing over the network (issue 5): real server on 127.0.0.1, real Redis-compatible store."""

from __future__ import annotations

import asyncio

import msgpack
import pytest

from server.game import ALL_CARDS
from server.game.record import verify_record
from server.table.delta import restore

from .netclient import ServerError
from .players import autoplay, four_humans

FAST = {"deals": 2, "bot_delay_ms": 0}


async def seated_table(connect, humans: int, options=None, levels=("random",) * 3,
                       watchers=()):
    """A started table with ``humans`` network players (seats 0..) and bots after them;
    ``watchers`` spectate from before the start."""
    clients = [await connect(f"P{i}") for i in range(humans)]
    created = await clients[0].call("create_table", options=options or FAST)
    table = created["table"]
    for w in watchers:
        await w.call("spectate", table=table)
    for i, c in enumerate(clients[1:], start=1):
        assert (await c.call("join", table=table, seat=i))["seat"] == i
    for k, seat in enumerate(range(humans, 4)):
        await clients[0].call("add_bot", table=table, seat=seat, level=levels[k])
    await clients[0].call("start", table=table)
    return table, clients


async def test_four_humans_play_a_whole_match_and_the_stored_record_verifies(connect, server):
    table, clients = await seated_table(connect, 4)
    results = await asyncio.gather(*(autoplay(c, table, i) for i, c in enumerate(clients)))
    assert all(r == results[0] for r in results)
    summary = verify_record(results[0]["record"])
    assert summary["points"] == results[0]["points"]
    # The stored record is the same, and get_record serves it after the match (R17).
    fetched = await clients[2].call("get_record", table=table)
    assert fetched["record"] == results[0]["record"]
    stored = await server.hub.store.load_record(table)
    assert stored is not None


async def test_two_humans_and_two_bots(connect):
    table, clients = await seated_table(connect, 2, levels=("normal", "easy"))
    results = await asyncio.gather(autoplay(clients[0], table, 0), autoplay(clients[1], table, 1))
    assert results[0]["points"] == results[1]["points"]
    assert sum(results[0]["points"]) >= 0
    assert verify_record(results[0]["record"])["result"] == results[0]["result"]


async def test_every_viewer_sequence_is_gap_free(connect):
    watcher = await connect("Watcher")
    table, clients = await seated_table(connect, 2, watchers=[watcher])
    await asyncio.gather(autoplay(clients[0], table, 0), autoplay(clients[1], table, 1))
    await watcher.wait_event(lambda e: e["type"] == "match_over")
    for c in (*clients, watcher):
        seqs = [s for s in c.seqs(table)]
        first = seqs[0]
        # Snapshots repeat the seq they reflect; after that every number arrives once.
        after = [s for s in seqs if s > first]
        assert after == list(range(first + 1, first + 1 + len(after)))


async def test_the_end_of_a_match_announces_the_finished_table(connect):
    """docs/PROTOCOL.md: `table_changed` reaches everyone when the table's status changes.
    The match's end (R14) makes the table `finished`; seats and spectators hear it right
    after `match_over` (a client offers the rematch on it), in the same gap-free sequence."""
    watcher = await connect("Watcher")
    table, clients = await seated_table(connect, 2, watchers=[watcher])
    await asyncio.gather(autoplay(clients[0], table, 0), autoplay(clients[1], table, 1))
    for c in (*clients, watcher):
        finished = await c.wait_event(lambda e: e["type"] == "table_changed"
                                      and e["table"]["status"] == "finished")
        over = await c.wait_event(lambda e: e["type"] == "match_over")
        assert finished["table"] == table and finished["seq"] == over["seq"] + 1


async def test_spectator_sees_every_public_event_and_no_hidden_card_or_signal(connect):
    options = {"deals": 1, "bot_delay_ms": 0, "signals": "private"}
    watcher = await connect("Watcher")
    table, clients = await seated_table(connect, 2, options=options, levels=("normal", "normal"),
                                        watchers=[watcher])
    await clients[0].call("signal", table=table, signal="useless_hand")
    await asyncio.gather(autoplay(clients[0], table, 0), autoplay(clients[1], table, 1))
    await watcher.wait_event(lambda e: e["type"] == "match_over")
    played = {p["card"] for p in watcher.payloads("card_played")}
    assert len(played) == 36
    # Every frame it got: no hand, no talon, no signal; the only cards are played ones.
    for msg in watcher.messages:
        ev = msg.get("event") or {}
        assert ev.get("type") not in ("hand_dealt", "talon_dealt", "signal")
        if ev.get("type") == "snapshot":
            assert ev["view"]["hand"] == [] and ev["view"]["signals"] == []
    frames = b"".join(f for f in watcher.frames if b"match_over" not in f)
    for card in set(ALL_CARDS) - played:
        assert msgpack.packb(card) not in frames, f"unplayed {card} reached the spectator"
    # R8a: the seed material is in the record at the end, and in no frame before it, for
    # the spectator or a player (it predicts every hand).
    revealed = watcher.payloads("match_over")[0]["record"]["fair"]
    for c in (watcher, *clients):
        before = b"".join(c.frames[:next(i for i, f in enumerate(c.frames)
                                         if b"match_over" in f)])
        for name in ("secret", "salt", "seed"):
            assert revealed[name].encode() not in before, (name, c.welcome["name"])
            assert revealed[name][:16].encode() not in before
    # It saw each public event the players saw, in the same order (its numbers are its
    # own: a viewer's sequence counts only what it may see).
    kinds = ("card_played", "trick_done", "deal_scored", "match_over")
    public = [e["event"] for e in clients[0].events
              if e.get("event") and e["event"]["type"] in kinds]
    seen = [e["event"] for e in watcher.events if e.get("event") and e["event"]["type"] in kinds]
    assert seen == public


async def test_r16_a_signal_reaches_the_partner_and_nobody_else(connect):
    clients = [await connect(f"P{i}") for i in range(4)]
    table = await four_humans(clients, start=False, signals="private")
    watcher = await connect("Watcher")
    await watcher.call("spectate", table=table)
    await clients[0].call("start", table=table)
    for c in (*clients, watcher):
        await c.wait_event(lambda e: e["type"] == "turn")
    before = {id(c): len(c.events) for c in (*clients, watcher)}
    await clients[1].call("signal", table=table, signal="aces", n=2)
    hands = (await clients[0].wait_event(lambda e: e["type"] == "hand_dealt"))["event"]["cards"]
    await clients[0].call("play", table=table, card=hands[0])
    for c in (*clients, watcher):
        await c.wait_event(lambda e: e["type"] == "card_played")

    def since(c):
        return [e["event"]["type"] for e in c.events[before[id(c)]:]]
    # R16: the partner gets the signal, the sender hears back what it sent, and the others
    # get nothing at all: not a placeholder, not a number (finding 9).
    assert since(clients[3]) == ["signal", "card_played", "turn"]
    assert clients[3].payloads("signal") == [
        {"type": "signal", "from_seat": 1, "signal": "aces", "n": 2}]
    assert since(clients[1]) == ["signal_sent", "card_played", "turn"]
    assert clients[1].payloads("signal_sent") == [
        {"type": "signal_sent", "signal": "aces", "n": 2}]
    for other in (clients[0], clients[2], watcher):
        assert since(other) == ["card_played", "turn"]
        assert not other.payloads("signal") and not other.payloads("signal_sent")


async def test_signals_off_is_refused(connect):
    table, clients = await seated_table(connect, 1, options={"deals": 1, "signals": "off",
                                                              "bot_delay_ms": 5000})
    with pytest.raises(ServerError) as err:
        await clients[0].call("signal", table=table, signal="monsieur")
    assert err.value.code == "signals_off"


async def _stored(server, table):
    loaded = await server.hub.store.load_table(table)
    return loaded.version, restore(loaded)[0]


async def test_bad_moves_are_refused_with_their_code_and_change_nothing(connect, server):
    clients = [await connect(f"P{i}") for i in range(4)]
    table = await four_humans(clients)
    outsider = await connect("Outsider")
    other = (await outsider.call("create_table", options={"deals": 1}))["table"]
    hands = {}
    for i, c in enumerate(clients):
        hands[i] = (await c.wait_event(lambda e: e["type"] == "hand_dealt"))["event"]["cards"]
    before = await _stored(server, table)
    assert before[1].match["to_act"] == 0          # R10: left of dealer 3 leads
    cases = [
        (clients[1], {"table": table, "card": hands[1][0]}, "not_your_turn"),
        (clients[0], {"table": table, "card": hands[1][0]}, "card_not_in_hand"),
        (outsider, {"table": table, "card": hands[0][0]}, "not_seated"),
        (clients[0], {"table": other, "card": hands[0][0]}, "not_seated"),
        (clients[0], {"table": "nope", "card": hands[0][0]}, "no_such_table"),
        (clients[0], {"table": table, "card": "3x"}, "unknown_card"),
    ]
    for client, fields, code in cases:
        reply = await client.request("play", **fields)
        assert reply["type"] == "error" and reply["code"] == code, (fields, reply)
        assert reply["message"]
    wrong = await clients[0].request("chanter_vote", table=table, vote=True)
    assert wrong["code"] == "wrong_phase"
    assert await _stored(server, table) == before


async def test_lobby_errors(connect):
    ana, bo, cy = await connect("Ana"), await connect("Bo"), await connect("Cy")
    table = (await ana.call("create_table", options=FAST))["table"]
    assert (await bo.request("join", table=table, seat=0))["code"] == "seat_taken"
    assert (await bo.request("start", table=table))["code"] == "not_creator"
    # start fills empty seats with bots of the table's level; a started table is not_ready.
    solo = (await cy.call("create_table", options=FAST))["table"]
    await cy.call("start", table=solo)
    seats = (await cy.wait_event(lambda e: e["type"] == "table_changed"
                                 and e["table"]["status"] == "playing"))["event"]["table"]["seats"]
    assert [s["kind"] for s in seats] == ["human", "bot", "bot", "bot"]
    assert (await cy.request("start", table=solo))["code"] == "not_ready"
    assert (await cy.call("leave", table=solo))["seat"] == 0
    assert (await bo.request("add_bot", table=table, seat=1, level="easy"))["code"] == \
        "not_at_table"
    private = await ana.call("create_table", options=FAST, private=True)
    assert (await cy.request("join", table=private["table"]))["code"] == "bad_code"
    assert (await cy.request("spectate", table=private["table"]))["code"] == "bad_code"
    listed = [t["table"] for t in (await cy.call("list_tables"))["tables"]]
    assert table in listed and private["table"] not in listed
    assert (await cy.call("join", table=private["table"], code=private["code"]))["seat"] == 1
    for seat in (1, 2, 3):
        if seat > 1:
            await ana.call("add_bot", table=table, seat=seat, level="easy")
    await bo.call("join", table=table, seat=1)
    assert (await cy.request("join", table=table))["code"] == "table_full"
    await ana.call("start", table=table)
    assert (await ana.request("remove_bot", table=table, seat=2))["code"] == "wrong_phase"


async def test_two_concurrent_commands_on_one_table_apply_in_a_defined_order(connect, server):
    """Both clients fire at once: the table's lock applies one, then refuses the other."""
    clients = [await connect(f"P{i}") for i in range(4)]
    table = await four_humans(clients)
    hands = [(await c.wait_event(lambda e: e["type"] == "hand_dealt"))["event"]["cards"]
             for c in clients]
    # Seat 0 leads; seat 1 also tries at the same moment.
    r0, r1 = await asyncio.gather(
        clients[0].request("play", table=table, card=hands[0][0]),
        clients[1].request("play", table=table, card=hands[1][0]),
    )
    assert r0["type"] == "ok"
    # Seat 1's play was either applied after seat 0's (legal then) or refused before it.
    _version, state = await _stored(server, table)
    played = [p for p in clients[2].payloads("card_played")]
    if r1["type"] == "ok":
        assert [p["seat"] for p in played][:2] == [0, 1]
    else:
        assert r1["code"] == "not_your_turn"
        assert state.match["trick"] == [hands[0][0]]
        assert state.match["hands"][1] == hands[1]


async def test_resent_command_id_is_answered_with_its_original_result(connect, server):
    ana = await connect("Ana")
    first = await ana.request("create_table", cid=77, options=FAST)
    again = await ana.request("create_table", cid=77, options=FAST)
    assert first == again
    assert len([t for t in server.hub.tables.values() if t.state.creator ==
                ana.welcome["player_id"]]) == 1


async def test_r9_chanter_over_the_network(connect):
    """All four agree (R9): the dealer's left and the dealer get six talon cards each, discard
    six, and nobody else ever sees them."""
    options = {"deals": 1, "bot_delay_ms": 0, "chanter": True, "first_dealer": 3}
    table, clients = await seated_table(connect, 4, options=options)
    results = await asyncio.gather(*(autoplay(c, table, i) for i, c in enumerate(clients)))
    assert verify_record(results[0]["record"])["points"] == results[0]["points"]
    talon = {i: c.payloads("talon_dealt") for i, c in enumerate(clients)}
    assert [len(talon[i]) for i in range(4)] == [1, 0, 0, 1]      # left of dealer 3, dealer
    assert all(len(t[0]["cards"]) == 6 for t in (talon[0], talon[3]))
    votes = [p["seat"] for p in clients[1].payloads("chanter_vote")]
    assert votes == [0, 1, 2, 3]
    assert clients[1].payloads("chanter_result") == [{"type": "chanter_result", "accepted": True}]


async def test_one_human_with_expert_bots_and_a_table_budget(connect):
    """Expert bots think off the event loop, within the table's budget (issue 4)."""
    options = {"deals": 1, "bot_delay_ms": 0, "bot_budget": 0.2, "signals": "private"}
    table, clients = await seated_table(connect, 1, options=options,
                                        levels=("expert", "expert", "expert"))
    over = await autoplay(clients[0], table, 0)
    assert verify_record(over["record"])["points"] == over["points"]
    # Bots signal their partner (R15); the human at seat 0 sees only its partner's (seat 2).
    for s in clients[0].payloads("signal"):
        assert s["from_seat"] == 2


async def test_r7_partner_draw_reseats_the_players(connect):
    """R7 over the network: the draw is shown to everyone, players move to their new seats,
    and each then receives the hand of its new seat."""
    clients = [await connect(f"P{i}") for i in range(4)]
    table = await four_humans(clients, partner_draw=True, deals=1)
    draw = (await clients[0].wait_event(lambda e: e["type"] == "partner_draw"))["event"]
    seating = draw["seating"]
    assert sorted(seating) == [0, 1, 2, 3]
    holders = {card: seat for seat, card in draw["cards"] if card in ("3o", "3c")}
    # R7: the Monsieur holder keeps his seat; the Madame holder sits opposite, and deals.
    assert seating[holders["3o"]] == holders["3o"]
    assert seating[holders["3c"]] == (holders["3o"] + 2) % 4 == draw["dealer"]
    for old, client in enumerate(clients):
        new = seating[old]
        dealt = await client.wait_event(lambda e: e["type"] == "hand_dealt")
        assert dealt["event"]["seat"] == new
        mine = (await client.call("list_tables"))["seats"]
        assert mine == [{"table": table, "seat": new, "status": "playing"}]


@pytest.mark.parametrize(("risk", "receivers"), [(1.0, {1, 2, 3}), (0.0, {2})])
async def test_r16_risky_signals_reach_noticing_opponents_never_spectators(connect, risk,
                                                                         receivers):
    clients = [await connect(f"P{i}") for i in range(4)]
    watcher = await connect("Watcher")
    table = await four_humans(clients, start=False, signals="risky", signal_risk=risk)
    await watcher.call("spectate", table=table)
    await clients[0].call("start", table=table)
    await clients[0].call("signal", table=table, signal="madame")
    hand = (await clients[0].wait_event(lambda e: e["type"] == "hand_dealt"))["event"]["cards"]
    await clients[0].call("play", table=table, card=hand[0])
    for c in (*clients, watcher):
        await c.wait_event(lambda e: e["type"] == "card_played")
    for i, c in enumerate([*clients, watcher]):
        got = c.payloads("signal")
        assert (got == [{"type": "signal", "from_seat": 0, "signal": "madame", "n": None}]) \
            == (i in receivers), (i, got)
    # The sender is not told who noticed (R16): it hears back only what it sent.
    assert not clients[0].payloads("signal")
    assert clients[0].payloads("signal_sent") == [
        {"type": "signal_sent", "signal": "madame", "n": None}]
