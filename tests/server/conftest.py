"""Fixtures that start a real server on 127.0.0.1 against the test Redis."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import Any

import pytest

from server.app import Running, running
from server.config import Settings

from .netclient import NetClient


def server_settings(redis_url: str, key_prefix: str, **over: Any) -> Settings:
    # Admission control off (busy_lag_ms=0): a test must not depend on how loaded the
    # machine running it is; tests/server/test_admission.py turns it on and saturates the
    # loop itself.
    base = Settings(host="127.0.0.1", port=0, redis_url=redis_url, key_prefix=key_prefix,
                    hello_timeout_s=5, sweep_interval_s=3600, bot_workers=0, busy_lag_ms=0)
    return replace(base, **over)


@pytest.fixture
async def server(redis_url: str, key_prefix: str, redis_client: Any) -> AsyncIterator[Running]:
    async with running(server_settings(redis_url, key_prefix)) as srv:
        yield srv


@pytest.fixture
def url(server: Running) -> str:
    return f"ws://127.0.0.1:{server.port}"


@pytest.fixture
async def connect(url: str) -> AsyncIterator[Callable[..., Any]]:
    clients: list[NetClient] = []

    async def make(name: str = "tester", **kw: Any) -> NetClient:
        client = await NetClient.open(url, name, **kw)
        clients.append(client)
        return client

    yield make
    for c in clients:
        await c.close()
