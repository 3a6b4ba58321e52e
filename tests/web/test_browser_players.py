"""Play now and profiles in a real Chromium (issue 27): one person presses "Play now", sees
the wait (its time counting), may cancel it, and with a short configured wait is seated
at a casual table with three bots; a registered player's profile page, /u/<name>."""

from __future__ import annotations

import asyncio
from typing import Any

import msgpack

from tests.server.netclient import NetClient
from tests.server.players import autoplay, four_humans

from .test_browser import WAIT_MS, Player


async def test_play_now_waits_visibly_cancels_and_seats_one_person_with_three_bots(
        browser: Any, running_with: Any) -> None:
    async with running_with(queue_bots_after_s=3, queue_tick_s=0.1) as srv:
        base = f"http://127.0.0.1:{srv.port}"
        ana = await Player.open(browser, base, "Ana")
        await ana.goto(base + "/")
        page = ana.page
        # A wait, then a cancel: back in the lobby, nobody queued.
        await page.click("#play-now")
        await page.wait_for_selector("#play-now-wait:not([hidden])", timeout=WAIT_MS)
        assert "Looking for players" in await ana.text("#play-now-wait")
        await page.click("#play-now-cancel")
        await page.wait_for_selector("#play-now-wait", state="hidden", timeout=WAIT_MS)
        assert await srv.hub.queue.queue.waiting() == 0
        # Again, and wait: the time counts up (a reload keeps the wait), then the table
        # with three bots.
        await page.click("#play-now")
        await page.wait_for_selector("#play-now-wait:not([hidden])", timeout=WAIT_MS)
        await page.reload()
        await page.wait_for_function(
            "() => /0:0[1-9]/.test(document.getElementById('play-now-wait').textContent)",
            timeout=WAIT_MS)
        assert await page.locator("#play-now-cancel:not([hidden])").count() == 1
        await page.wait_for_url("**/t/*", timeout=WAIT_MS)
        await page.wait_for_selector('.seat[data-seat="3"] .bot-mark', timeout=WAIT_MS)
        for seat in (1, 2, 3):
            assert await page.locator(f'.seat[data-seat="{seat}"] .bot-mark').count() == 1
        assert "Ana" in await ana.text('.seat[data-seat="0"]')
        assert ana.csp_or_script_errors() == []


async def test_a_profile_page_shows_the_rating_and_a_rated_badge_in_the_lobby(
        browser: Any, web: Any) -> None:
    url = f"ws://127.0.0.1:{web.port}"
    names = ("Ana", "Bo", "Cy", "Di")
    clients = [await NetClient.open(url, n) for n in names]
    try:
        for c, n in zip(clients, names, strict=True):
            await web.hub.players.accounts.set(c.welcome["player_id"], n.casefold())
        table = await four_humans(clients, rated=True)
        waiting = (await clients[0].call("create_table", options={"rated": True}))["table"]
        await asyncio.gather(*(autoplay(c, table, i) for i, c in enumerate(clients)))
        async with asyncio.timeout(10):
            await web.hub.players.wait_kept(1)
        base = f"http://127.0.0.1:{web.port}"
        eve = await Player.open(browser, base, "Eve")
        await eve.goto(base + "/")
        await eve.page.wait_for_selector(f'li[data-table="{waiting}"] .badge.rated',
                                         timeout=WAIT_MS)
        await eve.goto(f"{base}/u/Ana")
        await eve.page.wait_for_selector("#profile-rating", timeout=WAIT_MS)
        prof = await clients[1].call("profile", name="Ana")
        assert str(prof["rating"]["display"]) in await eve.text("#profile-rating")
        assert "1 matches played" in await eve.text("#profile-counts")
        assert await eve.page.locator("#profile-recent li").count() == 1
        assert await eve.page.locator("#profile-ladder li").count() == 4
        assert eve.csp_or_script_errors() == []
    finally:
        for c in clients:
            await c.close()


async def test_a_matched_that_overtakes_the_queue_answer_leaves_no_wait(
        browser: Any, running_with: Any) -> None:
    """The fourth request makes the table at once; with two processes the matchmaker's
    ``matched`` can reach the page before the answer to its ``queue``. The page is then at
    its table, and the late answer must not start a wait (a ticker, a wait kept for a
    reload). The page's socket is routed so the answer comes just after ``matched``."""
    async with running_with(queue_tick_s=0.05) as srv:
        url = f"ws://127.0.0.1:{srv.port}"
        others = [await NetClient.open(url, n) for n in ("Bo", "Cy", "Di")]
        try:
            for c in others:
                await c.call("queue", rated=False, options={})
            base = f"http://127.0.0.1:{srv.port}"
            ana = await Player.open(browser, base, "Ana")
            asked: dict[str, Any] = {"id": None, "answer": None, "matched": False}

            async def route(page_ws: Any) -> None:
                server_ws = page_ws.connect_to_server()

                def up(frame: str | bytes) -> None:
                    if isinstance(frame, bytes):
                        cmd = msgpack.unpackb(frame)
                        if isinstance(cmd, dict) and cmd.get("type") == "queue":
                            asked["id"] = cmd.get("id")
                    server_ws.send(frame)

                def down(frame: str | bytes) -> None:
                    msg = msgpack.unpackb(frame) if isinstance(frame, bytes) else {}
                    if (msg.get("type") == "ok" and msg.get("id") == asked["id"]
                            and not asked["matched"]):
                        asked["answer"] = frame         # held until `matched` has passed
                        return
                    page_ws.send(frame)
                    if msg.get("type") == "matched":
                        asked["matched"] = True
                        if asked["answer"] is not None:
                            page_ws.send(asked["answer"])

                page_ws.on_message(up)
                server_ws.on_message(down)

            await ana.page.route_web_socket("**/*", route)
            await ana.goto(base + "/")
            await ana.page.click("#play-now")
            await ana.page.wait_for_url("**/t/*", timeout=WAIT_MS)
            # The table's own frames come after the held answer: once the seats show, the
            # answer has been handled.
            await ana.page.wait_for_selector('.seat.me[data-seat]', timeout=WAIT_MS)
            assert asked["matched"] and asked["answer"] is not None
            assert await ana.page.locator("#play-now-cancel").is_hidden()
            kept = await ana.page.evaluate("() => sessionStorage.getItem('aluette.queue.v1')")
            assert kept is None
            assert ana.csp_or_script_errors() == []
        finally:
            for c in others:
                await c.close()
