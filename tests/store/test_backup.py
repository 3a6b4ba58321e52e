"""Back up a running store, restore it into a fresh one, and play on (issue 30, item 2).

The round trips run the real commands (``aluette-server backup FILE`` / ``restore FILE``)
against real server processes: mid-match, the backup is taken while the server runs, the
server is stopped, the backup is restored into a fresh store (a new embedded data
directory; a real Redis under a new key prefix), a server starts on it, and the four
players reconnect, resume and finish the match: the record holds exactly the cards that
were acknowledged to them (0 acknowledged moves lost).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from server.store.backup import BackupError, HashKey, StringKey, backup, read_backup, restore
from tests.durability.conftest import ServerProcess, free_port, reconnect
from tests.durability.test_restart import plays_by_seat, start_four
from tests.server.players import autoplay

REAL_REDIS = os.environ.get("ALUETTE_TEST_REAL_REDIS", "redis://127.0.0.1:6379/0")


async def tool(*args: str) -> dict:
    """Run ``aluette-server backup|restore ...``; its JSON summary."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "server.app", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()
    return json.loads(out.decode().strip().splitlines()[-1])


async def play_backup_restore_finish(source: list[str], target: list[str],
                                     backup_file: Path) -> dict:
    """Play into the match, back up while the server runs, stop it, restore into
    ``target``, start a server there, resume and finish; returns the backup's summary."""
    port = free_port()
    first = ServerProcess(["--port", str(port), "--bot-workers", "0", *source])
    await first.start()
    url = f"ws://127.0.0.1:{port}"
    table, clients = await start_four(url)
    try:
        await asyncio.gather(*(autoplay(c, table, i, max_plays=4)
                               for i, c in enumerate(clients)))
        summary = await tool("backup", str(backup_file), *source)   # the server runs
        assert summary["tables"] >= 1 and summary["keys"] > 0
    finally:
        assert await first.terminate() == 0
    for c in clients:
        await asyncio.wait_for(c.closed.wait(), 10)

    restored = await tool("restore", str(backup_file), *target)
    assert restored["keys"] == summary["keys"] - restored["expired_skipped"]
    assert restored["tables"] == summary["tables"]
    port2 = free_port()
    second = ServerProcess(["--port", str(port2), "--bot-workers", "0", *target])
    await second.start()
    try:
        url2 = f"ws://127.0.0.1:{port2}"
        back = [await reconnect(c, url2) for c in clients]   # old tokens, old sequences
        for i, b in enumerate(back):
            b.acked = list(clients[i].acked)
        results = await asyncio.gather(*(autoplay(b, table, i) for i, b in enumerate(back)))
        record = results[0]["record"]
        by_seat = plays_by_seat(record)
        for i, b in enumerate(back):
            assert by_seat[i] == b.acked          # every acknowledged card, in order
        assert sum(len(v) for v in by_seat.values()) == 72
        for b in back:
            await b.close()
    finally:
        assert await second.terminate() == 0
    return summary


async def test_embedded_store_backed_up_while_running_restores_into_a_fresh_data_dir(
        tmp_path):
    await play_backup_restore_finish(["--data-dir", str(tmp_path / "a")],
                                     ["--data-dir", str(tmp_path / "b")],
                                     tmp_path / "aluette.backup")


@pytest.fixture
async def real_redis_prefix():
    """A key prefix of our own on the real Redis; only its keys are deleted after."""
    client = aioredis.from_url(REAL_REDIS)
    try:
        await client.ping()
    except Exception:
        await client.aclose()
        pytest.skip(f"no Redis at {REAL_REDIS}")
    prefix = f"aluette-test-{uuid.uuid4().hex[:12]}"
    try:
        yield prefix
    finally:
        async for key in client.scan_iter(match=f"{prefix}:*", count=500):
            await client.delete(key)
        await client.aclose()


async def test_a_backup_restores_into_a_real_redis_under_a_new_prefix(
        redis_url, key_prefix, redis_client, real_redis_prefix, tmp_path):
    """From the test store (Valkey) to a real Redis 7: the logical format crosses servers
    and versions that DUMP/RESTORE payloads cannot."""
    await play_backup_restore_finish(
        ["--redis-url", redis_url, "--key-prefix", key_prefix],
        ["--redis-url", REAL_REDIS, "--key-prefix", real_redis_prefix],
        tmp_path / "aluette.backup")
    # Expiries are kept as the moments they were: a session still expires when it would
    # have, on the old store as on the new one.
    target = aioredis.from_url(REAL_REDIS)
    try:
        sessions = [k async for k in
                    target.scan_iter(match=f"{real_redis_prefix}:{{pl:*}}:session")]
        assert len(sessions) == 4
        for key in sessions:
            assert await target.pttl(key) > 0
        assert not [k async for k in target.scan_iter(match=f"{real_redis_prefix}:*:lease")]
    finally:
        await target.aclose()


async def test_expiries_ephemeral_keys_and_a_damaged_file(redis_client, key_prefix, tmp_path):
    r = redis_client
    p = key_prefix
    await r.set(f"{p}:{{t:x}}:record", b"rec", px=600_000)
    await r.hset(f"{p}:{{t:x}}:doc", mapping={"version": 3, "doc": b"\x00\xff"})
    await r.rpush(f"{p}:{{t:x}}:log", b"a", b"b")
    await r.sadd(f"{p}:tables", "x")
    await r.zadd(f"{p}:records", {"x": 1e18})
    await r.set(f"{p}:{{t:x}}:lease", b"proc", px=3000)          # a process's, not the game's
    await r.hset(f"{p}:{{t:x}}:present", mapping={"proc|pl": 1})
    await r.set(f"{p}:store-identity", b"0" * 32)
    await r.set(f"{p}:{{pl:y}}:session", b"s", px=900)            # gone before the restore
    path = tmp_path / "b"
    summary = await backup(r, p, path)
    assert summary.keys == 6 and summary.tables == 1
    _header, entries = read_backup(path)
    names = {e.name: e for e in entries}
    assert set(names) == {"{t:x}:record", "{t:x}:doc", "{t:x}:log", "tables", "records",
                          "{pl:y}:session"}
    assert isinstance(names["{t:x}:doc"], HashKey)
    record = names["{t:x}:record"]
    assert isinstance(record, StringKey) and record.expire_at_ms > 0

    other = f"{p}-restored"
    try:
        with pytest.raises(BackupError, match="already holds"):
            await restore(r, p, path)                 # not a fresh store
        done = await restore(r, other, path)
        assert done.keys == 5 and done.expired_skipped == 1    # the session had < 1 s left
        assert await r.hgetall(f"{other}:{{t:x}}:doc") == {b"version": b"3", b"doc": b"\x00\xff"}
        assert await r.lrange(f"{other}:{{t:x}}:log", 0, -1) == [b"a", b"b"]
        assert 590_000 < await r.pttl(f"{other}:{{t:x}}:record") <= 600_000
        assert await r.pttl(f"{other}:{{t:x}}:doc") == -1
        assert await r.exists(f"{other}:{{t:x}}:lease", f"{other}:store-identity") == 0

        whole = path.read_bytes()
        data = bytearray(whole)
        data[len(data) // 2] ^= 0xFF
        path.write_bytes(bytes(data))
        with pytest.raises(BackupError):
            read_backup(path)
        path.write_bytes(whole[: len(whole) - 10])
        with pytest.raises(BackupError, match="cut short"):
            read_backup(path)
    finally:
        async for key in r.scan_iter(match=f"{other}:*"):
            await r.delete(key)
