"""The web client in a real browser (issue 13, item 5): Debian's Chromium, headless, driven by
Playwright against ``aluette-server`` running as a real process on 127.0.0.1.

- four pages play a whole one-deal match against each other, with the chanter (R9), the
  partner draw (R7) and signals (R15), one of them by keyboard only; a fifth page watches
  and never has a hidden card in its DOM; one page reloads mid-match and takes its seat
  back; the card-click-to-other-pages latency is measured and printed (p50/p99);
- the server is SIGKILLed mid-match and restarted on the same Redis: every page heals;
- a hostile name is shown as text; the lobby's first paint is measured; a 360 px phone.

Pages are separate browser contexts (separate localStorage: separate sessions). Nothing
here sleeps to let something happen: every wait is on the page's state, with a timeout.
Screenshots go to the test's tmp dir, and to docs/screenshots/ with
ALUETTE_UPDATE_SCREENSHOTS=1.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import statistics
import time
from pathlib import Path
from typing import Any, ClassVar

import msgpack
import pytest
from websockets.asyncio.client import connect

import protocol
from server.game.record import verify_record

from .conftest import ROOT

SHOTS = ROOT / "docs" / "screenshots"
WAIT_MS = 20_000

#: Installed in every page: when each card first shows in the trick (for the latency), every
#: card element ever added (for the spectator's DOM), and when cards were clicked or keys
#: pressed (the start of a play, as the browser stamped the input event).
PROBE = """() => {
  if (window.__probe) return;
  const probe = window.__probe = { seen: {}, ever: [], clicks: {}, keys: [] };
  const now = () => performance.timeOrigin + performance.now();
  const scan = (node) => {
    if (node.nodeType !== 1) return;
    const els = node.matches('[data-card]') ? [node] : [];
    els.push(...node.querySelectorAll('[data-card]'));
    for (const el of els) {
      const t = now();
      const where = el.closest('#trick') ? 'trick' : el.closest('#hand') ? 'hand'
        : el.closest('#last-trick') ? 'last' : 'other';
      probe.ever.push([el.dataset.card, t, where]);
      if (where === 'trick' && !(el.dataset.card in probe.seen)) probe.seen[el.dataset.card] = t;
    }
  };
  new MutationObserver((records) => { for (const r of records) r.addedNodes.forEach(scan); })
    .observe(document.body, { childList: true, subtree: true });
  scan(document.body);
  document.addEventListener('click', (ev) => {
    const b = ev.target.closest && ev.target.closest('button.card');
    if (b) probe.clicks[b.dataset.card] = performance.timeOrigin + ev.timeStamp;
  }, true);
  document.addEventListener('keydown', (ev) => {
    probe.keys.push(performance.timeOrigin + ev.timeStamp);
  }, true);
}"""

STATE = """() => ({
  mine: document.body.classList.contains('my-turn'),
  over: !document.getElementById('match-result').hidden,
  voting: !!document.querySelector('[data-key="vote-yes"]'),
  discarding: !!document.querySelector('[data-key="discard"]'),
  hand: [...document.querySelectorAll('#hand [data-card]')].map((e) => e.dataset.card),
  seat: document.querySelector('.seat.me')?.dataset.seat ?? null,
  connection: document.body.dataset.connection,
})"""

#: True once the hand shown differs from `arg` (the hand before a play).
HAND_IS_NOT = """(before) => {
  const now = [...document.querySelectorAll('#hand [data-card]')].map((e) => e.dataset.card);
  return now.length !== before.length || now.some((card, i) => card !== before[i]);
}"""

TURN_OR_OVER = ("() => document.body.classList.contains('my-turn') || "
                "!document.getElementById('match-result').hidden")


class Player:
    """One browser page (its own context, so its own localStorage and session)."""

    #: The pages the running test opened: their script errors are added to a failed test's
    #: report (tests/web/conftest.py), so a failure seen only in CI says what the page saw.
    live: ClassVar[list[Player]] = []

    def __init__(self, name: str, page: Any, keyboard: bool = False) -> None:
        Player.live.append(self)
        self.name = name
        self.page = page
        self.keyboard = keyboard
        self.errors: list[str] = []
        #: What the probe had recorded before a reload (a reload starts a new one).
        self.earlier: dict[str, Any] = {"seen": {}, "ever": [], "clicks": {}, "keys": []}
        page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        page.on("console", lambda m: self.errors.append(f"console: {m.text}")
                if m.type == "error" else None)

    @classmethod
    async def open(cls, browser: Any, base: str, name: str, *, keyboard: bool = False,
                   **context: Any) -> Player:
        # The page's name as a returning visitor has it (what "Save" in the header stores).
        state = {"origins": [{"origin": base, "localStorage": [
            {"name": "aluette.session.v1", "value": json.dumps({"name": name})}]}]}
        ctx = await browser.new_context(storage_state=state, **context)
        return cls(name, await ctx.new_page(), keyboard)

    async def goto(self, url: str) -> None:
        await self.page.goto(url)
        await self.online()
        await self.page.evaluate(PROBE)

    async def online(self) -> None:
        await self.page.wait_for_function("() => document.body.dataset.connection === 'online'",
                                          timeout=WAIT_MS)

    async def state(self) -> dict[str, Any]:
        return dict(await self.page.evaluate(STATE))

    async def text(self, selector: str) -> str:
        return str(await self.page.locator(selector).inner_text())

    def csp_or_script_errors(self) -> list[str]:
        """Errors other than the failed reconnection attempts of a test that stops the
        server on purpose."""
        return [e for e in self.errors if "WebSocket connection to" not in e]


async def create_table(ana: Player, base: str, **form: Any) -> str:
    """Ana creates a table from the lobby form; returns the table's URL."""
    page = ana.page
    await ana.goto(base + "/")
    await page.fill("#create-form input[name=name]", form.get("name", "Friday game"))
    await page.fill("#create-form input[name=deals]", str(form.get("deals", 1)))
    for box in ("chanter", "partner_draw", "private"):
        if form.get(box):
            await page.check(f"#create-form input[name={box}]")
    await page.select_option("#create-form select[name=signals]", form.get("signals", "private"))
    await page.select_option("#create-form select[name=bot_level]", form.get("bots", "random"))
    await page.select_option("#create-form select[name=first_dealer]",
                             str(form.get("first_dealer", "random")))
    await page.click("#create-form button[type=submit]")
    await page.wait_for_selector("#table-view:not([hidden]) .seat.me", timeout=WAIT_MS)
    return str(page.url)


