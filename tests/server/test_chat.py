"""Table chat (issue 15): players speak to the whole table, spectators to spectators only
(they must not coach a seat); mute; limits; replayed on resume, never in a record.

Real server on 127.0.0.1, real store. The leak audit here is the one for hidden cards and
signals (tests/server/test_play.py, test_hidden_counts.py) applied to chat: what a seat
must not receive leaves no frame, no number and no gap in its sequence.
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgpack

from protocol import CHAT_HISTORY
from server.app import running
from server.table.chat import KEPT_FOR_ABSENT, sender_id
from server.table.mutations import Work
from server.table.state import TableState

from .conftest import server_settings
from .netclient import NetClient
from .players import autoplay, four_humans

QUIET = {"deals": 1, "bot_delay_ms": 10000, "first_dealer": 3}


def chats(client: NetClient, table: str) -> list[dict[str, Any]]:
    return [e["event"] for e in client.events
            if e["table"] == table and e["event"]["type"] == "chat"]


def gap_free(client: NetClient, table: str) -> bool:
    seqs = [e["seq"] for e in client.events if e["table"] == table]
    after = [s for s in seqs if s > seqs[0]]
    return after == list(range(seqs[0] + 1, seqs[0] + 1 + len(after)))


async def a_table_with_two_seats_and_two_spectators(connect):
    ana, bo, sam, tom = [await connect(n) for n in ("Ana", "Bo", "Sam", "Tom")]
    table = (await ana.call("create_table", options=QUIET))["table"]
    await bo.call("join", table=table, seat=1)
    await sam.call("spectate", table=table)
    await tom.call("spectate", table=table)
    return table, ana, bo, sam, tom


async def test_a_seats_words_reach_everyone_a_spectators_only_the_spectators(connect):
    table, ana, bo, sam, tom = await a_table_with_two_seats_and_two_spectators(connect)
    await ana.call("chat", table=table, text="hello all")
    await sam.call("chat", table=table, text="Ana will lose, Bo holds Monsieur")
    await bo.call("chat", table=table, text="ready?")
    for c in (ana, bo, sam, tom):
        await c.wait_until(lambda c=c: any(m["text"] == "ready?" for m in chats(c, table)))
    ana_says = {"type": "chat", "from_seat": 0, "name": "Ana", "text": "hello all",
                "sender": sender_id_of(ana, table)}
    sam_says = {"type": "chat", "from_seat": None, "name": "Sam",
                "text": "Ana will lose, Bo holds Monsieur", "sender": sender_id_of(sam, table)}
    for seat in (ana, bo):
        assert [m["text"] for m in chats(seat, table)] == ["hello all", "ready?"]
        assert chats(seat, table)[0] == ana_says
        # Not a frame, not a number: the spectators' words left no trace for the seats.
        assert not any(b"Monsieur" in f for f in seat.frames)
        assert gap_free(seat, table)
    for spectator in (sam, tom):
        assert chats(spectator, table) == [ana_says, sam_says, {**ana_says, "from_seat": 1,
                                                                  "name": "Bo", "text": "ready?",
                                                                  "sender": chats(ana, table)[1]
                                                                  ["sender"]}]
        assert gap_free(spectator, table)
    # Senders are stable per player at a table, and differ between players.
    assert len({m["sender"] for m in chats(sam, table)}) == 3


def sender_id_of(client: NetClient, table: str) -> str:
    """What the server names this client's messages (its first chat at the table)."""
    for c in client.events:
        ev = c["event"]
        if c["table"] == table and ev["type"] == "chat" and ev["name"] == client.welcome["name"]:
            return str(ev["sender"])
    raise AssertionError("no chat from this client yet")


