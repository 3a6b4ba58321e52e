"""Scripted network players for integration tests: they act on the events they receive."""

from __future__ import annotations

import asyncio
from typing import Any

from .netclient import NetClient


async def four_humans(clients: list[NetClient], *, start: bool = True,
                      **options: Any) -> str:
    """Seat four network players at a new table (seats 0-3, dealer 3 so seat 0 leads, R10)
    and start it; returns the table id."""
    opts = {"deals": 1, "bot_delay_ms": 0, "first_dealer": 3, **options}
    table = (await clients[0].call("create_table", options=opts))["table"]
    for i in (1, 2, 3):
        await clients[i].call("join", table=table, seat=i)
    if start:
        await clients[0].call("start", table=table)
    return table


def hand_of(client: NetClient, seat: int) -> list[str]:
    """A seat's current hand, from the events its client received."""
    hand = Hand()
    for e in client.events:
        if e.get("event"):
            hand.apply(e["event"], seat)
    return hand.cards


class Hand:
    """A seat's hand as its own events tell it (hand_dealt, talon_dealt, card_played)."""

    def __init__(self) -> None:
        self.cards: list[str] = []

    def apply(self, event: dict[str, Any], seat: int) -> None:
        kind = event["type"]
        if kind == "hand_dealt" and event["seat"] == seat:
            self.cards = list(event["cards"])
        elif kind == "talon_dealt" and event["seat"] == seat:
            self.cards += event["cards"]
        elif kind == "card_played" and event["seat"] == seat and event["card"] in self.cards:
            self.cards.remove(event["card"])
        elif kind == "snapshot" and event["view"]["viewer"] == seat:
            self.cards = list(event["view"]["hand"])


#: Events that end a turn: once one of these follows a ``turn``, that turn is over.
_TURN_ENDING = ("card_played", "chanter_vote", "chanter_discarded", "turn", "deal_scored",
                "match_over")


def _stale(client: NetClient, index: int, table: str) -> bool:
    """Whether the turn announced at ``events[index]`` is already over (a later event of
    the same table ended it: the seat played, a timer or bot played for it...)."""
    return any(e.get("event") and e["table"] == table and e["event"]["type"] in _TURN_ENDING
               for e in client.events[index + 1:])


async def autoplay(client: NetClient, table: str, seat: int, *, pick: str = "last",
                   timeout: float = 60, after_seq: int | None = None,
                   max_plays: int | None = None, start: int = 0) -> dict[str, Any] | None:
    """Play every turn of ``seat`` until the match ends; return the match_over payload.

    It walks the event stream in order and acts on each ``turn`` of its seat that is still
    current (no later event ended it) and that this client has not acted on yet
    (``client.acted_turns``, kept across reconnections), as a real client acting on its
    model would: the server announces each turn exactly once. Turns numbered ``after_seq``
    or lower are only read. With ``max_plays`` it returns None once it has played that
    many cards. ``start`` is the index in ``client.events`` to begin with (a rematch: the
    events after the first match's end).
    """
    hand = Hand()
    index = start
    plays = 0
    async with asyncio.timeout(timeout):
        while True:
            await client.wait_until(lambda i=index: len(client.events) > i)
            entry = client.events[index]
            index += 1
            event = entry.get("event")
            if event is None or entry["table"] != table:
                continue
            hand.apply(event, seat)
            kind = event["type"]
            if kind == "match_over":
                return event
            if (kind != "turn" or event["seat"] != seat
                    or (table, entry["seq"]) in client.acted_turns
                    or (after_seq is not None and entry["seq"] <= after_seq)
                    or _stale(client, index - 1, table)):
                continue
            client.acted_turns.add((table, entry["seq"]))
            phase = event.get("phase") or "play"
            if phase == "chanter_discard":
                await _discard(client, table, hand)
            elif phase == "chanter_vote":
                await client.call("chanter_vote", table=table, vote=True)
            else:
                card = hand.cards[-1] if pick == "last" else hand.cards[0]
                await client.call("play", table=table, card=card)
                plays += 1
                if max_plays is not None and plays >= max_plays:
                    return None


async def _discard(client: NetClient, table: str, hand: Hand) -> None:
    cards = hand.cards[-6:]
    await client.call("discard", table=table, cards=cards)
    for c in cards:
        hand.cards.remove(c)