async def sit(player: Player, url: str, seat: int) -> None:
    await player.goto(url)
    await player.page.click(f'[data-key="sit-{seat}"]', timeout=WAIT_MS)
    await player.page.wait_for_selector(f'.seat.me[data-seat="{seat}"]', timeout=WAIT_MS)


async def next_turn(players: list[Player]) -> Player | None:
    """The page whose turn it is (None when the match is over on every page)."""
    waits = {asyncio.ensure_future(p.page.wait_for_function(TURN_OR_OVER, timeout=60_000)): p
             for p in players}
    try:
        done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            task.result()
    finally:
        for task in waits:
            task.cancel()
        await asyncio.gather(*waits, return_exceptions=True)
    states = [await p.state() for p in players]
    mine = [p for p, s in zip(players, states, strict=True) if s["mine"]]
    if mine:
        assert len(mine) == 1, "two pages think it is their turn"
        return mine[0]
    # The match ended on one page: every page must show it (each at its own pace).
    assert any(st["over"] for st in states), (states, [await p.text("#turn") for p in players])
    for p in players:
        await p.page.wait_for_selector("#match-result:not([hidden])", timeout=WAIT_MS)
    return None


async def take_turn(p: Player, plays: list[tuple[str, str]]) -> None:
    """What a person does on their turn: vote yes, discard the six weakest, or play the
    weakest card; by mouse, or (keyboard players) by keys alone."""
    s = await p.state()
    page = p.page
    if s["voting"]:
        if p.keyboard:
            await page.keyboard.press("y")
        else:
            await page.click('[data-key="vote-yes"]')
        await page.wait_for_function("() => !document.querySelector('[data-key=\"vote-yes\"]')",
                                     timeout=WAIT_MS)
    elif s["discarding"]:
        hand = s["hand"]
        if p.keyboard:
            await page.keyboard.press("/")
            positions = " ".join(str(i) for i in range(len(hand) - 5, len(hand) + 1))
            await page.keyboard.type(positions)
            await page.keyboard.press("Enter")
        else:
            for card in hand[-6:]:
                await page.click(f'#hand [data-card="{card}"]')
            await page.click('[data-key="discard"]')
        await page.wait_for_function("() => !document.querySelector('[data-key=\"discard\"]')",
                                     timeout=WAIT_MS)
        assert len((await p.state())["hand"]) == len(hand) - 6
    else:
        hand = s["hand"]
        card = hand[-1]
        if p.keyboard:
            # Keys alone: the card's number, typed in the card box if the focus is there
            # (after a discard typed in it), else pressed anywhere.
            if await page.evaluate("() => document.activeElement?.id === 'play-input'"):
                await page.keyboard.type(str(len(hand)))
                await page.keyboard.press("Enter")
            else:
                await page.keyboard.press(str(len(hand)))
        else:
            await page.click(f'#hand [data-card="{card}"]')
        plays.append((p.name, card))
        try:
            # The hand changed: the card left it, or (the deal's last card) the next deal
            # came in the same render, and that deal may hold the same card again.
            await page.wait_for_function(HAND_IS_NOT, arg=hand, timeout=WAIT_MS)
        except Exception as exc:
            raise AssertionError(f"{p.name} played {card}: still in hand; state "
                                 f"{await p.state()}; notice {await p.text('#table-notice')!r}; "
                                 f"turn {await p.text('#turn')!r}; errors {p.errors}") from exc