async def test_mute_hides_a_sender_from_you_alone_without_a_gap_and_unmute_undoes_it(connect):
    table, ana, bo, sam, tom = await a_table_with_two_seats_and_two_spectators(connect)
    await ana.call("chat", table=table, text="one")
    await bo.wait_until(lambda: len(chats(bo, table)) == 1)
    ana_id = chats(bo, table)[0]["sender"]
    assert await bo.call("mute", table=table, sender=ana_id) == {"table": table}
    await sam.call("mute", table=table, sender=ana_id)
    await ana.call("chat", table=table, text="two")
    await ana.call("add_bot", table=table, seat=2, level="random")   # a public event after
    for c in (ana, bo, sam, tom):
        await c.wait_until(lambda c=c: sum(1 for e in c.events if e["table"] == table
                                           and e["event"]["type"] == "table_changed") >= 2)
    assert [m["text"] for m in chats(bo, table)] == ["one"]
    assert [m["text"] for m in chats(sam, table)] == ["one"]
    assert [m["text"] for m in chats(tom, table)] == ["one", "two"]
    assert [m["text"] for m in chats(ana, table)] == ["one", "two"]
    for c in (ana, bo, sam, tom):
        assert gap_free(c, table)
    await bo.call("mute", table=table, sender=ana_id, muted=False)
    await ana.call("chat", table=table, text="three")
    await bo.wait_until(lambda: [m["text"] for m in chats(bo, table)] == ["one", "three"])
    await tom.wait_until(lambda: len(chats(tom, table)) == 3)
    assert [m["text"] for m in chats(sam, table)] == ["one"]      # Sam still mutes Ana
    # A spectator's words to the spectators can be muted by a spectator too.
    await tom.call("chat", table=table, text="tom here")
    await sam.wait_until(lambda: chats(sam, table)[-1]["text"] == "tom here")
    await sam.call("mute", table=table, sender=chats(sam, table)[-1]["sender"])
    await tom.call("chat", table=table, text="tom again")
    await tom.wait_until(lambda: chats(tom, table)[-1]["text"] == "tom again")
    await ana.call("chat", table=table, text="four")
    await tom.wait_until(lambda: chats(tom, table)[-1]["text"] == "four")
    assert [m["text"] for m in chats(sam, table)] == ["one", "tom here"]
    assert gap_free(sam, table)


async def test_chat_limits_and_who_may_speak(redis_url, key_prefix, redis_client):
    settings = server_settings(redis_url, key_prefix, chat_burst=3, chat_per_second=0.01)
    async with running(settings) as srv:
        url = f"ws://127.0.0.1:{srv.port}"
        ana, eve = await NetClient.open(url, "Ana"), await NetClient.open(url, "Eve")
        table = (await ana.call("create_table", options=QUIET))["table"]
        for code, cmd, fields in [
            ("not_at_table", "chat", {"text": "hi"}),
            ("not_at_table", "mute", {"sender": "0" * 16}),
        ]:
            assert (await eve.request(cmd, table=table, **fields))["code"] == code
        long = await ana.request("chat", table=table, text="x" * 201)
        assert (long["code"], long["details"]) == ("invalid_field", {"field": "$.text"})
        await ana.call("chat", table=table, text="  \x1b[31mred\x1b[0m \u202egreen\u200b ")
        await ana.wait_until(lambda: len(chats(ana, table)) == 1)
        assert chats(ana, table)[0]["text"] == "[31mred[0m green"
        await ana.call("chat", table=table, text="2")
        await ana.call("chat", table=table, text="3")
        over = await ana.request("chat", table=table, text="4")
        assert over["type"] == "error" and over["code"] == "rate_limited"
        # The chat's bucket is its own: commands go on while chat is refused.
        await ana.call("start", table=table)
        assert (await ana.request("chat", table=table, text="5"))["code"] == "rate_limited"
        await ana.wait_until(lambda: len(chats(ana, table)) == 3)
        assert [m["text"] for m in chats(ana, table)][1:] == ["2", "3"]
        await ana.close()
        await eve.close()


async def test_chat_is_replayed_on_resume_and_never_in_the_record(connect, url):
    clients = [await connect(n) for n in ("Ana", "Bo", "Cy", "Di")]
    table = await four_humans(clients)
    await clients[1].wait_event(lambda e: e["type"] == "turn")
    last = clients[1].events[-1]["seq"]
    token = clients[1].welcome["session"]
    await clients[1].close()
    await clients[0].call("chat", table=table, text="where did Bo go")
    back = await NetClient.open(url, "Bo", token=token, ids=clients[1].ids)
    result = await back.call("resume", token=back.welcome["session"], table=table,
                             last_seq=last)
    assert result["snapshot"] is False
    await back.wait_until(lambda: any(m["text"] == "where did Bo go" for m in chats(back, table)))
    assert back.events[0]["seq"] == last + 1 and gap_free(back, table)
    # (A fresh snapshot gives Bo his hand back, to play on.)
    await back.call("resume", token=back.welcome["session"], table=table, last_seq=2**53)
    await back.wait_event(lambda e: e["type"] == "snapshot")
    clients[1] = back
    over = await asyncio.gather(*(autoplay(c, table, i) for i, c in enumerate(clients)))
    assert over[0] is not None
    assert b"where did Bo go" not in msgpack.packb(over[0]["record"])
    record = await clients[2].call("get_record", table=table)
    assert "where did Bo go" not in str(record)
    await back.close()


