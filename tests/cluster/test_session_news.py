"""Session news between two real server processes on one store (server/session_news.py).

A ``hello`` that takes a session over on one process ends the session's connection on the
other at once (4009), not at that connection's next command (issue 30, the hello race
across processes); ``logout_all`` on one process ends the account's connections on the
other at once (4002), not at the other's next poll of the store (issue 27). The poll is
set to a minute here, so only the news can explain a close within seconds.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from tests.server.netclient import NetClient
from tests.server.test_health import http_get

from .conftest import Fleet

PASSWORD = "correct horse battery"


@pytest.fixture
async def two(fleet: Fleet, redis_client: Any) -> Fleet:
    """Two processes that see each other, the revoked-session poll a minute apart."""
    for _ in range(2):
        await fleet.start("--revoke-check", "60")
    deadline = time.monotonic() + 15
    for port in fleet.ports:
        while (await http_get(port, "/healthz"))[1]["cluster"]["processes"] < 2:
            assert time.monotonic() < deadline, "the processes never saw each other"
            await asyncio.sleep(0.1)
    return fleet


async def closed_with(client: NetClient, seconds: float) -> int | None:
    async with asyncio.timeout(seconds):
        await client.closed.wait()
    return client.ws.close_code


async def test_a_session_taken_over_on_another_process_ends_there_at_once(two: Fleet) -> None:
    fleet = two
    first = await NetClient.open(fleet.url(0), "Ana")
    try:
        token = first.welcome["session"]
        await first.call("list_tables")           # the welcome's token is confirmed
        second = await NetClient.open(fleet.url(1), "Ana", token=token)
        try:
            assert second.welcome["player_id"] == first.welcome["player_id"]
            # The first connection never sends again: it is closed all the same.
            assert await closed_with(first, 5) == 4009
            assert (await second.call("list_tables"))["seats"] == []
            assert not second.closed.is_set()
        finally:
            await second.close()
    finally:
        await first.close()


async def test_logout_everywhere_ends_the_accounts_connections_on_other_processes(
        two: Fleet) -> None:
    fleet = two
    phone = await NetClient.open(fleet.url(0), "Ana")
    laptop = await NetClient.open(fleet.url(1), "Laptop")
    try:
        await phone.call("register", name="Ana", password=PASSWORD)
        await laptop.call("login", name="Ana", password=PASSWORD)
        started = time.monotonic()
        await laptop.call("logout_all")
        assert await closed_with(phone, 5) == 4002
        assert time.monotonic() - started < 5      # the poll would take a minute
    finally:
        await phone.close()
        await laptop.close()