def read_json(path: Any) -> Any:
    return json.loads(Path(path).read_text())


async def probe(p: Player) -> dict[str, Any]:
    now = dict(await p.page.evaluate("() => window.__probe"))
    old = p.earlier
    return {"seen": {**now["seen"], **old["seen"]}, "ever": old["ever"] + now["ever"],
            "clicks": {**old["clicks"], **now["clicks"]}, "keys": old["keys"] + now["keys"]}


class Watcher:
    """The baseline measured in the same run: a terminal-style client (Python websockets,
    in the test process) watching the table, and when each card_played reached it."""

    def __init__(self) -> None:
        self.arrived: dict[str, float] = {}
        self.task: asyncio.Task[None] | None = None

    async def start(self, port: int, table: str) -> None:
        self.ws = await connect(f"ws://127.0.0.1:{port}/", compression=None,
                                max_size=protocol.MAX_SERVER_FRAME_BYTES)
        await self.ws.send(msgpack.packb({"type": "hello", "id": 1, "versions": [1],
                                          "name": "Tess"}))
        assert msgpack.unpackb(await self.ws.recv())["type"] == "welcome"
        await self.ws.send(msgpack.packb({"type": "spectate", "id": 2, "table": table}))
        self.task = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        async for frame in self.ws:
            at = time.time() * 1000            # the same wall clock as performance.timeOrigin
            ev = msgpack.unpackb(frame).get("event") or {}
            if ev.get("type") == "card_played":
                self.arrived.setdefault(ev["card"], at)

    async def close(self) -> None:
        await self.ws.close()
        if self.task:
            await asyncio.gather(self.task, return_exceptions=True)


def quantile(xs: list[float], p: int) -> float:
    return round(statistics.quantiles(xs, n=100, method="inclusive")[p - 1], 1)


def latency_report(plays: list[tuple[str, str]], starts: dict[str, float],
                   seen: dict[str, dict[str, float]], baseline: dict[str, float]
                   ) -> dict[str, Any]:
    """Milliseconds from the input event on the playing page to the card in the trick of
    each other page: every (play, other page) pair, and the slowest of the three per play."""
    each: list[float] = []
    worst: list[float] = []
    python: list[float] = []
    for name, card in plays:
        if card not in starts:
            continue
        others = [seen[o][card] - starts[card] for o in seen if o != name and card in seen[o]]
        if len(others) == 3:
            each += others
            worst.append(max(others))
        if card in baseline:
            python.append(baseline[card] - starts[card])
    return {"plays": len(worst), "samples": len(each),
            "p50_ms": quantile(each, 50), "p99_ms": quantile(each, 99),
            "max_ms": round(max(each), 1),
            "slowest_of_three_p50_ms": quantile(worst, 50),
            "slowest_of_three_p99_ms": quantile(worst, 99),
            "baseline_python_client_p50_ms": quantile(python, 50),
            "baseline_python_client_p99_ms": quantile(python, 99)}


