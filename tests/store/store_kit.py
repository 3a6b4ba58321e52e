"""Helpers shared by the store tests (fixtures live in conftest.py)."""

from __future__ import annotations

import redis.asyncio as aioredis


async def all_keys(client: aioredis.Redis, match: str = "*") -> list[bytes]:
    """Every key matching ``match`` (SCAN, so it is safe on a shared server)."""
    return [key async for key in client.scan_iter(match=match, count=500)]
