"""Issue 27, "Done when", as one evening: four registered players, two in browsers (Debian's
Chromium, headless) and two in terminals (the real ``aluette`` in a pty), against
``aluette-server`` as a real process. They sign up, press "Play now" for a rated game, are
seated together at one table, play the whole match, and then see on their profiles (the
page ``/u/<name>`` and the terminal's ``profile``) the ratings that OpenSkill's
Plackett-Luce model computes from the result, the model docs/PROTOCOL.md names.

The terminals are driven in threads (pexpect blocks), the pages on the test's loop; every
wait is for something seen, never a sleep.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from openskill.models import PlackettLuce

from tests.client.conftest import TURN, Cli, terminals
from tests.server.netclient import NetClient

from .test_browser import WAIT_MS, Player, next_turn, take_turn
from .test_browser_account import account_form

PASSWORD = "correct horse battery"
#: docs/PROTOCOL.md, "Players": a rating's display is ``1500 + 59 * (mu - 25)``, rounded.
DISPLAY_BASE, DISPLAY_PER_MU, MU0 = 1500, 59.0, 25.0

pytestmark = pytest.mark.slow    # a whole five-deal match by hand: about a minute


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Any]:
    """``terminal(*args)``: the real client in a pty, its own state directory each (four
    players, not one player's restarts)."""
    with terminals(tmp_path, shared_state=False) as make:
        yield make


async def sign_up_in_the_browser(p: Player, base: str) -> None:
    await p.goto(base + "/")
    await account_form(p, "signup", p.name, PASSWORD)
    await p.page.wait_for_selector(f"#account-name:has-text('{p.name}')", timeout=WAIT_MS)


def register_in_the_terminal(cli: Cli, name: str) -> None:
    cli.expect("Type `help`")
    cli.send("register")
    cli.expect(re.escape("New password (8 characters or more):"))
    cli.send(PASSWORD)
    cli.expect(re.escape("The same password again:"))
    cli.send(PASSWORD)
    cli.expect(re.escape(f"✓ You are {name} (account {name.casefold()})."))


def queue_in_the_terminal(cli: Cli) -> None:
    cli.send("play rated")
    cli.expect(r"Looking for players \(rated")


def seated_in_the_terminal(cli: Cli) -> tuple[str, int]:
    found = cli.expect(re.compile(r"Seated at table (t[0-9a-f]+), seat (\d)"), timeout=30)
    return found.group(1), int(found.group(2))


def play_in_the_terminal(cli: Cli) -> None:
    """The first card on every turn, until the match is over."""
    while cli.expect_any([re.escape(TURN), r"Match over: "], timeout=90) == 0:
        cli.send("1")


def expected_ratings(result: str) -> dict[int, tuple[float, float]]:
    """What the rating library makes of the result for four new players (seats 0 and 2
    are team 0, R5), computed here from openskill itself, not from the server's code."""
    model = PlackettLuce()
    ranks = {"team0": [0.0, 1.0], "team1": [1.0, 0.0], "draw": [0.0, 0.0]}[result]
    teams = [[model.rating(), model.rating()], [model.rating(), model.rating()]]
    (a0, a2), (b1, b3) = model.rate(teams, ranks=ranks)
    return {0: (a0.mu, a0.sigma), 2: (a2.mu, a2.sigma), 1: (b1.mu, b1.sigma),
            3: (b3.mu, b3.sigma)}


def display(mu: float) -> int:
    return round(DISPLAY_BASE + DISPLAY_PER_MU * (mu - MU0))


async def test_two_browsers_and_two_terminals_play_a_rated_match_from_play_now(
        browser: Any, server_proc: Any, terminal: Any) -> None:
    srv = await server_proc()
    base = f"http://127.0.0.1:{server_proc.port}"
    url = f"ws://127.0.0.1:{server_proc.port}"

    # Four accounts: two signed up in pages, two registered in terminals.
    ana, bo = [await Player.open(browser, base, n) for n in ("Ana", "Bo")]
    pages = [ana, bo]
    cy, di = terminal("--server", url, "--name", "Cy"), terminal("--server", url, "--name", "Di")
    await asyncio.gather(sign_up_in_the_browser(ana, base), sign_up_in_the_browser(bo, base),
                         asyncio.to_thread(register_in_the_terminal, cy, "Cy"),
                         asyncio.to_thread(register_in_the_terminal, di, "Di"))

    # Play now, rated, from all four: the terminals first, then Ana, then Bo, whose request
    # makes the table at once (the matchmaker's `matched` may overtake the answer).
    await asyncio.gather(asyncio.to_thread(queue_in_the_terminal, cy),
                         asyncio.to_thread(queue_in_the_terminal, di))
    # Ana sees herself waiting before Bo asks: once Bo's request seats all four, her
    # wait is gone within milliseconds (and her page leaves the lobby).
    for p in pages:
        await p.page.check("#play-now-rated")
        await p.page.click("#play-now")
        if p is ana:
            await ana.page.wait_for_selector("#play-now-wait:not([hidden])", timeout=WAIT_MS)
    (cy_table, cy_seat), (di_table, di_seat) = await asyncio.gather(
        asyncio.to_thread(seated_in_the_terminal, cy),
        asyncio.to_thread(seated_in_the_terminal, di))
    for p in pages:
        await p.page.wait_for_url("**/t/*", timeout=WAIT_MS)
        await p.online()
    # Seated, nobody still "waiting": no wait kept for a reload, no ticker in a terminal.
    await bo.page.wait_for_function(
        "() => document.getElementById('play-now-cancel').hidden", timeout=WAIT_MS)
    for p in pages:
        assert await p.page.evaluate("() => sessionStorage.getItem('aluette.queue.v1')") is None
    page_tables = {p.page.url.rstrip("/").rsplit("/", 1)[-1] for p in pages}
    assert page_tables == {cy_table} == {di_table}
    seats = {int((await p.state())["seat"]) for p in pages} | {cy_seat, di_seat}
    assert seats == {0, 1, 2, 3}

    # The whole match: the pages take their turns here, the terminals in their threads.
    async def pages_play() -> None:
        plays: list[tuple[str, str]] = []
        while (p := await next_turn(pages)) is not None:
            await take_turn(p, plays)

    await asyncio.gather(pages_play(), asyncio.to_thread(play_in_the_terminal, cy),
                         asyncio.to_thread(play_in_the_terminal, di))

    # The ratings, once the match's history is kept (written just after the last commit).
    watcher = await NetClient.open(url, "Eve")
    try:
        deadline = time.monotonic() + 10
        while (prof := await watcher.call("profile", name="Ana"))["rated_played"] < 1:
            assert time.monotonic() < deadline, prof
            await asyncio.sleep(0.1)
        entry = prof["recent"][0]
        assert entry["rated"] and entry["table"] == cy_table
        want = expected_ratings(entry["result"])
        by_name = {pl["name"]: pl["seat"] for pl in entry["players"]}
        assert set(by_name) == {"Ana", "Bo", "Cy", "Di"}
        for name, seat in by_name.items():
            rating = (await watcher.call("profile", name=name))["rating"]
            mu, sigma = want[seat]
            # The profile gives mu and sigma to four places.
            assert rating["mu"] == pytest.approx(mu, abs=5e-5), name
            assert rating["sigma"] == pytest.approx(sigma, abs=5e-5), name
            assert rating["display"] == display(mu), name
    finally:
        await watcher.close()

    # What each person sees: the page /u/<name>, the terminal's `profile`.
    for p in pages:
        await p.goto(f"{base}/u/{p.name}")
        await p.page.wait_for_selector("#profile-rating", timeout=WAIT_MS)
        shown = await p.text("#profile-rating")
        assert str(display(want[by_name[p.name]][0])) in shown, shown
        assert "1 matches played" in await p.text("#profile-counts")
        assert p.csp_or_script_errors() == []
    for cli, name in ((cy, "Cy"), (di, "Di")):
        mu, sigma = want[by_name[name]]
        cli.send(f"profile {name}")
        await asyncio.to_thread(cli.expect, re.escape(
            f"rating   {display(mu)} (μ {mu:.1f}, σ {sigma:.1f})"))
        assert PASSWORD not in cli.output
    assert srv.proc.returncode is None
