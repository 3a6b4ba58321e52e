"""Bots are honest about being bots (issue 33, Build item 2; protocol 1.5).

A client may say in its ``hello`` that it is a program (``bot: true``). Every seat it takes
is then shown as a bot to everyone, like the server's own bots: ``SeatInfo.bot`` in every
``table_changed`` and lobby page, and the match record's ``bots``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from .netclient import NetClient
from .players import autoplay


def seat_flags(info: dict[str, Any]) -> list[tuple[str, bool]]:
    return [(s["kind"], s["bot"]) for s in info["seats"]]


async def test_a_bot_clients_seat_is_shown_as_a_bot_to_everyone(connect: Any) -> None:
    robo = await connect("Robo", bot=True)
    table = (await robo.call("create_table", options={"deals": 1}))["table"]
    ana = await connect("Ana")
    await ana.call("join", table=table, seat=1)
    await robo.call("add_bot", table=table, seat=2, level="random")
    sam = await connect("Sam")
    await sam.call("spectate", table=table)
    expected = [("human", True), ("human", False), ("bot", True), ("empty", False)]
    head = await sam.wait_event(lambda e: e["type"] == "table_changed")
    assert seat_flags(head["event"]["table"]) == expected
    for who in (robo, ana):                       # the seats' own table_changed say it too
        await who.wait_until(lambda w=who: any(
            e["event"]["type"] == "table_changed"
            and seat_flags(e["event"]["table"]) == expected for e in w.events))
    [listed] = (await sam.call("list_tables"))["tables"]
    assert seat_flags(listed) == expected


async def test_a_bot_stays_a_bot_when_it_reconnects_without_saying_so(connect: Any,
                                                                      url: str) -> None:
    robo = await connect("Robo", bot=True)
    table = (await robo.call("create_table", options={"deals": 1}))["table"]
    await robo.close()
    back = await NetClient.open(url, "Robo", token=robo.welcome["session"], ids=robo.ids)
    try:
        [listed] = (await back.call("list_tables"))["tables"]
        assert listed["table"] == table and listed["seats"][0]["bot"] is True
    finally:
        await back.close()


async def test_the_record_says_which_seats_were_programs(connect: Any) -> None:
    robo = await connect("Robo", bot=True)
    ana = await connect("Ana")
    table = (await robo.call("create_table", options={"deals": 1, "bot_delay_ms": 0,
                                                      "first_dealer": 3}))["table"]
    await ana.call("join", table=table, seat=1)
    await robo.call("start", table=table)              # seats 2 and 3: the server's bots
    over = await asyncio.gather(autoplay(robo, table, 0), autoplay(ana, table, 1))
    assert [o["record"]["bots"] for o in over if o] == [[True, False, True, True]] * 2
    stored = await ana.call("get_record", table=table)
    assert stored["record"]["bots"] == [True, False, True, True]