async def shot(page: Any, tmp_path: Path, name: str, docs: bool = True, **kw: Any) -> Path:
    path = tmp_path / name
    await page.screenshot(path=str(path), **kw)
    assert path.stat().st_size > 5_000
    if docs and os.environ.get("ALUETTE_UPDATE_SCREENSHOTS") == "1":
        SHOTS.mkdir(parents=True, exist_ok=True)
        (SHOTS / name).write_bytes(path.read_bytes())
    return path


# --------------------------------------------------------------------------- the match


@pytest.mark.timeout(420)
async def test_four_pages_play_a_whole_match_a_fifth_watches_one_reloads(
        browser, server_proc, tmp_path):
    await server_proc()
    base = f"http://127.0.0.1:{server_proc.port}"
    ana = await Player.open(browser, base, "Ana", viewport={"width": 1100, "height": 1300})
    bo = await Player.open(browser, base, "Bo", keyboard=True)
    cy = await Player.open(browser, base, "Cy")
    di = await Player.open(browser, base, "Di")
    sam = await Player.open(browser, base, "Sam")
    players = [ana, bo, cy, di]
    url = await create_table(ana, base, chanter=True, partner_draw=True, signals="private")
    await ana.page.evaluate(PROBE)
    for seat, p in ((1, bo), (2, cy), (3, di)):
        await sit(p, url, seat)
    await sam.goto(url)
    await sam.page.wait_for_selector("text=you are watching", timeout=WAIT_MS)
    tess = Watcher()
    await tess.start(server_proc.port, url.rsplit("/", 1)[1].split("#")[0])
    await ana.page.click('[data-key="start"]')

    plays: list[tuple[str, str]] = []
    #: Each card played, and every card the watching page had been given before the input
    #: that played it was sent (read on the page just before).
    watched_before: dict[str, set[str]] = {}
    signalled = reloaded = refused = False
    while (turn := await next_turn(players)) is not None:
        s = await turn.state()
        for phase in ("voting", "discarding"):
            if s[phase] and not (tmp_path / f"{phase}.png").exists():
                await shot(turn.page, tmp_path, f"{phase}.png", docs=False, full_page=True)
        if not s["voting"] and not s["discarding"]:
            if not refused:
                # Item 3: an illegal move is explained in words (R10: not your turn).
                other = next(p for p in players if p is not turn and not p.keyboard)
                card = (await other.state())["hand"][0]
                await other.page.click(f'#hand [data-card="{card}"]')
                await other.page.wait_for_selector("#table-notice:has-text('not your turn')",
                                                   timeout=WAIT_MS)
                assert card in (await other.state())["hand"]
                refused = True
            if not signalled and turn is ana:
                await signal_reaches_the_partner_only(ana, players, sam)
                signalled = True
            if len(plays) == 14 and not reloaded:
                await reload_takes_the_seat_back(cy)
                reloaded = True
                if (await cy.state())["mine"]:
                    turn = cy
        if len(plays) == 18:
            await shot(ana.page, tmp_path, "table.png", full_page=True)
        watched = await cards_ever_added(sam)
        await take_turn(turn, plays)
        if plays and plays[-1][1] not in watched_before:
            watched_before[plays[-1][1]] = watched
    assert signalled and reloaded and refused and len(plays) == 36

    # Everyone, the spectator too, sees the end of the deal explained and the result.
    results = [await p.text("#match-result .result") for p in [*players, sam]]
    assert len({re.findall(r"Team A \d+, Team B \d+", r)[0] for r in results}) == 1, results
    assert sum(r.startswith("Your team wins") for r in results) in (0, 2), results
    for p in [*players, sam]:
        explained = await p.text("#deal-result")
        assert "the deal" in explained and "Deal 1" in explained
    # The record (R17) downloads as a file and verifies under the rules (R18).
    async with ana.page.expect_download() as info:
        await ana.page.click('[data-key="record"]')
    download = await info.value
    record = read_json(await download.path())
    summary = verify_record(record)
    assert len(record["deals"]) == 1 and summary["result"] in ("team0", "team1", "draw")

    # The spectator never had a hand, a signal panel, or a card before it was played.
    await spectator_saw_only_public_cards(sam, plays, watched_before)

    # The card-click-to-other-pages latency (issue 13 target: as the terminal client's).
    probes = {p.name: await probe(p) for p in players}
    starts = play_times(plays, probes)
    assert probes["Bo"]["clicks"] == {} and len(probes["Bo"]["keys"]) >= 9  # keys only
    await tess.close()
    report = latency_report(plays, starts, {n: pr["seen"] for n, pr in probes.items()},
                            tess.arrived)
    print(f"\nweb client latency, card click -> shown on the other three pages: "
          f"{json.dumps(report)}")
    assert report["plays"] >= 18
    for p in [*players, sam]:
        assert p.csp_or_script_errors() == [], (p.name, p.errors)


