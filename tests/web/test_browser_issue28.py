"""Issue 28 in the browser's table screen (Chromium, headless, against ``aluette-server`` as
a real process):

- Build 5 / issue 31 item 6: the match's commitment is shown in full (all 64 digits) in a
  box, and its button copies exactly that to the clipboard, never a prefix;
- Build 1: the end screen links to the match's replay (``/r/<table>/<match>``), which opens,
  and so does the finished table's entry in the lobby (the player's history);
- Build 3: at a table whose options allow hints, the seated player's turn offers "What would
  the expert play?", and its answer names a card of their hand (protocol 1.5 ``hint``); the
  table is marked; a table without hints offers no such button.
"""

from __future__ import annotations

import re

from tests.server.netclient import NetClient
from tests.server.players import autoplay

from .test_browser import WAIT_MS, Player, next_turn, sit, take_turn
from .test_browser_a11y import violations
from .test_browser_chat import host_fast_table

HEX64 = re.compile(r"[0-9a-f]{64}\Z")


async def test_the_full_commitment_is_copied_and_the_end_screen_opens_the_replay(
        browser, server_proc):
    await server_proc()
    base = f"http://127.0.0.1:{server_proc.port}"
    table, host = await host_fast_table(server_proc.port)
    ana = await Player.open(browser, base, "Ana",
                            permissions=["clipboard-read", "clipboard-write"])
    await sit(ana, f"{base}/t/{table}", 1)
    await host.call("leave", table=table)
    await host.close()
    page = ana.page
    await page.click('[data-key="start"]', timeout=WAIT_MS)
    await page.wait_for_selector("#fair-note[data-of='deals_committed']", timeout=WAIT_MS)
    await page.click('[data-key="copy-commitment"]', timeout=WAIT_MS)
    boxed = await page.input_value("#commitment-box")
    copied = await page.evaluate("() => navigator.clipboard.readText()")
    assert HEX64.match(boxed), boxed
    assert copied == boxed
    # The button speaks the language the player switches to.
    await page.select_option("#lang-select", "fr")
    await page.wait_for_selector('[data-key="copy-commitment"]:has-text("Copier l\'engagement")',
                                 timeout=WAIT_MS)
    await page.select_option("#lang-select", "en")
    await page.wait_for_selector('[data-key="copy-commitment"]:has-text("Copy the commitment")',
                                 timeout=WAIT_MS)
    # No hints at this table: no button on our turn.
    plays: list[tuple[str, str]] = []
    first = True
    while (turn := await next_turn([ana])) is not None:
        if first:
            assert await page.locator('[data-key="hint"]').count() == 0
            first = False
        await take_turn(turn, plays)
    reader = await NetClient.open(f"ws://127.0.0.1:{server_proc.port}", "Reader")
    try:
        record = (await reader.call("get_record", table=table))["record"]
    finally:
        await reader.close()
    assert copied == record["fair"]["commitment"]             # all 64 digits, the real one

    link = page.locator('#match-result [data-key="replay"]')
    assert await link.get_attribute("href") == f"/r/{table}/1"
    await link.click()
    await page.wait_for_selector(".replay-meta:has-text('step 1 of 10')", timeout=WAIT_MS)
    assert page.url == f"{base}/r/{table}/1"
    # The lobby's history: the finished table she played at links to its replay too.
    await page.click("#home-link")
    entry = page.locator(f'[data-key="replay-{table}"]')
    await entry.wait_for(timeout=WAIT_MS)
    assert await entry.get_attribute("href") == f"/r/{table}/1"
    assert ana.csp_or_script_errors() == [], ana.errors


