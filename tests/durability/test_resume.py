"""Sessions and resume (issue 6): drops, replays, resent commands, token rotation, grace."""

from __future__ import annotations

import asyncio

import pytest

from server.game.record import verify_record
from tests.server.netclient import NetClient, ServerError
from tests.server.players import autoplay, four_humans, hand_of

from .conftest import reconnect


async def four_at_a_table(url: str, **options):
    clients = [await NetClient.open(url, f"P{i}") for i in range(4)]
    table = await four_humans(clients, **options)
    for c in clients:
        await c.wait_event(lambda e: e["type"] == "hand_dealt")
    return table, clients


def url_of(srv) -> str:
    return f"ws://127.0.0.1:{srv.port}"


async def test_drop_mid_trick_and_resume_gets_exactly_the_missed_events(inproc):
    url = url_of(inproc)
    table, c = await four_at_a_table(url)
    await c[0].call("play", table=table, card=hand_of(c[0], 0)[0])
    await c[1].wait_event(lambda e: e["type"] == "turn" and e["seat"] == 1)
    last_before = max(c[1].seqs(table))
    await c[1].close()
    await c[0].wait_event(lambda e: e["type"] == "player_disconnected")
    # While seat 1 is away its partner signals it (kept for it), seat 0 signals seat 2.
    await c[3].call("signal", table=table, signal="monsieur")
    await c[0].call("signal", table=table, signal="useless_hand")
    await c[2].wait_event(lambda e: e["type"] == "signal")
    back = await reconnect(c[1], url)
    await back.wait_event(lambda e: e["type"] == "player_connected")
    seqs = back.seqs(table)
    new = [s for s in seqs if s > last_before]
    assert new == list(range(last_before + 1, last_before + 1 + len(new)))   # no gap, no dup
    missed = [e for e in back.events if e["seq"] > last_before]
    kinds = [e["event"]["type"] for e in missed]
    # Exactly what it may see, in order: its partner's signal, and nothing at all of the
    # signal seat 0 sent seat 2 (not even a placeholder: finding 9).
    assert kinds[:5] == ["player_disconnected", "table_changed", "signal", "player_connected",
                         "table_changed"]
    assert missed[2]["event"] == {"type": "signal", "from_seat": 3, "signal": "monsieur",
                                  "n": None}
    # Its state now equals everyone else's: same public events in the same order, its own
    # hand intact.
    public = ("card_played", "trick_done", "player_connected", "player_disconnected")
    mine = [e["event"] for e in back.events if e["event"]["type"] in public]
    for other in (c[0], c[2]):
        await other.wait_event(lambda e: e["type"] == "player_connected")
        theirs = [e["event"] for e in other.events if e["event"]["type"] in public]
        assert mine == theirs
    state = inproc.hub.tables[table].match
    assert sorted(hand_of(back, 1)) == sorted(state.hands[1])
    # Seat 1 acts on the turn it was given before it dropped (its turn is still current).
    results = await asyncio.gather(autoplay(c[0], table, 0), autoplay(back, table, 1),
                                   autoplay(c[2], table, 2), autoplay(c[3], table, 3))
    assert verify_record(results[1]["record"])["points"] == results[0]["points"]
    await back.close()


async def test_resent_command_after_resume_is_applied_once(inproc):
    url = url_of(inproc)
    table, c = await four_at_a_table(url)
    card = hand_of(c[0], 0)[0]
    first = await c[0].request("play", cid=500, table=table, card=card)
    assert first["type"] == "ok"
    await c[0].close()
    back = await reconnect(c[0], url)
    again = await back.request("play", cid=500, table=table, card=card)
    assert again == first
    plays = [p for p in (await _wait_plays(c[2], 1))]
    assert plays == [{"type": "card_played", "seat": 0, "card": card}]
    assert inproc.hub.tables[table].match.trick == [card]
    await back.close()


async def _wait_plays(client: NetClient, n: int):
    await client.wait_until(lambda: len(client.payloads("card_played")) >= n)
    return client.payloads("card_played")


async def test_token_rotates_and_an_old_token_is_refused(inproc):
    url = url_of(inproc)
    ana = await NetClient.open(url, "Ana")
    first = ana.welcome["session"]
    assert len(first) >= 22            # >= 128 bits of randomness, url-safe
    again = await NetClient.open(url, "Ana", token=first)
    second = again.welcome["session"]
    assert second != first and again.welcome["player_id"] == ana.welcome["player_id"]
    # The old connection is told it was replaced. Once the new connection is used (so its
    # welcome surely arrived), the old token no longer works.
    await asyncio.wait_for(ana.closed.wait(), 10)
    assert ana.ws.close_code == 4009
    await again.call("list_tables")
    with pytest.raises(ServerError) as err:
        await NetClient.open(url, "Mallory", token=first)
    assert err.value.code == "bad_token"
    # And resume needs the current token too.
    tid = (await again.call("create_table", options={"deals": 1}))["table"]
    reply = await again.request("resume", token=first, table=tid, last_seq=0)
    assert reply["code"] == "bad_token"
    await again.close()


async def test_a_crash_before_the_welcome_arrives_does_not_cost_the_session(inproc):
    """Rotation is two-step: until the new token's connection is used, the old token still
    works, so a client that never saw its welcome (server killed) keeps its seat."""
    url = url_of(inproc)
    ana = await NetClient.open(url, "Ana")
    first = ana.welcome["session"]
    table = (await ana.call("create_table", options={"deals": 1}))["table"]
    lost = await NetClient.open(url, "Ana", token=first)     # its welcome "never arrived"
    await lost.ws.close()
    back = await NetClient.open(url, "Ana", token=first)     # the old token still works
    await back.call("resume", token=back.welcome["session"], table=table, last_seq=0)
    assert back.welcome["player_id"] == ana.welcome["player_id"]
    # ... and the never-used token from the lost welcome is valid too, until retired.
    assert lost.welcome["session"] != back.welcome["session"]
    await back.close()


async def test_grace_expiry_hands_the_seat_to_a_bot_and_the_human_takes_it_back(inproc):
    url = url_of(inproc)
    table, c = await four_at_a_table(url, grace_s=1, deals=2)
    await c[1].close()
    # After the grace period a bot of the table's level plays seat 1 ...
    changed = await c[0].wait_event(
        lambda e: e["type"] == "table_changed" and e["table"]["seats"][1]["level"] is not None)
    assert changed["event"]["table"]["seats"][1]["kind"] == "human"
    players = [asyncio.create_task(autoplay(c[i], table, i)) for i in (0, 2, 3)]
    await c[0].wait_event(lambda e: e["type"] == "card_played" and e["seat"] == 1)
    # ... until the human comes back and plays its own turns again.
    back = await reconnect(c[1], url)
    connected = await back.wait_event(
        lambda e: e["type"] == "player_connected" and e["seat"] == 1)
    table_state = inproc.hub.tables[table].state
    assert table_state.seats[1].takeover is False
    plays_by_bot = len([p for p in back.payloads("card_played") if p["seat"] == 1])
    assert plays_by_bot >= 1
    assert connected["seq"] > 0
    result = await autoplay(back, table, 1)
    assert result["type"] == "match_over"
    await asyncio.gather(*players)
    # Every seat-1 card after the return was played by the human through autoplay.
    human_plays = [e for e in back.replies.values()]
    assert human_plays == []          # every reply was consumed by autoplay's calls
    seat1 = [p for p in back.payloads("card_played") if p["seat"] == 1]
    assert len(seat1) == 18 and plays_by_bot < 18
    await back.close()