async def signal_reaches_the_partner_only(ana: Player, players: list[Player],
                                          sam: Player) -> None:
    """R15/R16 (private): Ana's signal shows on her partner's page only."""
    if not await ana.page.locator("#signals").evaluate("d => d.open"):
        await ana.page.click("#signals > summary")
    await ana.page.click('[data-key="signal-useless_hand"]')
    await ana.page.wait_for_selector("#signals:has-text('You signalled: My hand is worthless')",
                                     timeout=WAIT_MS)
    seats = {p.name: int((await p.state())["seat"]) for p in players}
    partner = next(p for p in players if seats[p.name] == (seats["Ana"] + 2) % 4)
    await partner.page.wait_for_selector(
        "#signals-received li:has-text('Ana (partner): “My hand is worthless”')",
        timeout=WAIT_MS)
    for p in players:
        if p not in (ana, partner):
            assert "worthless”" not in await p.text("#signals-received")
    assert await sam.page.locator("#signals").is_hidden()
    assert await sam.page.locator("#signals-received").inner_text() == ""


async def reload_takes_the_seat_back(p: Player) -> None:
    """Item 3: a reload mid-match takes the seat back, with the same hand."""
    before = await p.state()
    p.earlier = await probe(p)
    await p.page.reload()
    await p.online()
    await p.page.wait_for_function(
        f"() => document.querySelector('.seat.me')?.dataset.seat === '{before['seat']}' && "
        f"document.querySelectorAll('#hand [data-card]').length === {len(before['hand'])}",
        timeout=WAIT_MS)
    after = await p.state()
    assert after["hand"] == before["hand"] and after["seat"] == before["seat"]
    assert await p.text("#table-notice") == ""       # resumed, not re-joined as a watcher
    await p.page.evaluate(PROBE)


def play_times(plays: list[tuple[str, str]], probes: dict[str, dict[str, Any]]
               ) -> dict[str, float]:
    """When each card was played: the click on it, or for a keyboard play the last key
    pressed on that page before any page showed the card."""
    out: dict[str, float] = {}
    for name, card in plays:
        own = probes[name]
        if card in own["clicks"]:
            out[card] = own["clicks"][card]
            continue
        first = min((t for pr in probes.values() for c, t, where in pr["ever"]
                     if c == card and where == "trick"), default=None)
        keys = [k for k in own["keys"] if first is not None and k <= first]
        if keys:
            out[card] = max(keys)
    return out


async def cards_ever_added(p: Player) -> set[str]:
    """Every card element the page's probe has seen added to its DOM so far."""
    return set(await p.page.evaluate("() => window.__probe.ever.map((e) => e[0])"))


async def spectator_saw_only_public_cards(sam: Player, plays: list[tuple[str, str]],
                                          watched_before: dict[str, set[str]]) -> None:
    """Item 5: the watching page never had a hidden card in its DOM: every card element it
    ever got is in the trick or the last trick, and none was there before the input that
    played it. The order is read on the watching page itself, just before each play: the
    pages' clocks are not compared (a reloaded page's time origin is taken anew from the
    wall clock, which may have been slewed since, by tens of milliseconds on a busy host)."""
    assert await sam.page.locator("#hand-section").is_hidden()
    assert await sam.page.locator("#signals").is_hidden()
    pr = await probe(sam)
    seen_cards = {c for c, _, _ in pr["ever"]}
    assert len(seen_cards) == 36          # every played card, and nothing else
    assert seen_cards == {card for _, card in plays}
    for card, _, where in pr["ever"]:
        assert where in ("trick", "last"), (card, where)
    assert set(watched_before) == seen_cards
    for card, had in watched_before.items():
        assert card not in had, (card, sorted(had))