async def test_a_table_with_hints_offers_the_experts_choice(browser, server_proc):
    await server_proc()
    base = f"http://127.0.0.1:{server_proc.port}"
    host = await NetClient.open(f"ws://127.0.0.1:{server_proc.port}", "Host")
    table = (await host.call("create_table", name="Lessons", options={
        "deals": 1, "bot_delay_ms": 0, "first_dealer": 0, "signals": "off",
        "bot_level": "random", "hints": True}))["table"]
    ana = await Player.open(browser, base, "Ana", bypass_csp=True)      # axe, below
    await sit(ana, f"{base}/t/{table}", 1)
    await host.call("leave", table=table)
    await host.close()
    page = ana.page
    assert "hints allowed" in await ana.text("#table-meta")
    await page.click('[data-key="start"]', timeout=WAIT_MS)
    assert await next_turn([ana]) is ana
    hand = (await ana.state())["hand"]
    await page.click('[data-key="hint"]', timeout=WAIT_MS)
    await page.wait_for_selector(".hint-text:has-text('The expert would play')",
                                 timeout=30_000)
    said = await ana.text(".hint-text")
    codes = re.findall(r"\(([1-9VCR][ocbe])\)", said)
    assert codes and codes[0] in hand, (said, hand)
    assert "Expected points for your team" in said
    assert await violations(ana, "a table with a hint and the full commitment") == []
    # The hint is for this turn only: once the card is played it is gone.
    await take_turn(ana, [])
    await page.wait_for_function(
        "() => !document.querySelector('.hint-text')?.textContent", timeout=WAIT_MS)
    assert ana.csp_or_script_errors() == [], ana.errors


WATCH_REVIEW = """() => {
  window.__review = {texts: [], progress: false};
  const box = document.querySelector('.replay-review') ?? document.body;
  new MutationObserver(() => {
    const p = document.querySelector('.replay-review p');
    if (p) window.__review.texts.push(p.textContent);
    if (document.querySelector('progress.replay-progress')) window.__review.progress = true;
  }).observe(document.getElementById('replay-view'), {subtree: true, childList: true,
                                                     characterData: true});
}"""


async def test_the_replay_shows_the_reviews_progress_and_verdicts_in_french_too(
        browser, server_proc):
    """Build 2 in the replay: while the review waits behind two others its progress shows
    (a bar, and how many are ahead); once done, the step of each decision says what the
    seat did and what the expert preferred, with lichess's marks on costly ones, and each
    deal's summary; a French page says it in French."""
    from .test_browser_replay import played_match

    await server_proc()
    port = server_proc.port
    base = f"http://127.0.0.1:{port}"
    table, _ = await played_match(port)
    # Two reviews ahead of the page's: it is queued, then running, before it is done.
    other = await NetClient.open(f"ws://127.0.0.1:{port}", "Other")
    try:
        for seat in (1, 2):
            first = await other.call("review", table=table, seat=seat)
            assert first["status"] in ("queued", "running"), first
        bo = await Player.open(browser, base, "Bo", bypass_csp=True)     # axe, below
        page = bo.page
        await page.goto(f"{base}/r/{table}/1")
        await bo.online()
        await page.wait_for_selector(".replay-meta:has-text('step 1 of 10')", timeout=WAIT_MS)
        await page.evaluate(WATCH_REVIEW)
        await page.click('[data-replay="review-0"]')
        await page.wait_for_selector(".replay-review p:has-text(\"The expert's review of Ana\")",
                                     timeout=90_000)
        seen = await page.evaluate("() => window.__review")
        assert seen["progress"], seen
        assert any(t.startswith(("Waiting for the expert", "The expert is looking"))
                   for t in seen["texts"]), seen
        review = (await other.call("review", table=table, seat=0))["review"]
    finally:
        await other.close()
    deal = review["deals"][0]
    assert (f"Deal 1: {deal['matched']} of {deal['decisions']} decisions as the expert's"
            in await bo.text(".replay-deals"))
    cards = [d for d in review["decisions"] if d["kind"] == "card"]
    assert len(cards) == 9
    for d in cards[:3]:                      # trick by trick: the seat's decision judged
        await page.keyboard.press("ArrowRight")
        await page.wait_for_selector(f".replay-meta:has-text('trick {d['trick']} of 9')",
                                     timeout=WAIT_MS)
        said = await bo.text(".replay-verdicts")
        assert "Ana played" in said and f"({d['actual']})" in said, (said, d)
        if d["lost"] >= 0.1 and not d["matched"]:
            assert "the expert preferred" in said and f"({d['preferred']})" in said, said
            assert said.lstrip().startswith(("?!", "?", "??")), said
        else:
            assert "as good as the expert's choice" in said, (said, d)
    assert await violations(bo, "the replay with its review") == []
    assert bo.csp_or_script_errors() == [], bo.errors

    # The same replay in French (the page follows the browser's language).
    fr = await Player.open(browser, base, "Chloé", locale="fr-FR")
    await fr.page.goto(f"{base}/r/{table}/1")
    await fr.online()
    await fr.page.wait_for_selector(".replay-meta:has-text('Donne 1 sur 1')", timeout=WAIT_MS)
    await fr.page.keyboard.press("ArrowRight")
    await fr.page.wait_for_selector(".replay-meta:has-text('levée 1 sur 9')", timeout=WAIT_MS)
    assert "Levée 1, entamée par Ana" in await fr.text(".replay-trick")
    assert await fr.page.get_attribute('[data-replay="next"]', "title") == "Levée suivante"
    assert fr.csp_or_script_errors() == [], fr.errors


