"""The browser shows a client that said it is a program as a bot (issue 33; protocol 1.5).

The web client's one line for ``SeatInfo.bot`` (server/web/static/js/table.mjs, seatBox):
a real Chromium watching a table whose seat 0 is held by a network bot (``hello {bot:
true}``) shows that seat with the same BOT mark as the server's own bots, and a person's
seat without it.
"""

from __future__ import annotations

from typing import Any

from tests.server.netclient import NetClient

from .test_browser import WAIT_MS, Player


async def test_a_bot_clients_seat_carries_the_bot_mark(browser: Any, web: Any) -> None:
    base = f"http://127.0.0.1:{web.port}"
    robo = await NetClient.open(f"ws://127.0.0.1:{web.port}", "Robo", bot=True)
    ana = await NetClient.open(f"ws://127.0.0.1:{web.port}", "Ana")
    try:
        table = (await robo.call("create_table", options={"deals": 1}))["table"]
        await ana.call("join", table=table, seat=1)
        visitor = await Player.open(browser, base, "Vic")
        await visitor.goto(f"{base}/t/{table}")
        await visitor.page.wait_for_selector('.seat[data-seat="1"]', timeout=WAIT_MS)
        assert await visitor.page.locator('.seat[data-seat="0"] .bot-mark').count() == 1
        assert "Robo" in await visitor.text('.seat[data-seat="0"]')
        assert await visitor.page.locator('.seat[data-seat="1"] .bot-mark').count() == 0
        assert visitor.csp_or_script_errors() == []
    finally:
        await robo.close()
        await ana.close()