# --------------------------------------------------------------------------- restart


@pytest.mark.timeout(240)
async def test_killing_and_restarting_the_server_heals_every_page(browser, server_proc,
                                                                   tmp_path):
    """Item 5: SIGKILL the server mid-match, start it again on the same Redis: every page
    shows the drop, reconnects by itself, has the same seat and hand, and plays on."""
    proc = await server_proc()
    base = f"http://127.0.0.1:{server_proc.port}"
    ana = await Player.open(browser, base, "Ana")
    cy = await Player.open(browser, base, "Cy")
    sam = await Player.open(browser, base, "Sam")
    url = await create_table(ana, base, signals="private", bots="random")
    await sit(cy, url, 2)
    await sam.goto(url)
    await ana.page.click('[data-key="start"]')
    humans = [ana, cy]
    plays: list[tuple[str, str]] = []
    while len(plays) < 4:
        turn = await next_turn(humans)
        assert turn is not None
        await take_turn(turn, plays)
    pages = [ana, cy, sam]
    before = [await p.state() for p in pages]
    await proc.kill()
    for p in pages:
        await p.page.wait_for_selector("#banner:has-text('Reconnecting')", timeout=WAIT_MS)
        assert (await p.state())["connection"] in ("reconnecting", "connecting")
    await server_proc()
    for p, old in zip(pages, before, strict=True):
        await p.page.wait_for_function("() => document.body.dataset.connection === 'online'",
                                       timeout=30_000)
        await p.page.wait_for_selector("#banner", state="hidden", timeout=WAIT_MS)
        # Same seat, same hand (a played card may have been applied just before the kill).
        now = await p.state()
        assert now["seat"] == old["seat"]
        if old["seat"] is not None:
            assert set(now["hand"]) <= set(old["hand"])
    assert "Connected again" in await ana.text("#status")
    while (turn := await next_turn(humans)) is not None:
        await take_turn(turn, plays)
    for p in pages:
        assert await p.page.locator("#match-result").is_visible()
        assert p.csp_or_script_errors() == [], (p.name, p.errors)


async def test_a_dropped_network_is_shown_and_healed(browser, server_proc):
    """Item 3: the device goes offline mid-match: the page says so at once, reconnects by
    itself when the network is back, keeps its seat and hand, and plays on."""
    await server_proc()
    base = f"http://127.0.0.1:{server_proc.port}"
    ana = await Player.open(browser, base, "Ana")
    await create_table(ana, base, bots="random")
    await ana.page.click('[data-key="start"]')
    await ana.page.wait_for_function("() => document.body.classList.contains('my-turn')",
                                     timeout=WAIT_MS)
    before = await ana.state()
    await ana.page.context.set_offline(True)
    await ana.page.wait_for_selector("#banner:has-text('Reconnecting')", timeout=WAIT_MS)
    assert "Connection lost" in await ana.text("#status")
    await ana.page.context.set_offline(False)
    await ana.online()
    await ana.page.wait_for_selector("#banner", state="hidden", timeout=WAIT_MS)
    after = await ana.state()
    assert (after["seat"], after["hand"], after["mine"]) == (before["seat"], before["hand"], True)
    plays: list[tuple[str, str]] = []
    await take_turn(ana, plays)
    assert plays and plays[0][1] not in (await ana.state())["hand"]
    assert ana.csp_or_script_errors() == [], ana.errors


# --------------------------------------------------------------------------- details


