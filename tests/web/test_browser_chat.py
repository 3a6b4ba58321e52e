"""The web client's chat and rematch (protocol 1.3) in a real browser: Debian's Chromium,
headless, driven by Playwright against ``aluette-server`` running as a real process.

- chat: two seated pages and a spectator page. A seat's line reaches all three; a
  spectator's reaches the spectators only (never a seat: docs/PROTOCOL.md, Chat); a
  hostile text is shown as text; a refused message (too long, ``rate_limited``) is
  explained and stays in the box; a muted sender's later lines never arrive.
- rematch: two seated pages (and two bots that never pause) play a one-deal match to its
  end; each presses "Play again"; match 2 starts on every page, the spectator's too, and
  the spectator never gets the button.

Nothing here sleeps: "never arrives" is proven by ordering. Each viewer's events come in
the table's order, so once a line sent *after* the one that must not arrive is on a page,
the earlier one would have been there first.
"""

from __future__ import annotations

from tests.server.netclient import NetClient

from .test_browser import WAIT_MS, Player, create_table, next_turn, sit, take_turn

EVIL = "<img src=x onerror=__pwned=1>"


def chat_line(text: str) -> str:
    """The selector of a chat line whose text (the message itself) is exactly ``text``."""
    return f'#chat-log li.chat-line:has(.text:text-is("{text}"))'


async def say(p: Player, text: str) -> None:
    await p.page.fill("#chat-input", text)
    await p.page.press("#chat-input", "Enter")


async def lines(p: Player) -> list[str]:
    return list(await p.page.locator("#chat-log .text").all_inner_texts())


async def test_chat_seats_reach_everyone_spectators_only_spectators(browser, server_proc):
    # A burst of 5 and (for this test) next to no refill, so the refusal comes at a known
    # message however slow the machine: at the default one token per 2 s, a slow run
    # refilled faster than it sent and the server never refused (seen in CI).
    await server_proc("--chat-burst", "5", "--chat-per-second", "0.0001")
    base = f"http://127.0.0.1:{server_proc.port}"
    ana = await Player.open(browser, base, "Ana")
    bo = await Player.open(browser, base, "Bo")
    sam = await Player.open(browser, base, "Sam")
    url = await create_table(ana, base)
    await sit(bo, url, 1)
    await sam.goto(url)
    await sam.page.wait_for_selector("text=you are watching", timeout=WAIT_MS)
    assert "spectators only" in await sam.text("#chat-hint")

    # A seat's line reaches everyone at the table, the spectator too.
    await say(ana, "hello from Ana")
    for p in (ana, bo, sam):
        await p.page.wait_for_selector(chat_line("hello from Ana"), timeout=WAIT_MS)
    assert await ana.page.input_value("#chat-input") == ""
    mine = ana.page.locator(chat_line("hello from Ana"))
    assert await mine.locator(".who").inner_text() == "You"
    assert await bo.page.locator(chat_line("hello from Ana") + " .who").inner_text() == "Ana"

    # A spectator's line reaches the spectators only; the seats never get it.
    await say(sam, "psst from Sam")
    await sam.page.wait_for_selector(chat_line("psst from Sam"), timeout=WAIT_MS)
    own = await sam.page.locator(chat_line("psst from Sam")).inner_text()
    assert own.startswith("You") and "spectators only" in own
    await say(ana, "second from Ana")
    for p in (ana, bo, sam):
        await p.page.wait_for_selector(chat_line("second from Ana"), timeout=WAIT_MS)
    assert await lines(sam) == ["hello from Ana", "psst from Sam", "second from Ana"]
    for p in (ana, bo):
        assert await lines(p) == ["hello from Ana", "second from Ana"], p.name

    # A hostile text is text.
    await say(bo, EVIL)
    for p in (ana, bo, sam):
        await p.page.wait_for_selector(chat_line(EVIL), timeout=WAIT_MS)
        assert await p.page.locator("#chat-log img").count() == 0
        assert await p.page.evaluate("() => window.__pwned") is None

    # Bo mutes Ana: Ana's next line reaches Sam, not Bo (Bo's own later line proves it).
    await bo.page.click(f'{chat_line("second from Ana")} button:text-is("Mute")')
    await bo.page.wait_for_selector(f'{chat_line("second from Ana")} button:text-is("Unmute")',
                                    timeout=WAIT_MS)
    await say(ana, "Bo cannot read this")
    for p in (ana, sam):
        await p.page.wait_for_selector(chat_line("Bo cannot read this"), timeout=WAIT_MS)
    await say(bo, "after the mute")
    for p in (ana, bo, sam):
        await p.page.wait_for_selector(chat_line("after the mute"), timeout=WAIT_MS)
    assert "Bo cannot read this" not in await lines(bo)

    # Refusals are explained, and the typed text stays in the box.
    await say(bo, "x" * 201)
    await bo.page.wait_for_selector("#chat-notice:has-text('at most 200 characters')",
                                    timeout=WAIT_MS)
    assert await bo.page.input_value("#chat-input") == "x" * 201
    # The chat's own limit: Bo has sent 2 of the burst of 5, so 3 more go through and the
    # fourth is refused, its text kept in the box.
    for i in range(3):
        await say(bo, f"quick {i}")
        await bo.page.wait_for_selector(chat_line(f"quick {i}"), timeout=WAIT_MS)
    await say(bo, "quick 3")
    await bo.page.wait_for_selector("#chat-notice:has-text('Too many messages')",
                                    timeout=WAIT_MS)
    assert await bo.page.input_value("#chat-input") == "quick 3"
    assert "quick 3" not in await lines(bo)

    # A reload keeps the conversation (the head's chat_history, protocol 1.4): Sam still
    # reads every line, his own still marked his; Bo, a seat, still none of the spectators'
    # lines, and none of Ana's now that he mutes her (her earlier ones too).
    for p, gone in ((sam, set()), (bo, {"hello from Ana", "second from Ana"})):
        before = await lines(p)
        await p.page.reload()
        await p.page.wait_for_selector(chat_line(before[-1]), timeout=WAIT_MS)
        assert await lines(p) == [t for t in before if t not in gone], p.name
    assert "psst from Sam" in await lines(sam)
    assert (await sam.page.locator(chat_line("psst from Sam")).inner_text()).startswith("You")
    assert "psst from Sam" not in await lines(bo)
    assert "Bo cannot read this" not in await lines(bo)
    # Ana has no line left on Bo's page to unmute her by: the page says whom he mutes
    # (the history names them) and unmutes them in one click.
    note = bo.page.locator("#chat-log .chat-note")
    assert "You mute someone at this table" in await note.inner_text()
    await note.locator("button").click()
    await bo.page.wait_for_selector("#chat-log .chat-note", state="detached", timeout=WAIT_MS)
    await say(ana, "welcome back Bo")
    await bo.page.wait_for_selector(chat_line("welcome back Bo"), timeout=WAIT_MS)
    for p in (ana, bo, sam):
        assert p.csp_or_script_errors() == [], (p.name, p.errors)


