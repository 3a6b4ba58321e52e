"""Issue 28, Build 1: "for a private table, only its players, or holders of its code, may
open [its replay]". ``get_record`` and ``review`` take the table's join code (protocol 1.5):
with it a stranger reads the record of a private table's match (a shared replay link), and
asks for its review; without it, or with a wrong one, the table does not exist for them,
while the table is held and after it is cleaned up (the record outlives it)."""

from __future__ import annotations

from .players import autoplay

OPTIONS = {"deals": 1, "bot_delay_ms": 0, "first_dealer": 3}


async def test_a_private_tables_record_opens_with_its_code(connect, server) -> None:
    ana, eve = await connect("Ana"), await connect("Eve")
    created = await ana.call("create_table", private=True, options=OPTIONS)
    table, code = created["table"], created["code"]
    await ana.call("start", table=table)
    over = await autoplay(ana, table, 0)
    assert over is not None
    wrong = "A" * len(code) if code != "A" * len(code) else "B" * len(code)

    async def refused(**fields: object) -> None:
        for command in ("get_record", "review"):
            extra = {"seat": 0} if command == "review" else {}
            answer = await eve.request(command, table=table, **extra, **fields)
            assert answer["type"] == "error" and answer["code"] == "no_such_table", answer

    for held in (True, False):
        await refused()
        await refused(code=wrong)
        got = await eve.call("get_record", table=table, code=code)
        assert got["record"] == over["record"] and got["match"] == 1
        assert (await eve.call("get_record", table=table, match=1, code=code))["record"] \
            == over["record"]
        review = await eve.call("review", table=table, seat=0, code=code)
        assert review["status"] in ("queued", "running", "done"), review
        if held:
            await server.hub.lobby.sweep(now=10**12)       # the table is cleaned up
            assert server.hub.lobby.registry.get(table) is None
