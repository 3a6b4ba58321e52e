"""The key layout and every script on a real Redis Cluster of three masters (issue 11).

Three ``redis-server --cluster-enabled yes`` processes on 127.0.0.1, joined with
``redis-cli --cluster create``; skipped, with the reason, where the binaries are missing.
Each table's keys hash to one slot (so its scripts run there), and its events travel on
its sharded channel (SPUBLISH from the commit script, SSUBSCRIBE by the other processes).
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator

import msgpack
import pytest
from redis.asyncio.cluster import RedisCluster
from redis.crc import key_slot

from protocol import TableOptions
from server.players.accounts import SessionAccounts
from server.store import Store, hash_token
from server.store.history import HistoryStore, StoredMatch, StoredSeat

from .store_kit import check_presence_batches

pytestmark = pytest.mark.skipif(
    shutil.which("redis-server") is None or shutil.which("redis-cli") is None,
    reason="a Redis Cluster needs the redis-server and redis-cli binaries (not found)")


def _ports(n: int) -> list[int]:
    """Free ports whose cluster bus port (+10000) is free too."""
    out: list[int] = []
    while len(out) < n:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port + 10000 < 65536 and port not in out:
            try:
                with socket.socket() as s:
                    s.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
            out.append(port)
    return out


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[int]]:
    base = tmp_path_factory.mktemp("cluster")
    ports = _ports(3)
    procs = []
    for port in ports:
        d = base / str(port)
        d.mkdir()
        procs.append(subprocess.Popen(
            ["redis-server", "--port", str(port), "--bind", "127.0.0.1",
             "--cluster-enabled", "yes", "--cluster-config-file", str(d / "nodes.conf"),
             "--dir", str(d), "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    try:
        for port in ports:
            deadline = time.monotonic() + 20
            while subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True,
                                 check=False).stdout.strip() != b"PONG":
                assert time.monotonic() < deadline, f"redis-server on {port} did not start"
                time.sleep(0.05)  # waiting on another process's readiness
        subprocess.run(["redis-cli", "--cluster", "create",
                        *[f"127.0.0.1:{p}" for p in ports], "--cluster-replicas", "0",
                        "--cluster-yes"], check=True, capture_output=True, timeout=60)
        deadline = time.monotonic() + 30
        while b"cluster_state:ok" not in subprocess.run(
                ["redis-cli", "-p", str(ports[0]), "cluster", "info"],
                capture_output=True, check=False).stdout:
            assert time.monotonic() < deadline, "the cluster did not come up"
            time.sleep(0.1)  # waiting on the cluster's own convergence
        yield ports
    finally:
        for p in procs:
            p.terminate()
            p.wait(10)


@pytest.fixture
async def store(cluster: list[int], key_prefix: str) -> AsyncIterator[Store]:
    client = RedisCluster(host="127.0.0.1", port=cluster[0])
    await client.initialize()
    try:
        yield Store(client, key_prefix)      # type: ignore[arg-type]
    finally:
        await client.aclose()


def _slots(store: Store, table: str) -> set[int]:
    k = store.keys
    return {key_slot(key.encode()) for key in (
        k.doc(table), k.log(table), k.record(table), k.replies(table, "p1"), k.events(table),
        k.lease(table), k.present(table))}


async def test_every_table_key_and_script_works_on_three_masters(store: Store) -> None:
    tables = [f"t{i}" for i in range(12)]       # spread over the three masters' slots
    for tid in tables:
        assert len(_slots(store, tid)) == 1
        assert await store.create_table(tid, b"v1", [(1, b"e1")], info=b"i1") == 1
        assert await store.commit(tid, 1, b"v2", [(2, b"e2")], reply=("p1", b"r"),
                                  record=b"rec", record_match=1, info=b"i2",
                                  publish=b"msg") == 2
        assert await store.read_log(tid, 0) == [(1, b"e1"), (2, b"e2")]
        assert await store.load_replies(tid, "p1") == [b"r"]
        assert await store.load_record(tid) == b"rec"
        assert await store.load_table_if_newer(tid, 2) == 2         # issue 32: no document
        assert await store.load_table_if_newer(tid, 1) == (2, b"v2", [])
    assert sorted(await store.table_ids()) == sorted(tables)
    assert await store.lobby_infos(tables) == {tid: b"i2" for tid in tables}
    # issue 32: the lobby's changes, two keys of one slot, counted once per table
    assert key_slot(store.keys.lobby_changes.encode()) == key_slot(
        store.keys.lobby_clock.encode())
    seq, changed = await store.lobby_changes(0)
    assert seq == 2 * len(tables) and sorted(changed or []) == sorted(tables)
    # leases and presence
    assert await store.take_lease("t0", "proc-a", None, 60)
    assert not await store.take_lease("t0", "proc-b", None, 60)      # held
    assert await store.lease_holders(["t0", "t1"], refresh_ttl_s=60) == ["proc-a", None]
    assert await store.take_lease("t0", "proc-b", "proc-a", 60)      # from a dead holder
    await store.release_lease("t0", "proc-a")                        # not its any more
    assert await store.lease_holders(["t0"]) == ["proc-b"]
    assert await store.presence("t0", "proc-a|p1", 1, 60) == 1
    assert await store.present("t0") == {"proc-a|p1": 1}
    await store.heartbeat("proc-a", time.time())
    assert await store.live_processes(time.time() - 5) == ["proc-a"]
    # sessions: one key, one slot
    await store.new_session("p1", "Ana", hash_token("a"), 60)
    assert await store.resume_session("p1", hash_token("a"), hash_token("b"), grace_s=5,
                                      ttl_s=60) == "Ana"
    assert await store.confirm_session("p1", hash_token("b"), 60)
    await store.delete_table("t5")
    assert await store.load_table("t5") is None


async def test_events_travel_on_the_tables_sharded_channel(store: Store) -> None:
    tid = "tpub"
    await store.create_table(tid, b"v1")
    pubsub = store.redis.pubsub()
    try:
        await pubsub.ssubscribe(store.keys.events(tid))
        message = msgpack.packb(["proc", 2, b"doc", [], 0.0])
        await store.commit(tid, 1, b"v2", publish=message)
        async with asyncio.timeout(10):
            while True:
                got = await pubsub.get_sharded_message(ignore_subscribe_messages=True,
                                                       timeout=0.5)
                if got is not None:
                    break
        assert got["data"] == message
    finally:
        await pubsub.aclose()


async def test_presence_batches_on_three_masters(store: Store) -> None:
    async def ttl_of(table: str) -> int:
        return int(await store.redis.ttl(store.keys.present(table)))
    await check_presence_batches(store, ttl_of)


async def test_history_is_kept_once_by_its_script_on_three_masters(store: Store) -> None:
    """Issue 32: a match that rates nobody is kept by one script, which writes keys it
    does not declare (all in the history's one hash slot): a Cluster runs it too."""
    seats = [StoredSeat(seat=s, name=f"N{s}", player=f"p{s}", account=f"a{s}")
             for s in range(4)]
    match = StoredMatch(table="t", match=1, finished_at=time.time(), private=False,
                        rated=False, result="team1", points=[1, 3], options=TableOptions(),
                        seats=seats)
    history = HistoryStore(store)
    assert await history.record(match) is not None
    assert await history.record(match) is None                  # kept once
    page, _ = await history.page(account="a1", limit=5)
    assert [m.id for m in page] == ["t:1"]
    stats = await history.stats("a1")
    assert stats is not None and stats["played"] == "1" and stats["won"] == "1"


async def test_a_tables_accounts_are_read_together_on_three_masters(store: Store) -> None:
    """Issue 32: the players' accounts hash and each session's field, in other slots, are
    read by commands sent together (one write on one node, routed by key here)."""
    accounts = SessionAccounts(store)
    await store.redis.hset(accounts.players_key, "p1", "acct-1")
    await store.redis.hset(store.keys.session("p2"), "account", "acct-2")
    assert await accounts.of(["p1", "p2", "p3", "p1"]) == {
        "p1": "acct-1", "p2": "acct-2", "p3": None}