async def test_a_hostile_name_renders_as_text(browser, server_proc):
    """Item 4: names are text, never HTML."""
    await server_proc()
    base = f"http://127.0.0.1:{server_proc.port}"
    evil = "<img src=x onerror=__pwned=1>\u202e"
    mallory = await Player.open(browser, base, evil)
    url = await create_table(mallory, base, name="<b>bold</b><script>x()</script>")
    assert "/t/" in url
    visitor = await Player.open(browser, base, "Vic", viewport={"width": 1100, "height": 900})
    await visitor.goto(base + "/")
    entry = visitor.page.locator(".table-entry").first
    await entry.wait_for(timeout=WAIT_MS)
    assert await entry.locator(".t-name").inner_text() == "<b>bold</b><script>x()</script>"
    assert "<img src=x onerror=__pwned=1>" in await entry.inner_text()
    assert "\u202e" not in await entry.inner_text()        # cleaned (protocol.clean_text)
    assert await visitor.page.locator("#tables img, #tables b, #tables script").count() == 0
    await visitor.page.goto(url)
    await visitor.online()
    await visitor.page.wait_for_selector('.seat[data-seat="0"]', timeout=WAIT_MS)
    assert "<img src=x onerror=__pwned=1>" in await visitor.text('.seat[data-seat="0"]')
    assert await visitor.page.locator("#felt img").count() == 0
    assert await visitor.page.evaluate("() => window.__pwned") is None

    for p in (mallory, visitor):
        assert p.csp_or_script_errors() == [], (p.name, p.errors)


async def test_lobby_first_paint(browser, server_proc, tmp_path):
    """Issue 13 target: the lobby's first paint <= 1 s on loopback, its assets <= 200 KiB.
    Five first visits (fresh profiles: nothing cached), measured by the browser itself:
    first contentful paint, and the moment the table list is drawn (the page's own
    performance mark). Printed, not asserted (the machine is shared); the bytes are."""
    await server_proc()
    base = f"http://127.0.0.1:{server_proc.port}"
    host = await Player.open(browser, base, "Host")
    await create_table(host, base, name="Open table")
    runs = []
    for i in range(5):
        fresh = await Player.open(browser, base, f"Visitor {i}",
                                  viewport={"width": 1100, "height": 900})
        await fresh.page.goto(base + "/")
        await fresh.page.wait_for_function(
            "() => performance.getEntriesByName('aluette:lobby-ready').length > 0",
            timeout=WAIT_MS)
        runs.append(await fresh.page.evaluate("""() => ({
          fcp: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null,
          lobby: performance.getEntriesByName('aluette:lobby-ready')[0].startTime,
          bytes: performance.getEntriesByType('resource').reduce((a, r) => a + r.decodedBodySize, 0)
            + performance.getEntriesByType('navigation')[0].decodedBodySize,
        })"""))
        assert fresh.csp_or_script_errors() == [], fresh.errors
        if i == 4:
            await fresh.page.wait_for_selector(".table-entry", timeout=WAIT_MS)
            await shot(fresh.page, tmp_path, "lobby.png", full_page=True)
        await fresh.page.context.close()
    fcp = sorted(r["fcp"] for r in runs)
    lobby = sorted(r["lobby"] for r in runs)
    print(f"\nweb client lobby, 5 first visits: first contentful paint median {fcp[2]:.0f} ms "
          f"(max {fcp[-1]:.0f}); table list drawn median {lobby[2]:.0f} ms "
          f"(max {lobby[-1]:.0f}); {runs[0]['bytes']} bytes loaded")
    assert all(r["fcp"] is not None for r in runs)
    assert all(r["bytes"] <= 300 * 1024 for r in runs)


