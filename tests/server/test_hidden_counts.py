"""No viewer learns the number or the timing of events it may not see (issue 10, finding 9).

Two deals of one match: in the first nobody signals; in the second seat 0 signals its
partner three times and seat 2 twice (R15, private mode R16). What the opponents (seats 1
and 3) and a spectator receive must be the same in both deals, event for event and number
for number: the other team's signals leave no trace at all, not a placeholder, not a gap in
a sequence. (Before 1.2 each signal reached them as a numbered placeholder, so a seat
could count the opponents' signals, and from the bots' habit of announcing every carte
majeure, judge how strong their hands were.)
"""

from __future__ import annotations

import asyncio
from typing import Any

from .netclient import NetClient
from .players import autoplay, four_humans


def per_deal(client: NetClient, table: str) -> dict[int, list[dict[str, Any]]]:
    """Each deal's events as this viewer received them: type, seat, and seq delta."""
    deals: dict[int, list[dict[str, Any]]] = {}
    current = 0
    for e in client.events:
        if e["table"] != table:
            continue
        ev = e["event"]
        if ev["type"] == "deal_started":
            current = ev["deal_number"]
        if current:
            deals.setdefault(current, []).append(e)
    return deals


def outline(entries: list[dict[str, Any]]) -> list[tuple[str, int]]:
    """What a viewer could count: each event's type and how far its number moved."""
    out = []
    prev = entries[0]["seq"] - 1
    for e in entries:
        out.append((e["event"]["type"], e["seq"] - prev))
        prev = e["seq"]
    return out


async def signal_in_deal_two(client: NetClient, table: str, signals: list[dict[str, Any]]
                             ) -> None:
    await client.wait_event(lambda e: e["type"] == "deal_started" and e["deal_number"] == 2,
                            timeout=60)
    for s in signals:
        await client.call("signal", table=table, **s)


async def test_the_other_teams_signals_change_nothing_opponents_or_spectators_receive(
        connect):
    clients = [await connect(f"P{i}") for i in range(4)]
    watcher = await connect("Watcher")
    table = await four_humans(clients, start=False, deals=2, signals="private")
    await watcher.call("spectate", table=table)
    await clients[0].call("start", table=table)
    signallers = [
        signal_in_deal_two(clients[0], table, [{"signal": "useless_hand"},
                                               {"signal": "aces", "n": 2},
                                               {"signal": "going_mordienne"}]),
        signal_in_deal_two(clients[2], table, [{"signal": "madame"},
                                               {"signal": "useless_hand"}]),
    ]
    await asyncio.gather(*(autoplay(c, table, i) for i, c in enumerate(clients)), *signallers)
    await watcher.wait_event(lambda e: e["type"] == "match_over")

    for viewer in (clients[1], clients[3], watcher):
        deals = per_deal(viewer, table)
        # (The start's table_changed, status playing, belongs to the first deal only.)
        # (and the match's end, match_over and its table_changed, to the last one).
        ends = ("table_changed", "match_over")
        one = [x for x in outline(deals[1]) if x[0] not in ends]
        two = [x for x in outline(deals[2]) if x[0] not in ends]
        # The dealer, the trick winners and so whose turn it is differ between two deals;
        # what may not differ is the kind of each event and how its number moves.
        assert [t for t, _ in one] == [t for t, _ in two], viewer.welcome["name"]
        assert all(step == 1 for _, step in one + two)
        assert not viewer.payloads("signal") and not viewer.payloads("signal_sent")
        assert all(e.get("event") is not None for e in viewer.events)   # no placeholders
    # The partners did get them (and the senders heard back what they sent), in deal 2.
    assert [p["signal"] for p in clients[2].payloads("signal")] == [
        "useless_hand", "aces", "going_mordienne"]
    assert [p["signal"] for p in clients[0].payloads("signal")] == ["madame", "useless_hand"]
    assert len(clients[0].payloads("signal_sent")) == 3
    assert len(clients[2].payloads("signal_sent")) == 2