def test_a_strangers_counters_and_mutes_do_not_grow_the_table_forever():
    """Spectators who received a spectator's chat get a private counter; once they are
    gone, only the most recent ``KEPT_FOR_ABSENT`` are kept (the document stays bounded)."""
    from protocol import CreateTable
    from server.table import chat
    from server.table.mutations import new_table

    state: TableState = new_table("t1", "ana", "Ana", CreateTable(id=1), 0.0, 1.0)
    for i in range(KEPT_FOR_ABSENT + 50):
        state.priv[f"gone{i}"] = 3
        state.mutes[f"gone{i}"] = ["0" * 16]
    state.priv["ana"] = 7
    work = Work(state, None, watchers=frozenset({"sam"}))
    chat.post(work, "sam", "Sam", "hi")
    assert len([p for p in state.priv if p.startswith("gone")]) == KEPT_FOR_ABSENT
    assert "gone0" not in state.priv and f"gone{KEPT_FOR_ABSENT + 49}" in state.priv
    assert state.priv["ana"] == 7                      # a seated player is never dropped
    assert len(state.mutes) == KEPT_FOR_ABSENT
    assert sender_id(state, "sam") != sender_id(state, "ana")


async def test_spectators_chat_changes_nothing_a_seat_receives(connect):
    """The hidden-counts audit (test_hidden_counts.py) for chat: spectators talk through
    the second deal only, and every seat's two deals look the same, event for event and
    number for number; the spectators got exactly the chat on top."""
    from .test_hidden_counts import outline, per_deal

    clients = [await connect(f"P{i}") for i in range(4)]
    sam, tom = await connect("Sam"), await connect("Tom")
    table = await four_humans(clients, start=False, deals=2, signals="off")
    for s in (sam, tom):
        await s.call("spectate", table=table)
    await clients[0].call("start", table=table)

    async def talk_in_deal_two() -> None:
        await sam.wait_event(lambda e: e["type"] == "deal_started" and e["deal_number"] == 2,
                             timeout=60)
        for text in ("Bo has Monsieur", "P3 is bluffing", "play the 2o"):
            await sam.call("chat", table=table, text=text)

    await asyncio.gather(*(autoplay(c, table, i) for i, c in enumerate(clients)),
                         talk_in_deal_two())
    await tom.wait_event(lambda e: e["type"] == "match_over")
    await tom.wait_until(lambda: len(chats(tom, table)) == 3)
    ends = ("table_changed", "match_over")
    for seat in clients:
        deals = per_deal(seat, table)
        one = [x for x in outline(deals[1]) if x[0] not in ends]
        two = [x for x in outline(deals[2]) if x[0] not in ends]
        assert [t for t, _ in one] == [t for t, _ in two]
        assert all(step == 1 for _, step in one + two)
        assert not chats(seat, table)
        assert not any(b"Monsieur" in f or b"bluffing" in f for f in seat.frames)
    for s in (sam, tom):
        two = [t for t, _ in outline(per_deal(s, table)[2])]
        one = [t for t, _ in outline(per_deal(s, table)[1])]
        assert [t for t in two if t != "chat"] != [] and two.count("chat") == 3
        assert [t for t in two if t not in ("chat", *ends)] == \
            [t for t in one if t not in ends]
        assert gap_free(s, table)


def histories(client: NetClient, table: str) -> list[dict[str, Any]]:
    return [e["event"] for e in client.events
            if e["table"] == table and e["event"]["type"] == "chat_history"]