async def test_phone_width_keyboard_labels_and_dark_mode(browser, server_proc, tmp_path):
    """Item 4: a 360 px phone (no sideways scrolling, tap to play), screen-reader labels on
    cards and seats, and prefers-color-scheme. Ana deals (first dealer), so at her first
    turn three bots have played: a table mid-trick."""
    await server_proc()
    base = f"http://127.0.0.1:{server_proc.port}"
    phone = await Player.open(browser, base, "Ana", viewport={"width": 360, "height": 740},
                              is_mobile=True, has_touch=True, device_scale_factor=2)
    page = phone.page
    await create_table(phone, base, bots="random", first_dealer=0)
    # A reload before the start keeps the seat too (resume with a fresh-snapshot last_seq).
    await page.reload()
    await phone.online()
    await page.wait_for_selector('.seat.me[data-seat="0"]', timeout=WAIT_MS)
    assert await phone.text("#table-notice") == ""
    await page.click('[data-key="start"]')
    await page.wait_for_function("() => document.body.classList.contains('my-turn')",
                                 timeout=WAIT_MS)
    assert await page.locator("#trick [data-card]").count() == 3     # mid-trick
    assert await page.evaluate("() => document.documentElement.scrollWidth") <= 360
    labels = await page.locator("#hand button.card").evaluate_all(
        "els => els.map((e) => e.querySelector('.visually-hidden').textContent)")
    assert len(labels) == 9 and all("strength" in label for label in labels)
    seat_labels = await page.locator(".seat").evaluate_all(
        "els => els.map((e) => e.getAttribute('aria-label'))")
    assert len(seat_labels) == 4
    assert any(s.startswith("Seat 0, you,") and s.endswith("to play") for s in seat_labels)
    assert await page.locator("#turn").get_attribute("aria-live") == "assertive"
    await shot(page, tmp_path, "table-mobile.png", full_page=True)
    # Tap to play.
    card = (await phone.state())["hand"][-1]
    await page.tap(f'#hand [data-card="{card}"]')
    await page.wait_for_selector(f'#trick [data-card="{card}"], #last-trick [data-card="{card}"]',
                                 timeout=WAIT_MS)
    light = await page.evaluate("() => getComputedStyle(document.body).backgroundColor")
    await page.emulate_media(color_scheme="dark")
    dark = await page.evaluate("() => getComputedStyle(document.body).backgroundColor")
    assert light != dark
    assert phone.csp_or_script_errors() == [], phone.errors


async def test_private_table_link_code_and_join_by_code(browser, server_proc):
    """Item 1/3: a private table's link carries its join code; without it the page says why
    it cannot get in; the lobby's "Join with a code" seats a player; strangers do not see
    the table in the lobby."""
    await server_proc()
    base = f"http://127.0.0.1:{server_proc.port}"
    ana = await Player.open(browser, base, "Ana")
    url = await create_table(ana, base, private=True, name="Secret")
    path, _, fragment = url.partition("#")
    assert fragment.startswith("code=") and len(fragment) > 5
    code = fragment[5:]
    assert f"join code {code}" in await ana.text("#table-meta")
    # Without the code: refused, in words.
    bo = await Player.open(browser, base, "Bo")
    await bo.goto(path)
    await bo.page.wait_for_selector("#table-notice:has-text('private')", timeout=WAIT_MS)
    await bo.page.goto(base + "/")
    await bo.online()
    await bo.page.wait_for_selector("#tables[aria-busy=false]", timeout=WAIT_MS)
    assert "Secret" not in await bo.text("#tables")
    # With the link: watch, then sit.
    await sit(bo, url, 1)
    # With the lobby form: the table id and the code.
    cy = await Player.open(browser, base, "Cy")
    await cy.goto(base + "/")
    await cy.page.fill("#code-form input[name=table]", path.rsplit("/", 1)[1])
    await cy.page.fill("#code-form input[name=code]", code)
    await cy.page.click("#code-form button[value=join]")
    await cy.page.wait_for_selector("#table-view:not([hidden]) .seat.me", timeout=WAIT_MS)
    assert (await cy.state())["seat"] in ("2", "3")
    for p in (ana, bo, cy):
        assert [e for e in p.csp_or_script_errors() if "bad_code" not in e] == [], p.errors


async def test_a_second_tab_of_the_same_session_takes_over_and_back(browser, server_proc):
    """docs/PROTOCOL.md 4009: opening the session elsewhere closes the other connection, which
    must not reconnect by itself (the two tabs would fight); the page says so and offers
    to take the session back."""
    await server_proc()
    base = f"http://127.0.0.1:{server_proc.port}"
    first = await Player.open(browser, base, "Ana")
    await first.goto(base + "/")
    second = Player("Ana", await first.page.context.new_page())   # same localStorage
    await second.goto(base + "/")
    await first.page.wait_for_selector("#banner:has-text('opened from somewhere else')",
                                       timeout=WAIT_MS)
    assert (await first.state())["connection"] == "fatal"
    await first.page.click("#banner button")
    await first.online()
    await second.page.wait_for_selector("#banner:has-text('opened from somewhere else')",
                                        timeout=WAIT_MS)
    assert (await second.state())["connection"] == "fatal"
    assert (await first.state())["connection"] == "online"
    # The same session taken back (with the token the other tab rotated), not a new one.
    assert "no longer knew your session" not in await first.text("#lobby-notice")
