"""One server per data directory; a crashed owner's store never outlives it or its port.

Issue 10, finding 4: a second server on the same data directory took over the first one's
store (and stopping it deleted the first one's pid file); after a SIGKILL the restart
reused the old port, so whoever took that port meanwhile received the server's writes.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from server.store import DataDirInUse, StorageConfig, open_storage
from server.store.embedded import PIDFILE
from server.store.lock import LOCK_FILE
from tests.store.runtime_kit import Owner, Stranger, alive, store_pids_on, wait_gone


async def test_second_server_on_the_same_data_dir_is_refused_and_the_first_keeps_working(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    owner = await Owner.start("--data-dir", str(data))
    try:
        assert (await owner.call("create t1"))["ok"]
        files_before = {p.name: p.read_bytes() for p in data.iterdir() if p.is_file()}

        with pytest.raises(DataDirInUse) as info:
            async with open_storage(StorageConfig(data_dir=data)):
                pytest.fail("a second storage opened on a locked data directory")
        message = str(info.value)
        assert f"pid {owner.pid}" in message and str(data) in message
        assert "\n" not in message
        assert info.value.pid == owner.pid

        # The refused attempt touched nothing: same store process, same files.
        assert store_pids_on(data) == [owner.store_pid]
        files_after = {p.name: p.read_bytes() for p in data.iterdir() if p.is_file()}
        assert files_after == files_before
        assert (data / PIDFILE).read_text().split()[0] == str(owner.store_pid)
        assert (data / LOCK_FILE).read_text().strip() == str(owner.pid)
        # ... and the first server still works.
        assert (await owner.call("create t2"))["ok"]
        assert (await owner.call("check"))["ok"] is True
        assert await owner.quit() == 0
    finally:
        await owner.ensure_gone()

    # Once the owner has stopped, the directory is free, with both tables in it.
    async with open_storage(StorageConfig(data_dir=data)) as storage:
        assert await storage.store.table_ids() == ["t1", "t2"]


async def test_a_sigkilled_owner_takes_its_store_along_and_the_restart_never_dials_its_port(
    tmp_path: Path,
) -> None:
    """The store dies with its owner (PR_SET_PDEATHSIG); the next start gets a new port, so
    a stranger listening on the old one receives nothing; the data is intact."""
    data = tmp_path / "data"
    owner = await Owner.start("--data-dir", str(data))
    stranger = Stranger()
    try:
        assert (await owner.call("create t1"))["ok"]   # acknowledged, so it must survive
        old_port, old_store = owner.port, owner.store_pid
        await owner.kill()
        assert await wait_gone(old_store, timeout=20), "the store outlived its owner"
        await stranger.listen(old_port)

        async with open_storage(StorageConfig(data_dir=data)) as storage:
            assert storage.embedded is not None
            assert storage.embedded.port != old_port
            assert await storage.store.load_table("t1") == (1, b"doc-t1", [])
            await storage.store.create_table("t2", b"doc-t2")
            assert await storage.check() is True
            assert store_pids_on(data) == [storage.embedded.pid]
        assert stranger.connections == 0
        assert store_pids_on(data) == []
    finally:
        await stranger.close()
        await owner.ensure_gone()


@pytest.mark.skipif(not Path("/proc/self/cwd").exists(), reason="needs /proc")
async def test_an_orphaned_store_is_stopped_before_the_new_one_starts(tmp_path: Path) -> None:
    """Without PR_SET_PDEATHSIG (another OS; a store started by an older version) the
    store survives its SIGKILLed owner; the next start stops it, checked to be ours on our
    data directory, before starting a new one on the same files."""
    data = tmp_path / "data"
    owner = await Owner.start("--data-dir", str(data), "--no-pdeathsig")
    try:
        assert (await owner.call("create t1"))["ok"]
        orphan = owner.store_pid
        await owner.kill()
        assert alive(orphan), "the test needs a real orphan"

        async with open_storage(StorageConfig(data_dir=data)) as storage:
            assert not alive(orphan)
            assert storage.embedded is not None
            assert store_pids_on(data) == [storage.embedded.pid]
            assert storage.embedded.port != owner.port
            assert await storage.store.load_table("t1") == (1, b"doc-t1", [])
    finally:
        await owner.ensure_gone()


async def test_an_orphan_on_another_data_dir_is_left_alone(tmp_path: Path) -> None:
    """Orphan hunting only ever signals a store running in *our* data directory."""
    other = await Owner.start("--data-dir", str(tmp_path / "other"), "--no-pdeathsig")
    try:
        await other.kill()
        survivor = other.store_pid
        assert alive(survivor)
        async with open_storage(StorageConfig(data_dir=tmp_path / "data")):
            assert alive(survivor)
    finally:
        await other.ensure_gone()
        # clean up the other directory's orphan the way the product would: by starting
        # (and stopping) a storage on its own directory
        async with open_storage(StorageConfig(data_dir=tmp_path / "other")):
            pass
        assert not alive(survivor)


async def test_the_lock_is_released_on_a_clean_stop(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with open_storage(StorageConfig(data_dir=data)) as storage:
        await storage.store.create_table("t", b"d")
    async with open_storage(StorageConfig(data_dir=data)) as storage:
        assert await storage.store.load_table("t") == (1, b"d", [])


async def test_only_a_store_is_ever_signalled_not_a_recycled_pid(tmp_path: Path) -> None:
    """The pid file names a process that is not a store (the pid was recycled), running in
    the data directory even: it is left alone, and its port is not reused."""
    data = tmp_path / "data"
    data.mkdir()
    bystander = await asyncio.create_subprocess_exec("sleep", "60", cwd=data)
    try:
        (data / PIDFILE).write_text(f"{bystander.pid} 1\n")
        async with open_storage(StorageConfig(data_dir=data)) as storage:
            assert bystander.returncode is None and alive(bystander.pid)
            assert storage.embedded is not None and storage.embedded.port != 1
    finally:
        bystander.kill()
        await bystander.wait()