async def host_fast_table(port: int) -> tuple[str, NetClient]:
    """A table whose bots never pause (bot_delay_ms 0: the lobby form has no such field),
    made by a protocol client that leaves at once: seats 0-3 are free for the pages, and
    with its creator gone any seated player may start it."""
    host = await NetClient.open(f"ws://127.0.0.1:{port}", "Host")
    table = (await host.call("create_table", name="Rematch", options={
        "deals": 1, "bot_delay_ms": 0, "first_dealer": 0, "signals": "off",
        "bot_level": "random"}))["table"]
    return table, host


async def test_play_again_starts_match_two_on_every_page(browser, server_proc):
    await server_proc()
    base = f"http://127.0.0.1:{server_proc.port}"
    table, host = await host_fast_table(server_proc.port)
    url = f"{base}/t/{table}"
    ana = await Player.open(browser, base, "Ana")
    bo = await Player.open(browser, base, "Bo")
    sam = await Player.open(browser, base, "Sam")
    await sit(ana, url, 1)
    await sit(bo, url, 2)
    await host.call("leave", table=table)
    await host.close()
    await sam.goto(url)
    await sam.page.wait_for_selector("text=you are watching", timeout=WAIT_MS)
    await ana.page.click('[data-key="start"]', timeout=WAIT_MS)

    humans = [ana, bo]
    plays: list[tuple[str, str]] = []
    while (turn := await next_turn(humans)) is not None:
        await take_turn(turn, plays)
    assert len(plays) == 18
    await sam.page.wait_for_selector("#match-result:not([hidden])", timeout=WAIT_MS)
    for p in (ana, bo, sam):
        await p.page.wait_for_selector("#match-result .rematch", timeout=WAIT_MS)
        assert "match 2" not in await p.text("#table-meta")
    assert await sam.page.locator('[data-key="rematch"]').count() == 0

    # Ana proposes: Bo is asked, Ana waits for Bo, Sam sees it without a button.
    await ana.page.click('[data-key="rematch"]')
    await ana.page.wait_for_selector(
        "#match-result .rematch:has-text('You asked for a rematch. Waiting for Bo.')",
        timeout=WAIT_MS)
    assert await ana.page.locator('[data-key="rematch"]').count() == 0
    await bo.page.wait_for_selector("#match-result .rematch:has-text('Ana wants a rematch')",
                                    timeout=WAIT_MS)
    await sam.page.wait_for_selector("#match-result .rematch:has-text('Ana wants a rematch')",
                                     timeout=WAIT_MS)
    assert await sam.page.locator('[data-key="rematch"]').count() == 0
    result_before = await ana.text("#match-result .result")
    assert result_before

    # Bo accepts: match 2 starts on every page, reset as at a first start.
    await bo.page.click('[data-key="rematch"]:has-text("accept")')
    for p in (ana, bo, sam):
        await p.page.wait_for_selector("#match-result", state="hidden", timeout=WAIT_MS)
        await p.page.wait_for_function(
            "() => /match 2/.test(document.getElementById('table-meta').textContent) && "
            "/deal 1 of 1/.test(document.getElementById('table-meta').textContent)",
            timeout=WAIT_MS)
        assert await p.page.locator("#deal-result").is_hidden()
        assert await p.page.locator("#score .points").all_inner_texts() == ["0", "0"]
    # The seats' hands are the new deal's: nine cards each, not yet played (Ana deals
    # last: seat 0, a bot, dealt match 1; R6 draws again, so wait for whoever's turn).
    for p in humans:
        await p.page.wait_for_function(
            "() => document.querySelectorAll('#hand [data-card]').length >= 8",
            timeout=WAIT_MS)
    turn = await next_turn(humans)
    assert turn is not None
    await take_turn(turn, plays)
    assert await sam.page.locator("#hand-section").is_hidden()
    for p in (ana, bo, sam):
        assert p.csp_or_script_errors() == [], (p.name, p.errors)
