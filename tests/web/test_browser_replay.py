"""Issue 28, Build 1 and 2 in a real browser (Chromium, headless, against ``aluette-server``
as a real process): a finished match's replay at ``/r/<table>/<match>`` steps trick by
trick with every hand face up, by key and by tap, plays by itself, asks the expert's review
of a seat and shows its progress and verdict; a private table's replay is refused to a
stranger."""

from __future__ import annotations

from typing import Any

from tests.server.netclient import NetClient
from tests.server.players import autoplay

from .test_browser import WAIT_MS, Player

OPTIONS = {"deals": 1, "bot_delay_ms": 0, "first_dealer": 3, "signals": "off"}


async def played_match(port: int, **over: Any) -> tuple[str, dict[str, Any]]:
    """A one-deal match a protocol client played to its end with three bots."""
    ana = await NetClient.open(f"ws://127.0.0.1:{port}", "Ana")
    try:
        created = await ana.call("create_table", options=OPTIONS, **over)
        await ana.call("start", table=created["table"])
        over_event = await autoplay(ana, created["table"], 0)
    finally:
        await ana.close()
    assert over_event is not None
    return created["table"], over_event["record"]


async def step_text(p: Player) -> str:
    return await p.text(".replay-meta")


async def test_a_replay_steps_by_key_and_tap_and_shows_the_review(browser, server_proc):
    await server_proc()
    base = f"http://127.0.0.1:{server_proc.port}"
    table, record = await played_match(server_proc.port)
    bo = await Player.open(browser, base, "Bo")
    await bo.page.goto(f"{base}/r/{table}/1")
    await bo.online()
    page = bo.page
    await page.wait_for_selector(".replay-meta:has-text('step 1 of 10')", timeout=WAIT_MS)
    # Every hand face up: the 36 cards of the deal, on four panels.
    faces = await page.locator(".replay-hand [data-card]").evaluate_all(
        "nodes => nodes.map(n => n.dataset.card)")
    assert sorted(faces) == sorted(c for h in record["deals"][0]["hands"] for c in h)
    await page.keyboard.press("ArrowRight")
    await page.wait_for_selector(".replay-meta:has-text('trick 1 of 9')", timeout=WAIT_MS)
    first = record["deals"][0]["tricks"][0]
    shown = await page.locator(".replay-played [data-card]").evaluate_all(
        "nodes => nodes.map(n => n.dataset.card)")
    assert shown == first
    assert await page.locator(".replay-hand [data-card]").count() == 32
    await page.click('[data-replay="back"]')                       # a tap
    await page.wait_for_selector(".replay-meta:has-text('step 1 of 10')", timeout=WAIT_MS)
    await page.keyboard.press("End")
    await page.wait_for_selector(".replay-meta:has-text('trick 9 of 9')", timeout=WAIT_MS)
    assert "scores" in await bo.text(".replay-notes")             # the deal explained
    await page.keyboard.press("Home")
    await page.keyboard.press(" ")                                 # autoplay
    await page.wait_for_selector(".replay-meta:has-text('step 2 of 10')", timeout=WAIT_MS)
    await page.keyboard.press(" ")
    # The expert's review of seat 0 (Ana): asked, followed, shown.
    await page.click('[data-replay="review-0"]')
    await page.wait_for_selector(".replay-review p:has-text(\"The expert's review of Ana\")",
                                 timeout=60_000)
    assert "decisions as the expert would have made them" in await bo.text(".replay-review")
    assert bo.csp_or_script_errors() == [], bo.errors


async def test_a_private_tables_replay_is_refused_to_a_stranger(browser, server_proc):
    await server_proc()
    base = f"http://127.0.0.1:{server_proc.port}"
    table, _ = await played_match(server_proc.port, private=True)
    eve = await Player.open(browser, base, "Eve")
    await eve.page.goto(f"{base}/r/{table}")
    await eve.online()
    await eve.page.wait_for_selector("#replay-view .notice", timeout=WAIT_MS)
    text = await eve.text("#replay-view .notice")
    assert text == "There is no such table (it may have finished and been cleaned up)."
    assert await eve.page.locator(".replay-hand [data-card]").count() == 0
