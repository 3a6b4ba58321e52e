"""The accounts service on a real store (issue 27): register, log in, throttling, change
of password; nothing secret in the store but the Argon2id hash, nothing secret logged."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest
import redis.asyncio as aioredis

from protocol import CommandError, ErrorCode
from server.accounts import Accounts, Hasher
from server.store.accounts import AccountStore

from .conftest import FAST

PASSWORD = "correct horse battery"


async def test_register_then_authenticate(accounts: Accounts) -> None:
    made = await accounts.register("p1", "Ana", PASSWORD)
    assert made.key == "ana"
    account = await accounts.authenticate("ANA", PASSWORD, "10.0.0.1")
    assert (account.key, account.name, account.player) == ("ana", "Ana", "p1")


@pytest.mark.parametrize(("second", "reason"), [("ANA", "taken"), ("Аna", "confusable"),
                                               ("ana", "taken")])
async def test_a_name_is_registered_once(accounts: Accounts, second: str, reason: str) -> None:
    await accounts.register("p1", "Ana", PASSWORD)
    with pytest.raises(CommandError) as refused:
        await accounts.register("p2", second, PASSWORD)
    # Cyrillic "Аna" mixes scripts: refused as such before it is compared.
    if reason == "confusable":
        assert refused.value.code in (ErrorCode.NAME_TAKEN, ErrorCode.NAME_REFUSED)
    else:
        assert refused.value.code == ErrorCode.NAME_TAKEN
        assert refused.value.details == {"reason": reason}


async def test_a_confusable_name_is_taken(accounts: Accounts) -> None:
    await accounts.register("p1", "Il1", PASSWORD)
    with pytest.raises(CommandError) as refused:
        await accounts.register("p2", "lll", PASSWORD)
    assert refused.value.code == ErrorCode.NAME_TAKEN
    assert refused.value.details == {"reason": "confusable"}
    assert not await accounts.guest_name_free("LLL")
    assert await accounts.guest_name_free("Bob")


async def test_one_account_per_player(accounts: Accounts) -> None:
    await accounts.register("p1", "Ana", PASSWORD)
    with pytest.raises(CommandError) as refused:
        await accounts.register("p1", "Bob", PASSWORD)
    assert refused.value.code == ErrorCode.ALREADY_REGISTERED


async def test_wrong_password_and_unknown_name_read_the_same(accounts: Accounts) -> None:
    await accounts.register("p1", "Ana", PASSWORD)
    answers = []
    for name, password in (("Ana", "wrong password"), ("Nobody", PASSWORD)):
        with pytest.raises(CommandError) as refused:
            await accounts.authenticate(name, password, "10.0.0.2")
        answers.append((refused.value.code, str(refused.value), refused.value.details))
    assert answers[0] == answers[1]
    assert answers[0][0] == ErrorCode.BAD_CREDENTIALS


async def test_an_unknown_name_is_hashed_against_a_dummy(accounts: Accounts,
                                                          hasher: Hasher) -> None:
    """The unknown name costs one Argon2id check like a wrong password (same timing)."""
    await accounts.register("p1", "Ana", PASSWORD)
    calls: list[str | None] = []
    real = hasher.check

    async def counting(stored: str | None, password: str) -> object:
        calls.append(stored)
        return await real(stored, password)

    hasher.check = counting  # type: ignore[method-assign]
    for name in ("Ana", "Nobody"):
        with pytest.raises(CommandError):
            await accounts.authenticate(name, "wrong password", "10.0.0.3")
    assert len(calls) == 2 and calls[0] is not None and calls[1] is None


async def test_the_timing_of_both_refusals_is_alike(accounts: Accounts) -> None:
    await accounts.register("p1", "Ana", PASSWORD)
    spent: dict[str, list[float]] = {"Ana": [], "Nobody": []}
    for i in range(6):
        for name in spent:
            start = time.perf_counter()
            with pytest.raises(CommandError):
                await accounts.authenticate(name, "wrong", f"10.1.{i}.{len(name)}")
            spent[name].append(time.perf_counter() - start)
        # a fresh account counter each round: throttling is not what is measured here
        await accounts.store.succeeded("ana", "none")
    known, unknown = sorted(spent["Ana"])[3], sorted(spent["Nobody"])[3]
    assert unknown > known / 3, (known, unknown)   # no early return without a hash


async def test_attempts_per_account_back_off_exponentially(accounts: Accounts) -> None:
    """Three free attempts, then waits of 1 s, 2 s... (the test policy); from any address."""
    await accounts.register("p1", "Ana", PASSWORD)
    for i in range(3):
        with pytest.raises(CommandError) as refused:
            await accounts.authenticate("Ana", "wrong", f"10.2.0.{i}")
        assert refused.value.code == ErrorCode.BAD_CREDENTIALS
    with pytest.raises(CommandError) as refused:
        await accounts.authenticate("Ana", PASSWORD, "10.2.0.9")   # even the right one
    assert refused.value.code == ErrorCode.LOGIN_THROTTLED
    first = refused.value.details["retry_after_ms"]  # type: ignore[index]
    assert 0 < first <= 2000
    # After the wait (forced here by moving the deadline), one more try doubles it.
    key = accounts.store.fails_key("a", "ana")
    await accounts.store.store.redis.hset(key, "until", 0)
    with pytest.raises(CommandError):
        await accounts.authenticate("Ana", "wrong", "10.2.0.10")
    with pytest.raises(CommandError) as again:
        await accounts.authenticate("Ana", PASSWORD, "10.2.0.11")
    assert again.value.details["retry_after_ms"] > first  # type: ignore[index]


async def test_a_success_forgets_the_account_s_attempts(accounts: Accounts) -> None:
    await accounts.register("p1", "Ana", PASSWORD)
    for _ in range(2):
        with pytest.raises(CommandError):
            await accounts.authenticate("Ana", "wrong", "10.3.0.1")
    await accounts.authenticate("Ana", PASSWORD, "10.3.0.1")
    for _ in range(2):
        with pytest.raises(CommandError) as refused:
            await accounts.authenticate("Ana", "wrong", "10.3.0.1")
        assert refused.value.code == ErrorCode.BAD_CREDENTIALS


async def test_attempts_per_address_across_names(accounts: Accounts) -> None:
    """Guessing many names from one address is slowed too (10 free in the test policy)."""
    for i in range(10):
        with pytest.raises(CommandError) as refused:
            await accounts.authenticate(f"name{i}", "wrong", "10.4.0.1")
        assert refused.value.code == ErrorCode.BAD_CREDENTIALS
    with pytest.raises(CommandError) as refused:
        await accounts.authenticate("other", "wrong", "10.4.0.1")
    assert refused.value.code == ErrorCode.LOGIN_THROTTLED
    with pytest.raises(CommandError) as elsewhere:
        await accounts.authenticate("other", "wrong", "10.4.0.2")
    assert elsewhere.value.code == ErrorCode.BAD_CREDENTIALS


async def test_attempts_sent_at_once_are_all_counted(accounts: Accounts) -> None:
    await accounts.register("p1", "Ana", PASSWORD)
    results = await asyncio.gather(
        *(accounts.authenticate("Ana", "wrong", f"10.5.0.{i}") for i in range(8)),
        return_exceptions=True)
    codes = [r.code for r in results if isinstance(r, CommandError)]
    assert codes.count(ErrorCode.BAD_CREDENTIALS) == 3
    assert codes.count(ErrorCode.LOGIN_THROTTLED) == 5


async def test_change_password(accounts: Accounts) -> None:
    await accounts.register("p1", "Ana", PASSWORD)
    with pytest.raises(CommandError) as refused:
        await accounts.change_password("ana", "wrong", "new password 1", "10.6.0.1")
    assert refused.value.code == ErrorCode.BAD_CREDENTIALS
    await accounts.change_password("ana", PASSWORD, "new password 1", "10.6.0.1")
    with pytest.raises(CommandError):
        await accounts.authenticate("Ana", PASSWORD, "10.6.0.1")
    assert (await accounts.authenticate("Ana", "new password 1", "10.6.0.1")).key == "ana"


async def test_stale_hashes_are_upgraded_at_login(account_store: AccountStore,
                                                  accounts: Accounts) -> None:
    from server.accounts import HashParams
    old = Hasher(HashParams(memory_kib=512, time_cost=1), workers=1)
    try:
        stored = await old.hash(PASSWORD)
    finally:
        old.close()
    await account_store.register(key="ana", name="Ana", skeleton="ana",
                                 password_hash=stored, player="p1")
    await accounts.authenticate("Ana", PASSWORD, "10.7.0.1")
    account = await account_store.account("ana")
    assert account is not None and account.hash != stored
    assert f"m={FAST.memory_kib},t={FAST.time_cost}" in account.hash


async def test_nothing_secret_in_the_store_or_the_log(
        accounts: Accounts, redis_client: aioredis.Redis, key_prefix: str,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    await accounts.register("p1", "Ana", PASSWORD)
    with pytest.raises(CommandError):
        await accounts.authenticate("Ana", "wrong secret words", "10.8.0.1")
    with pytest.raises(CommandError):
        await accounts.authenticate("my secret typed as name", "x", "10.8.0.1")
    dump = b""
    async for key in redis_client.scan_iter(match=f"{key_prefix}*"):
        dump += key
        kind = await redis_client.type(key)
        if kind == b"hash":
            for k, v in (await redis_client.hgetall(key)).items():
                dump += k + v
    assert PASSWORD.encode() not in dump and b"wrong secret" not in dump
    assert b"$argon2id$" in dump
    logged = caplog.text
    for secret in (PASSWORD, "wrong secret words", "my secret typed as name", "$argon2"):
        assert secret not in logged
    assert "login refused from 10.8.0.1" in logged


async def test_hashing_is_off_the_loop(hasher: Hasher) -> None:
    """While hashes run, the loop keeps ticking (argon2-cffi releases the GIL)."""
    from server.accounts import HashParams
    slow = Hasher(HashParams(memory_kib=8 * 1024, time_cost=3), workers=2)
    try:
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.001)
                ticks += 1
        ticker = asyncio.get_running_loop().create_task(tick())
        await asyncio.gather(*(slow.hash("pw") for _ in range(6)))
        ticker.cancel()
        assert ticks >= 5
    finally:
        slow.close()


async def test_the_hash_queue_is_bounded() -> None:
    from server.accounts import HasherBusy
    h = Hasher(FAST, workers=1, queue=2)
    try:
        results = await asyncio.gather(*(h.hash("pw") for _ in range(6)),
                                       return_exceptions=True)
        assert sum(isinstance(r, HasherBusy) for r in results) == 3
    finally:
        h.close()


async def test_which_players_have_accounts(accounts: Accounts) -> None:
    """The interface other code reads (issue 27 part B): a player id's account, if any."""
    await accounts.register("p1", "Ana", PASSWORD)
    await accounts.register("p3", "Cy", PASSWORD)
    assert await accounts.store.accounts_of(["p1", "p2", "p3"]) == {"p1": "ana", "p3": "cy"}
    assert await accounts.store.accounts_of([]) == {}
