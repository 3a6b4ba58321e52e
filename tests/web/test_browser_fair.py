"""R8a, provably fair deals, in the browser client (protocol 1.3), in a real browser:
Debian's Chromium, headless, driven by Playwright against ``aluette-server`` as a real
process. A page sits at a one-deal table of bots, starts it and plays it to its end:

- the ``join`` and ``start`` frames the page sent carry a fresh contribution (16 random
  bytes in hex), and the one that counted, the start's, is the seat's contribution in the
  revealed record (``get_record``, through a protocol client);
- at ``deals_committed`` the page says its contribution is in, and at ``match_over`` that
  the revealed seed material checks out against the commitment the match started with
  (all 64 digits, shown in full), and that the match's deal was replayed from the seed
  (the browser's own SHA-256 streams of scheme aluette-fair/2);
- "Play again" sends a fresh contribution with ``rematch``, and match 2 checks it too.

The checks' failures (a tampered seed, secret, salt, a card not dealt to its seat...) are
node tests of the same module: tests/records/js/fair.test.mjs, run by
tests/records/test_fair_js.py.
"""

from __future__ import annotations

import re
from typing import Any

import msgpack

from tests.server.netclient import NetClient

from .test_browser import WAIT_MS, Player, next_turn, sit, take_turn
from .test_browser_chat import host_fast_table


def sent_frames(p: Player) -> list[dict[str, Any]]:
    """Every command frame the page sends from now on (msgpack, decoded)."""
    frames: list[dict[str, Any]] = []

    def on_socket(ws: Any) -> None:
        def on_frame(payload: Any) -> None:
            if isinstance(payload, (bytes, bytearray)):
                frames.append(msgpack.unpackb(payload, raw=False))
        ws.on("framesent", on_frame)

    p.page.on("websocket", on_socket)
    return frames


async def test_a_page_contributes_and_checks_the_revealed_seed(browser, server_proc):
    await server_proc()
    base = f"http://127.0.0.1:{server_proc.port}"
    table, host = await host_fast_table(server_proc.port)
    url = f"{base}/t/{table}"
    ana = await Player.open(browser, base, "Ana")
    frames = sent_frames(ana)
    await sit(ana, url, 1)
    await host.call("leave", table=table)
    await host.close()
    await ana.page.click('[data-key="start"]', timeout=WAIT_MS)
    await ana.page.wait_for_selector(
        "#fair-note[data-of='deals_committed'][data-ok='true']:has-text('your contribution "
        "is in')", timeout=WAIT_MS)

    plays: list[tuple[str, str]] = []
    while (turn := await next_turn([ana])) is not None:
        await take_turn(turn, plays)
    assert len(plays) == 9
    await ana.page.wait_for_selector("#fair-note[data-of='match_over']", timeout=WAIT_MS)
    note = ana.page.locator("#fair-note")
    assert await note.get_attribute("data-ok") == "true", await note.inner_text()
    assert (await note.inner_text()).startswith("Fair deals checked")
    assert "every deal was replayed from it (1 deal): the first dealer and all hands " \
        "follow." in await note.inner_text()

    joins = [f for f in frames if f.get("type") == "join" and f.get("table") == table]
    starts = [f for f in frames if f.get("type") == "start" and f.get("table") == table]
    assert len(joins) == 1 and len(starts) == 1, frames
    hex32 = re.compile(r"[0-9a-f]{32}\Z")
    assert hex32.match(joins[0].get("contribution") or ""), joins
    assert hex32.match(starts[0].get("contribution") or ""), starts
    assert joins[0]["contribution"] != starts[0]["contribution"]

    reader = await NetClient.open(f"ws://127.0.0.1:{server_proc.port}", "Reader")
    try:
        record = (await reader.call("get_record", table=table))["record"]
    finally:
        await reader.close()
    fair = record["fair"]
    assert fair["contributions"][1] == starts[0]["contribution"]
    assert fair["scheme"] == "aluette-fair/2"
    assert fair["commitment"] in await note.inner_text()            # all 64 digits

    # "Play again": the rematch carries a fresh contribution, and match 2 checks it is in.
    await ana.page.click('[data-key="rematch"]', timeout=WAIT_MS)
    await ana.page.wait_for_selector(
        "#fair-note[data-of='deals_committed'][data-ok='true']:has-text('match 2 is "
        "committed'):has-text('your contribution is in')", timeout=WAIT_MS)
    rematches = [f for f in frames if f.get("type") == "rematch"]
    assert len(rematches) == 1 and hex32.match(rematches[0].get("contribution") or "")
    assert rematches[0]["contribution"] not in fair["contributions"]
    assert ana.csp_or_script_errors() == [], ana.errors
