"""Accessibility checked by a tool (issue 31): axe-core, vendored for the tests only
(tests/web/vendor), run in Chromium on the lobby, a table mid-trick and the end of a match:
no serious or critical violation, in English and in French.

The page's CSP allows no inline script, so these pages bypass it to receive the checker;
nothing else about them changes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.server.netclient import NetClient

from .test_browser import WAIT_MS, Player

AXE = (Path(__file__).parent / "vendor" / "axe.min.js").read_text()
MY_TURN = "() => document.body.classList.contains('my-turn')"


async def violations(p: Player, where: str) -> list[dict[str, Any]]:
    """axe-core's serious and critical findings on the page as it is now."""
    if not await p.page.evaluate("() => typeof window.axe === 'object'"):
        await p.page.add_script_tag(content=AXE)
    found = await p.page.evaluate("""async () => {
      const r = await axe.run(document, { resultTypes: ['violations'] });
      return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => ({ id: v.id, impact: v.impact, help: v.help,
                       nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
    }""")
    print(f"\naxe-core on {where}: {len(found)} serious or critical violations")
    return list(found)


async def play_to_the_end(p: Player) -> None:
    page = p.page
    while not await page.locator("#match-result:not([hidden])").count():
        await page.wait_for_function(
            f"() => ({MY_TURN[6:]}) || !!document.querySelector('[data-key=deal-continue]') "
            "|| !document.getElementById('match-result').hidden", timeout=WAIT_MS)
        if await page.locator("[data-key=deal-continue]").count():
            await page.click("[data-key=deal-continue]")
            continue
        cards = page.locator("#hand button.card")
        if await page.evaluate(MY_TURN) and await cards.count():
            n = await cards.count()
            await cards.last.click()
            await page.wait_for_function(
                f"() => document.querySelectorAll('#hand button.card').length < {n}",
                timeout=WAIT_MS)


async def test_lobby_table_and_end_screen_pass_axe(browser, server_proc):
    await server_proc()
    port = server_proc.port
    base = f"http://127.0.0.1:{port}"
    host = await NetClient.open(f"ws://127.0.0.1:{port}", "Host")
    made = await host.call("create_table", name="Axe",
                           options={"deals": 1, "first_dealer": 0, "bot_delay_ms": 0})
    table = made["table"]
    for seat in (1, 2, 3):
        await host.call("add_bot", table=table, seat=seat, level="random")
    await host.call("leave", table=table)
    found = {}
    for lang in ("en-GB", "fr-FR"):
        ana = await Player.open(browser, base, "Ana", bypass_csp=True, locale=lang,
                                viewport={"width": 390, "height": 844})
        await ana.goto(base + "/")
        await ana.page.wait_for_selector(".table-entry", timeout=WAIT_MS)
        found[f"lobby {lang}"] = await violations(ana, f"the lobby ({lang})")
    # French from here on (the last page): a table mid-trick, then the end of the match.
    await ana.goto(f"{base}/t/{table}")
    await ana.page.click('[data-key="sit-0"]')
    await ana.page.click('[data-key="start"]')
    await ana.page.wait_for_function(MY_TURN, timeout=WAIT_MS)
    await ana.page.wait_for_selector("#trick [data-card]", timeout=WAIT_MS)
    found["table mid-trick"] = await violations(ana, "a table mid-trick")
    await play_to_the_end(ana)
    found["end of the match"] = await violations(ana, "the end of the match")
    await host.close()
    assert all(not v for v in found.values()), json.dumps(found, indent=1)
    assert ana.csp_or_script_errors() == [], ana.errors
