"""A store that dies under a running server is restarted on a new port, never searched for
on its old one (issue 10, finding 4: the server kept reconnecting to the dead store's port,
and another server's store that took it received its acknowledged writes)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from redis.commands.core import AsyncScript

from server.store import StorageConfig, StorageUnavailable, Store, connect, open_storage
from server.store.datadir import PASSWORD_FILE
from tests.store.runtime_kit import Stranger, store_pids_on, wait_gone, wait_until


async def test_a_killed_store_is_restarted_on_a_new_port_and_writes_go_on(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    stranger = Stranger()
    try:
        async with open_storage(StorageConfig(data_dir=data)) as storage:
            emb = storage.embedded
            assert emb is not None and emb.pid is not None
            store = storage.store
            await store.create_table("t", b"v1")
            old_port, old_pid, old_client = emb.port, emb.pid, store.redis

            os.kill(old_pid, signal.SIGKILL)
            assert await wait_gone(old_pid, timeout=20)
            await stranger.listen(old_port)  # someone takes the dead store's port at once
            # Calls made meanwhile fail as an outage (or already succeed on the new store)
            # and never go to the old port.
            for _ in range(3):
                with contextlib.suppress(StorageUnavailable):
                    await store.load_table("t")

            await wait_until(lambda: storage.restarts == 1, timeout=30)
            assert storage.store is store          # the same Store, rebound
            assert store.redis is not old_client
            assert emb.port != old_port
            assert store_pids_on(data) == [emb.pid]
            assert await store.commit("t", 1, b"v2", [(1, b"e1")]) == 2
            assert await store.read_log("t", 0) == [(1, b"e1")]
            assert await storage.check() is True
            assert storage.status()["restarts"] == 1
            with pytest.raises(StorageUnavailable):  # the old client may not dial either
                await Store(old_client).load_table("t")
        assert stranger.connections == 0
    finally:
        await stranger.close()


async def test_a_failed_restart_is_logged_and_retried(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """While the store cannot start (its password file is unreadable), the supervisor
    logs each failure and tries again with backoff; once fixed, the store comes back."""
    caplog.set_level(logging.ERROR, logger="server.store")
    data = tmp_path / "data"
    async with open_storage(StorageConfig(data_dir=data)) as storage:
        emb = storage.embedded
        assert emb is not None and emb.pid is not None
        await storage.store.create_table("t", b"v1")
        password_file = data / PASSWORD_FILE
        good = password_file.read_bytes()
        password_file.write_text("not a password\n")
        os.kill(emb.pid, signal.SIGKILL)

        def failures() -> int:
            return sum("restarting the embedded store failed" in r.getMessage()
                       for r in caplog.records)

        await wait_until(lambda: failures() >= 2, timeout=30)
        assert storage.restarts == 0
        assert await storage.check() is False
        assert storage.status()["restarting"] or not emb.running

        password_file.write_bytes(good)
        await wait_until(lambda: storage.restarts == 1, timeout=30)
        assert await storage.store.load_table("t") == (1, b"v1", [])
        assert await storage.check() is True


async def test_closing_the_storage_stops_the_supervisor_and_the_store(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with open_storage(StorageConfig(data_dir=data)) as storage:
        assert storage.embedded is not None and storage.embedded.pid is not None
        pid = storage.embedded.pid
        supervisor = storage._supervisor
        assert supervisor is not None and not supervisor.done()
    assert supervisor.done()
    assert await wait_gone(pid, timeout=1)
    assert store_pids_on(data) == []


async def test_rebind_moves_the_store_and_every_script_to_the_new_client(
    redis_url: str, own_valkey: object, key_prefix: str, redis_client: aioredis.Redis
) -> None:
    first = await connect(redis_url)
    second = await connect(own_valkey.connection_url)  # type: ignore[attr-defined]
    try:
        store = Store(first, key_prefix)
        scripts = [name for name, v in vars(store).items() if isinstance(v, AsyncScript)]
        assert scripts, "the Store registers Lua scripts"
        beside = store.script("return 1")       # a store kept beside it (history, accounts)
        assert store.script("return 1") is beside and beside.registered_client is first
        store.rebind(second)
        assert store.redis is second
        for name in scripts:
            assert getattr(store, name).registered_client is second
        assert store.script("return 1").registered_client is second
        await store.create_table("t", b"v1")
        assert await store.commit("t", 1, b"v2", [(1, b"e")]) == 2
        assert await store.read_log("t", 0) == [(1, b"e")]
        assert await store.resume_session("p1", "a" * 64, "b" * 64, grace_s=30,
                                          ttl_s=60) is None
        assert await first.exists(f"{key_prefix}:{{t:t}}:doc") == 0   # nothing on the old one
        assert await second.exists(f"{key_prefix}:{{t:t}}:doc") == 1
    finally:
        await first.aclose()
        await second.aclose()


async def test_closing_right_after_the_store_died_leaves_no_store_behind(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    async with open_storage(StorageConfig(data_dir=data)) as storage:
        emb = storage.embedded
        assert emb is not None and emb.pid is not None
        os.kill(emb.pid, signal.SIGKILL)
        await asyncio.sleep(0)  # the supervisor may or may not have noticed: both are safe
    assert store_pids_on(data) == []
    async with open_storage(StorageConfig(data_dir=data)):  # and the lock was released
        pass


async def test_closing_while_restarts_fail_cancels_the_backoff_and_releases_the_dir(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="server.store")
    data = tmp_path / "data"
    good = b""
    async with open_storage(StorageConfig(data_dir=data)) as storage:
        emb = storage.embedded
        assert emb is not None and emb.pid is not None
        good = (data / PASSWORD_FILE).read_bytes()
        (data / PASSWORD_FILE).write_text("broken\n")
        os.kill(emb.pid, signal.SIGKILL)
        await wait_until(lambda: any("restarting the embedded store failed" in r.getMessage()
                                     for r in caplog.records), timeout=30)
        supervisor = storage._supervisor
    assert supervisor is not None and supervisor.done()
    assert store_pids_on(data) == []
    (data / PASSWORD_FILE).write_bytes(good)
    async with open_storage(StorageConfig(data_dir=data)) as storage:
        assert await storage.check() is True