async def test_a_private_tables_replay_opens_with_its_code_and_is_shared(browser, server_proc):
    """Build 1: a private table's replay is for its players "or holders of its code": the
    link with ``#code=`` opens it, and its review, for a stranger; the replay's Share button
    copies that link; without the code the stranger is refused."""
    await server_proc()
    port = server_proc.port
    base = f"http://127.0.0.1:{port}"
    ana = await NetClient.open(f"ws://127.0.0.1:{port}", "Ana")
    try:
        created = await ana.call("create_table", private=True, options={
            "deals": 1, "bot_delay_ms": 0, "first_dealer": 3, "signals": "off"})
        table, code = created["table"], created["code"]
        await ana.call("start", table=table)
        assert await autoplay(ana, table, 0) is not None
    finally:
        await ana.close()
    eve = await Player.open(browser, base, "Eve",
                            permissions=["clipboard-read", "clipboard-write"])
    page = eve.page
    await page.goto(f"{base}/r/{table}/1")
    await eve.online()
    await page.wait_for_selector("#replay-view .notice", timeout=WAIT_MS)
    assert await page.locator(".replay-meta").count() == 0
    await page.goto(f"{base}/r/{table}/1#code={code}")
    await eve.online()
    await page.wait_for_selector(".replay-meta:has-text('step 1 of 10')", timeout=WAIT_MS)
    await page.click('[data-replay="share"]')
    shared = await page.evaluate("() => navigator.clipboard.readText()")
    assert shared == f"{base}/r/{table}/1#code={code}"
    await page.click('[data-replay="review-0"]')
    await page.wait_for_selector(
        ".replay-review p:is(:has-text('Waiting for the expert'), :has-text('The expert is "
        "looking'), :has-text(\"The expert's review of Ana\"))", timeout=WAIT_MS)
    assert "no such table" not in (await eve.text(".replay-review")).lower()
    assert eve.csp_or_script_errors() == [], eve.errors


async def test_a_downloaded_record_file_opens_in_the_replay(browser, server_proc):
    """Build 1: "records from history ... and downloaded files both open": ``/r/`` replays a
    record file chosen on this computer (read in the page, sent nowhere); a file that is not
    a record is refused in words."""
    import json

    from .conftest import http_get
    from .test_browser_replay import played_match

    await server_proc()
    port = server_proc.port
    base = f"http://127.0.0.1:{port}"
    status, _, body = await http_get(port, "/r/")
    assert status == 200 and b"main.mjs" in body
    _, record = await played_match(port)
    bo = await Player.open(browser, base, "Bo")
    page = bo.page
    await page.goto(f"{base}/r/")
    await bo.online()
    picker = page.locator('[data-key="record-file"]')
    await picker.set_input_files(files=[{"name": "nonsense.json", "mimeType": "application/json",
                                         "buffer": b'{"deals": 3}'}])
    await page.wait_for_selector("#replay-view .notice:has-text('not a match record')",
                                 timeout=WAIT_MS)
    await page.locator('[data-key="record-file"]').set_input_files(files=[{
        "name": "aluette-match.json", "mimeType": "application/json",
        "buffer": json.dumps(record).encode()}])
    await page.wait_for_selector(".replay-meta:has-text('step 1 of 10')", timeout=WAIT_MS)
    await page.keyboard.press("ArrowRight")
    await page.wait_for_selector(".replay-meta:has-text('trick 1 of 9')", timeout=WAIT_MS)
    shown = await page.locator(".replay-played [data-card]").evaluate_all(
        "nodes => nodes.map(n => n.dataset.card)")
    assert shown == record["deals"][0]["tricks"][0]
    assert await page.locator('[data-replay="share"]').count() == 0
    assert bo.csp_or_script_errors() == [], bo.errors