async def test_a_head_carries_the_chat_so_far_that_its_viewer_may_see(connect, url):
    """``chat_history`` (1.4): a new spectator, a reloaded page (a resume answered by a
    snapshot) and a seated player each get the kept lines they may see now, in the head
    and nowhere else: a seat none of the spectators' lines, nobody a muted sender's."""
    table, ana, bo, sam, tom = await a_table_with_two_seats_and_two_spectators(connect)
    # A table with no chat yet sends no history in its heads.
    assert not histories(sam, table) and not histories(ana, table)
    # ... unless the viewer mutes someone: then it names whom, with no lines yet.
    await sam.call("mute", table=table, sender="0" * 16)
    await sam.call("spectate", table=table)      # again: a fresh head
    await sam.wait_until(lambda: bool(histories(sam, table)))
    assert histories(sam, table)[0]["lines"] == []
    assert histories(sam, table)[0]["muted"] == ["0" * 16]
    await sam.call("mute", table=table, sender="0" * 16, muted=False)
    await ana.call("chat", table=table, text="hello all")
    await sam.call("chat", table=table, text="Bo holds Monsieur")
    await bo.call("chat", table=table, text="ready?")
    await tom.wait_until(lambda: len(chats(tom, table)) == 3)
    bo_id = chats(tom, table)[2]["sender"]
    await tom.call("mute", table=table, sender=bo_id)

    # A spectator who arrives now reads all three lines, and learns its own sender id.
    una = await connect("Una")
    await una.call("spectate", table=table)
    await una.wait_until(lambda: bool(histories(una, table)))
    [hist] = histories(una, table)
    assert [m["text"] for m in hist["lines"]] == ["hello all", "Bo holds Monsieur", "ready?"]
    assert hist["lines"][0] == chats(tom, table)[0]
    assert [e["event"]["type"] for e in una.events if e["table"] == table] == [
        "table_changed", "chat_history"]
    assert len({e["seq"] for e in una.events if e["table"] == table}) == 1   # one head
    await una.call("chat", table=table, text="hi, Una here")
    await una.wait_until(lambda: bool(chats(una, table)))
    assert chats(una, table)[0]["sender"] == hist["sender"]

    # A player who sits down later never reads the spectators' words.
    cy = await connect("Cy")
    await cy.call("join", table=table, seat=2)
    await cy.wait_until(lambda: bool(histories(cy, table)))
    assert [m["text"] for m in histories(cy, table)[0]["lines"]] == ["hello all", "ready?"]
    assert not any(b"Monsieur" in f or b"Una here" in f for f in cy.frames)

    # Tom muted Bo: his reload (a fresh snapshot) shows everything but Bo's line.
    token = tom.welcome["session"]
    await tom.close()
    back = await NetClient.open(url, "Tom", token=token, ids=tom.ids)
    result = await back.call("resume", token=back.welcome["session"], table=table,
                             last_seq=2**53)
    assert result["snapshot"] is True
    await back.wait_until(lambda: bool(histories(back, table)))
    assert [m["text"] for m in histories(back, table)[0]["lines"]] == [
        "hello all", "Bo holds Monsieur", "hi, Una here"]
    assert histories(back, table)[0]["muted"] == [bo_id]      # so he can unmute Bo
    assert [h["muted"] for h in histories(una, table) + histories(cy, table)] == [[], []]
    await back.close()


async def test_the_chat_kept_is_bounded(redis_url, key_prefix, redis_client):
    """Only the latest ``CHAT_HISTORY`` lines live in the table (and so in its stored
    document, written at every move), however long the conversation."""
    settings = server_settings(redis_url, key_prefix, chat_burst=CHAT_HISTORY + 5)
    async with running(settings) as srv:
        url = f"ws://127.0.0.1:{srv.port}"
        ana = await NetClient.open(url, "Ana")
        table = (await ana.call("create_table", options=QUIET))["table"]
        for i in range(CHAT_HISTORY + 5):
            await ana.call("chat", table=table, text=f"line {i}")
        eve = await NetClient.open(url, "Eve")
        await eve.call("spectate", table=table)
        await eve.wait_until(lambda: bool(histories(eve, table)))
        lines = [m["text"] for m in histories(eve, table)[0]["lines"]]
        assert lines == [f"line {i}" for i in range(5, CHAT_HISTORY + 5)]
        assert len(srv.hub.tables[table].state.chat) == CHAT_HISTORY
        await ana.close()
        await eve.close()
