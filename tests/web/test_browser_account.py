"""Accounts in the browser (issue 27, protocol 1.5): Debian's Chromium, headless, against
``aluette-server`` as a real process. A guest signs up (its player id stays), logs out (a
guest again), logs back in (the same player), and a reload keeps the account; the password
is never left in the page or in localStorage."""

from __future__ import annotations

import json

from tests.server.netclient import NetClient

from .test_browser import WAIT_MS, Player

PASSWORD = "correct horse battery"


async def stored(p: Player) -> dict:
    raw = await p.page.evaluate("() => localStorage.getItem('aluette.session.v1')")
    return json.loads(raw or "{}")


async def account_form(p: Player, which: str, name: str, password: str) -> None:
    """Fill and send the top bar's form: ``which`` is ``signup`` or ``login``."""
    await p.page.click(f"#{which}-open")
    await p.page.fill("#account-user", name)
    await p.page.fill("#account-password", password)
    await p.page.click("#account-submit")


async def signed_in_as(p: Player, name: str) -> None:
    await p.page.wait_for_selector(f"#account-name:has-text('{name}')", timeout=WAIT_MS)
    assert await p.page.locator("#logout").is_visible()
    assert not await p.page.locator("#name-form").is_visible()


async def test_sign_up_log_out_log_back_in(browser, server_proc) -> None:
    await server_proc()
    base = f"http://127.0.0.1:{server_proc.port}"
    ana = await Player.open(browser, base, "Ana")
    await ana.goto(base + "/")
    guest_player = (await stored(ana))["token"].partition(".")[0]

    # Sign up: the name is kept, with a password.
    await ana.page.click("#signup-open")
    await ana.page.fill("#account-user", "Ana Web")
    await ana.page.fill("#account-password", PASSWORD)
    await ana.page.click("#account-submit")
    await signed_in_as(ana, "Ana Web")
    assert await ana.page.input_value("#account-password") == ""
    assert (await stored(ana))["account"] == "ana web"

    # Log out: a guest again, on a new session.
    await ana.page.click("#logout")
    await ana.page.wait_for_selector("#login-open", state="visible", timeout=WAIT_MS)
    await ana.online()
    after = await stored(ana)
    assert after["account"] is None
    await ana.page.wait_for_function(
        "(old) => { const s = JSON.parse(localStorage.getItem('aluette.session.v1'));"
        " return s.token && !s.token.startsWith(old); }", arg=guest_player, timeout=WAIT_MS)

    # A wrong password is explained; the right one logs back in.
    await ana.page.click("#login-open")
    await ana.page.fill("#account-user", "ANA WEB")
    await ana.page.fill("#account-password", "not the password")
    await ana.page.click("#account-submit")
    await ana.page.wait_for_selector("#account-error:has-text('Wrong name or password')",
                                     timeout=WAIT_MS)
    await ana.page.fill("#account-password", PASSWORD)
    await ana.page.click("#account-submit")
    await signed_in_as(ana, "Ana Web")

    # A reload keeps the account (its token is remembered like a guest's).
    await ana.page.reload()
    await ana.online()
    await signed_in_as(ana, "Ana Web")
    kept = await stored(ana)
    assert PASSWORD not in json.dumps(kept)
    assert ana.csp_or_script_errors() == []

    # The token the page holds speaks for the player who signed up as a guest.
    other = await NetClient.open(f"ws://127.0.0.1:{server_proc.port}/ws", "x",
                                 token=kept["token"])
    try:
        assert other.welcome["player_id"] == guest_player
        assert other.welcome["name"] == "Ana Web"
    finally:
        await other.close()


async def test_own_profile_changes_the_password_and_logs_out_everywhere(browser,
                                                                      server_proc) -> None:
    """Issue 27, item 1, in the browser as the terminal has it: on your own profile page,
    change the password (your other devices' sessions end) and log out everywhere."""
    await server_proc()
    base = f"http://127.0.0.1:{server_proc.port}"
    new = "another long secret"
    ana = await Player.open(browser, base, "Ana")
    await ana.goto(base + "/")
    await account_form(ana, "signup", "Ana Web", PASSWORD)
    await signed_in_as(ana, "Ana Web")
    laptop = await Player.open(browser, base, "Laptop")
    await laptop.goto(base + "/")
    await account_form(laptop, "login", "ana web", PASSWORD)
    await signed_in_as(laptop, "Ana Web")

    # Someone else's profile has no settings; your own has them.
    await ana.page.click("#my-profile")
    await ana.page.wait_for_selector("#account-settings:not([hidden])", timeout=WAIT_MS)
    page = ana.page
    await page.fill("#password-old", "not the password")
    await page.fill("#password-new", new)
    await page.click("#password-submit")
    await page.wait_for_selector("#account-settings-note:has-text('Wrong name or password')",
                                 timeout=WAIT_MS)
    await page.fill("#password-old", PASSWORD)
    await page.fill("#password-new", new)
    await page.click("#password-submit")
    await page.wait_for_selector(
        "#account-settings-note:has-text('Your other sessions were ended: 1')", timeout=WAIT_MS)
    assert await page.input_value("#password-old") == ""
    assert await page.input_value("#password-new") == ""
    # The laptop's session is over: it plays as a guest now.
    await laptop.page.wait_for_selector("#login-open", state="visible", timeout=WAIT_MS)
    assert (await stored(laptop)).get("account") is None

    # Log out everywhere: this page too is a guest's, and its settings are gone.
    await page.click("#logout-all")
    await page.wait_for_selector("#login-open", state="visible", timeout=WAIT_MS)
    await page.wait_for_selector("#account-settings", state="hidden", timeout=WAIT_MS)
    assert (await stored(ana))["account"] is None
    # The new password is the one that works.
    await account_form(ana, "login", "Ana Web", new)
    await signed_in_as(ana, "Ana Web")
    for p in (ana, laptop):
        kept = json.dumps(await stored(p))
        assert PASSWORD not in kept and new not in kept
        assert p.csp_or_script_errors() == []
