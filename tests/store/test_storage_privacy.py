"""The embedded store's password and the data directory's privacy (issue 10, finding 4).

Before: the store answered anyone on 127.0.0.1 without a password, and its append-only
files (seeds, hands, talon) were world-readable.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import AuthenticationError, ResponseError

from server.store import EmbeddedStoreError, StorageConfig, open_storage
from server.store.client import redact_url
from server.store.datadir import PASSWORD_FILE, tighten_modes
from server.store.embedded import CONFIG_FILE, LOG_FILE
from tests.store.runtime_kit import modes_under, proc_file, wait_gone, wait_until


def _raw(port: int, payload: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(payload)
        return sock.recv(256)


async def test_the_store_requires_its_password_which_never_reaches_a_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    data = tmp_path / "data"
    async with open_storage(StorageConfig(data_dir=data)) as storage:
        emb = storage.embedded
        assert emb is not None
        password = (data / PASSWORD_FILE).read_text().strip()
        assert len(password) >= 32

        # Unauthenticated clients are refused, by a raw PING and by a real client.
        assert _raw(emb.port, b"*1\r\n$4\r\nPING\r\n").startswith(b"-NOAUTH")
        no_retry = Retry(NoBackoff(), 0)
        anonymous = aioredis.Redis(host="127.0.0.1", port=emb.port, retry=no_retry)
        try:
            # (NOAUTH with RESP2; with RESP3 the HELLO itself is refused)
            with pytest.raises((ResponseError, AuthenticationError), match=r"(?i)auth"):
                await anonymous.get(b"aluette:store-identity")
        finally:
            await anonymous.aclose()
        wrong = aioredis.Redis(host="127.0.0.1", port=emb.port, password="0" * 64,
                               retry=no_retry)
        try:
            with pytest.raises(AuthenticationError):
                await wrong.ping()
        finally:
            await wrong.aclose()

        # Exercise the paths that log addresses: a write, a store crash and restart.
        await storage.store.create_table("t", b"d")
        old_pid = emb.pid
        assert old_pid is not None
        os.kill(old_pid, signal.SIGKILL)
        assert await wait_gone(old_pid, timeout=20)
        await wait_until(lambda: storage.restarts == 1, timeout=30)
        assert await storage.store.load_table("t") == (1, b"d", [])

        new_pid = emb.pid
        assert new_pid is not None
        # The password is in the 0600 config file, not on the command line or in the
        # environment, which other local users can read in /proc.
        cmdline = proc_file(new_pid, "cmdline")
        assert password.encode() not in cmdline
        assert CONFIG_FILE.encode() in cmdline
        environ = proc_file(new_pid, "environ")
        assert password.encode() not in environ

        assert password not in storage.url_for_logs()
        assert password not in repr(storage.status())
        assert password not in repr(storage.store.redis)
    assert caplog.records, "the runtime logs its start and restart"
    assert password not in caplog.text
    assert password.encode() not in (data / LOG_FILE).read_bytes()


async def test_data_dir_is_0700_and_every_file_0600_including_an_old_dir(
    tmp_path: Path,
) -> None:
    """A data directory written by an older version (0755, 0644 files) is fixed on start;
    everything the store writes itself (append-only files) is born private."""
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    os.chmod(data, 0o755)
    old_file = data / "valkey.log"
    old_file.write_text("old log\n")
    os.chmod(old_file, 0o644)
    nested = data / "old-stuff"
    nested.mkdir()
    os.chmod(nested, 0o755)
    (nested / "notes").write_text("x")
    os.chmod(nested / "notes", 0o664)

    async with open_storage(StorageConfig(data_dir=data)) as storage:
        await storage.store.create_table("t", b"hand and talon")
        await storage.store.save_record("t", b"record")
        modes = modes_under(data)
    assert "appendonlydir" in modes and any(k.endswith(".aof") for k in modes)
    assert {PASSWORD_FILE, CONFIG_FILE, "store-identity", "aluette.lock"} <= set(modes)
    wrong = {
        name: oct(mode) for name, mode in modes.items()
        if mode != (0o700 if (data / name).is_dir() else 0o600)
    }
    assert wrong == {}


def test_redact_url_hides_every_password() -> None:
    assert redact_url("redis://:s3cret@db.example:6380/2") == "redis://:***@db.example:6380/2"
    assert redact_url("rediss://user:s3cret@h/0") == "rediss://user:***@h/0"
    assert "s3cret" not in redact_url("redis://h:1/0?password=s3cret&db=1")
    assert redact_url("redis://127.0.0.1:6379") == "redis://127.0.0.1:6379"
    assert redact_url("unix:///run/redis.sock?db=1") == "unix:///run/redis.sock?db=1"
    assert "s3cret" not in redact_url("unix://:s3cret@/run/redis.sock")


def test_tightening_keeps_the_owner_bits_of_a_stray_file(tmp_path: Path) -> None:
    """A data directory pointed by mistake at a directory of scripts makes them private
    without making them unusable for their owner."""
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\n")
    os.chmod(script, 0o755)
    assert tighten_modes(tmp_path) == []
    assert modes_under(tmp_path)["run.sh"] == 0o700


async def test_an_unusable_data_dir_is_one_clear_line(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a directory")
    with pytest.raises(EmbeddedStoreError) as info:
        async with open_storage(StorageConfig(data_dir=tmp_path / "file" / "data")):
            pytest.fail("started in a data directory that cannot exist")
    message = str(info.value)
    assert "\n" not in message and str(tmp_path / "file" / "data") in message
