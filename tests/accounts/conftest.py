"""Account fixtures: a real store (tests/conftest.py's Valkey) and a fast hasher."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
import redis.asyncio as aioredis

from server.accounts import Accounts, Hasher, HashParams, LoginPolicy
from server.store import Store, connect
from server.store.accounts import AccountStore, Limit

#: Argon2id still, but small: these tests are about behaviour, bench/login.py about cost.
FAST = HashParams(memory_kib=1024, time_cost=1)


@pytest.fixture
def hasher() -> Iterator[Hasher]:
    h = Hasher(FAST, workers=2, queue=8)
    try:
        yield h
    finally:
        h.close()


@pytest.fixture
async def account_store(redis_url: str, key_prefix: str,
                        redis_client: aioredis.Redis) -> AsyncIterator[AccountStore]:
    client = await connect(redis_url)
    try:
        yield AccountStore(Store(client, key_prefix))
    finally:
        await client.aclose()


@pytest.fixture
def accounts(account_store: AccountStore, hasher: Hasher) -> Accounts:
    return Accounts(account_store, hasher,
                    LoginPolicy(per_account=Limit(3, 1000, 60_000),
                                per_address=Limit(10, 1000, 60_000), window_s=600))
