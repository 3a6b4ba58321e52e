"""Store fixtures on top of tests/conftest.py: a ``Store`` on the shared server."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

from server.store import Store, connect


@pytest.fixture
async def store(
    redis_url: str, key_prefix: str, redis_client: aioredis.Redis
) -> AsyncIterator[Store]:
    """A Store built the way the server builds it (``connect``), under this test's prefix.

    Depending on ``redis_client`` makes its teardown delete every key under the prefix.
    """
    client = await connect(redis_url)
    try:
        yield Store(client, key_prefix)
    finally:
        await client.aclose()
