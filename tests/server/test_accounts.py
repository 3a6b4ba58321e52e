"""Accounts over the wire (issue 27, protocol 1.5): a real server on a real store.

A guest plays, then registers and keeps its player id; logs in from another device;
a guest may not go by an account's name; brute force is slowed; change of password and
log out everywhere end the other devices' sessions; no password, hash or token of one
player ever reaches anyone else.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from .netclient import NetClient, ServerError

PASSWORD = "correct horse battery"


async def closed_with(client: NetClient, timeout: float = 10) -> int | None:
    await asyncio.wait_for(client.closed.wait(), timeout)
    return client.ws.close_code


async def test_a_guest_registers_and_keeps_its_player_and_seat(connect: Callable[..., Any],
                                                               url: str) -> None:
    ana = await connect("Ana")
    created = await ana.call("create_table")
    made = await ana.call("register", name="Ana", password=PASSWORD)
    assert made == {"player_id": ana.welcome["player_id"], "name": "Ana", "account": "ana"}
    # Another device logs in: the same player, so the same seat.
    phone = await connect("whatever")
    logged = await phone.call("login", name="ANA", password=PASSWORD)
    assert logged["player_id"] == ana.welcome["player_id"]
    assert logged["name"] == "Ana" and logged["account"] == "ana"
    assert logged["session"] != ana.welcome["session"]
    joined = await phone.call("join", table=created["table"])
    assert joined["seat"] == 0
    # Both devices stay connected (a login is a session of its own, not a replacement).
    await ana.request("ping")
    assert not ana.closed.is_set()
    # The device's token resumes its session, as the account's player.
    again = await NetClient.open(url, "anything", token=logged["session"])
    try:
        assert again.welcome["player_id"] == ana.welcome["player_id"]
        assert again.welcome["name"] == "Ana"
    finally:
        await again.close()


async def test_wrong_password_and_unknown_name(connect: Callable[..., Any]) -> None:
    ana = await connect("Ana")
    await ana.call("register", name="Ana", password=PASSWORD)
    other = await connect("Eve")
    for name, password in (("Ana", "not the password"), ("Nobody", PASSWORD)):
        with pytest.raises(ServerError) as refused:
            await other.call("login", name=name, password=password)
        assert refused.value.code == "bad_credentials"
        assert refused.value.reply["message"] == "wrong name or password"


async def test_brute_force_is_slowed(connect: Callable[..., Any]) -> None:
    ana = await connect("Ana")
    await ana.call("register", name="Ana", password=PASSWORD)
    eve = await connect("Eve")
    codes = []
    for i in range(7):
        try:
            await eve.call("login", name="Ana", password=f"guess {i}")
        except ServerError as exc:
            codes.append((exc.code, (exc.reply.get("details") or {}).get("retry_after_ms")))
    assert [c for c, _ in codes[:5]] == ["bad_credentials"] * 5
    assert codes[5][0] == "login_throttled" and codes[5][1] > 0
    # Even the right password waits now.
    with pytest.raises(ServerError) as refused:
        await eve.call("login", name="Ana", password=PASSWORD)
    assert refused.value.code == "login_throttled"


@pytest.mark.parametrize(("name", "code", "reason"), [
    ("admin", "name_refused", "reserved"), ("Guest 1234", "name_refused", "reserved"),
    ("x", "name_refused", "length"), ("ANA", "name_taken", "taken"),
    ("Il1", "name_taken", "confusable"),
])
async def test_names_refused(connect: Callable[..., Any], name: str, code: str,
                             reason: str) -> None:
    first = await connect("someone")
    await first.call("register", name="Ana", password=PASSWORD)
    second = await connect("other")
    if name == "Il1":
        await second.call("register", name="lll", password=PASSWORD)
    third = await connect("third")
    with pytest.raises(ServerError) as refused:
        await third.call("register", name=name, password=PASSWORD)
    assert refused.value.code == code
    assert refused.value.reply["details"] == {"reason": reason}


async def test_a_short_password_is_refused(connect: Callable[..., Any]) -> None:
    ana = await connect("Ana")
    reply = await ana.request("register", name="Ana", password="short")
    assert reply["code"] == "invalid_field"
    assert reply["details"] == {"field": "$.password"}
    assert "short" not in reply["message"]


async def test_a_guest_cannot_take_a_registered_name(connect: Callable[..., Any],
                                                     url: str) -> None:
    ana = await connect("Ana")
    await ana.call("register", name="Ana", password=PASSWORD)
    # A new session asking for the name gets a guest's name instead.
    eve = await connect("ANA")
    assert eve.welcome["name"].startswith("Guest ")
    # A guest renaming to it (or to a look-alike) keeps its name.
    bob = await connect("Bob")
    await bob.close()
    again = await NetClient.open(url, "Аna", token=bob.welcome["session"])
    try:
        assert again.welcome["name"] == "Bob"
    finally:
        await again.close()
    # A guest renaming to a free name is renamed (1.5).
    carl = await connect("Carl")
    await carl.close()
    renamed = await NetClient.open(url, "Carlos", token=carl.welcome["session"])
    try:
        assert renamed.welcome["name"] == "Carlos"
    finally:
        await renamed.close()


async def test_register_twice_and_commands_for_accounts_only(
        connect: Callable[..., Any]) -> None:
    ana = await connect("Ana")
    for command, fields in (("logout", {}), ("logout_all", {}),
                            ("change_password", {"old_password": "x",
                                                 "new_password": "long enough"})):
        with pytest.raises(ServerError) as refused:
            await ana.call(command, **fields)
        assert refused.value.code == "not_registered"
    await ana.call("register", name="Ana", password=PASSWORD)
    with pytest.raises(ServerError) as refused:
        await ana.call("register", name="Ana2", password=PASSWORD)
    assert refused.value.code == "already_registered"


async def test_login_at_a_table_is_refused(connect: Callable[..., Any]) -> None:
    ana = await connect("Ana")
    await ana.call("register", name="Ana", password=PASSWORD)
    bob = await connect("Bob")
    await bob.call("create_table")
    with pytest.raises(ServerError) as refused:
        await bob.call("login", name="Ana", password=PASSWORD)
    assert refused.value.code == "wrong_phase"


async def test_change_password_ends_the_other_devices(connect: Callable[..., Any],
                                                      url: str) -> None:
    ana = await connect("Ana")
    await ana.call("register", name="Ana", password=PASSWORD)
    phone = await connect("x")
    logged = await phone.call("login", name="Ana", password=PASSWORD)
    changed = await ana.call("change_password", old_password=PASSWORD,
                             new_password="a new password")
    assert changed == {"revoked": 1}
    assert await closed_with(phone) == 4002
    assert not ana.closed.is_set()
    stale = await NetClient.open(url, "x", token=None)
    try:
        with pytest.raises(ServerError):
            await stale.call("login", name="Ana", password=PASSWORD)
        await stale.call("login", name="Ana", password="a new password")
    finally:
        await stale.close()
    # The revoked token is refused.
    with pytest.raises(ServerError) as refused:
        await NetClient.open(url, "x", token=logged["session"])
    assert refused.value.code == "bad_token"


async def test_logout_all_ends_every_session(connect: Callable[..., Any], url: str) -> None:
    ana = await connect("Ana")
    await ana.call("register", name="Ana", password=PASSWORD)
    devices = [await connect("x") for _ in range(2)]
    tokens = [(await d.call("login", name="Ana", password=PASSWORD))["session"]
              for d in devices]
    result = await ana.call("logout_all")
    assert result == {"revoked": 3}
    for client in (ana, *devices):
        assert await closed_with(client) == 4002
    for token in (*tokens, ana.welcome["session"]):
        with pytest.raises(ServerError) as refused:
            await NetClient.open(url, "x", token=token)
        assert refused.value.code == "bad_token"
    # The account itself is kept: log in again.
    back = await connect("y")
    assert (await back.call("login", name="Ana", password=PASSWORD))["account"] == "ana"


async def test_logout_ends_this_device_only(connect: Callable[..., Any], url: str) -> None:
    ana = await connect("Ana")
    await ana.call("register", name="Ana", password=PASSWORD)
    phone = await connect("x")
    logged = await phone.call("login", name="Ana", password=PASSWORD)
    assert await phone.call("logout") == {"revoked": 1}
    assert await closed_with(phone) == 4002
    assert not ana.closed.is_set()
    with pytest.raises(ServerError):
        await NetClient.open(url, "x", token=logged["session"])


async def test_no_secret_reaches_anyone_else(connect: Callable[..., Any]) -> None:
    """The leak audit (issue 27): a password, its hash or a token is in no frame to
    another player, seated at the same table or watching it; the login's own token
    reaches only its own connection."""
    ana = await connect("Ana")
    table = (await ana.call("create_table"))["table"]
    bob = await connect("Bob")
    await bob.call("join", table=table)
    watcher = await connect("Watcher")
    await watcher.call("spectate", table=table)
    await ana.call("register", name="Ana", password=PASSWORD)
    phone = await connect("x")
    logged = await phone.call("login", name="Ana", password=PASSWORD)
    await ana.call("change_password", old_password=PASSWORD, new_password="second secret")
    await bob.call("leave", table=table)
    await bob.call("join", table=table)   # a head: the table as it is now
    secrets = [PASSWORD.encode(), b"second secret", b"$argon2",
               ana.welcome["session"].encode(), logged["session"].encode(),
               ana.welcome["session"].partition(".")[2].encode()]
    for other in (bob, watcher):
        blob = b"".join(other.frames)
        for secret in secrets:
            assert secret not in blob
    # Nor does any frame to the player itself echo a password or a hash.
    own = b"".join(ana.frames + phone.frames)
    for secret in secrets[:3]:
        assert secret not in own


async def test_logout_all_reaches_another_process(redis_url: str, key_prefix: str,
                                                  redis_client: Any) -> None:
    """Two server processes on one store: a logout_all on one closes the account's
    connections on the other (within --revoke-check)."""
    from server.app import running

    from .conftest import server_settings

    settings = server_settings(redis_url, key_prefix, revoke_check_s=0.2)
    async with running(settings) as one, running(settings) as two:
        ana = await NetClient.open(f"ws://127.0.0.1:{one.port}", "Ana")
        phone = await NetClient.open(f"ws://127.0.0.1:{two.port}", "x")
        guest = await NetClient.open(f"ws://127.0.0.1:{two.port}", "Bob")
        try:
            await ana.call("register", name="Ana", password=PASSWORD)
            await phone.call("login", name="Ana", password=PASSWORD)
            assert await ana.call("logout_all") == {"revoked": 2}
            assert await closed_with(phone) == 4002
            assert await closed_with(ana) == 4002
            assert not guest.closed.is_set()      # nobody else's connection
            await guest.request("ping")
        finally:
            for c in (ana, phone, guest):
                await c.close()
