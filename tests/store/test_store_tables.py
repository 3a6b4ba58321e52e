"""Tables: create/load/commit, optimistic versioning, concurrent writers, deletion."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis

from server.store import Store, VersionConflict

from .store_kit import check_presence_batches


async def test_create_load_commit_round_trip(store: Store) -> None:
    assert await store.load_table("t1") is None
    assert await store.create_table("t1", b"v1-doc") == 1
    assert await store.load_table("t1") == (1, b"v1-doc", [])
    assert await store.commit("t1", 1, b"v2-doc", [(1, b"e1"), (2, b"e2")]) == 2
    assert await store.commit("t1", 2, b"v3-doc") == 3
    assert await store.load_table("t1") == (3, b"v3-doc", [])
    assert await store.read_log("t1", 0) == [(1, b"e1"), (2, b"e2")]


async def test_binary_docs_survive_unchanged(store: Store) -> None:
    doc = bytes(range(256)) * 40  # NULs, high bytes, 10 KB: no decoding anywhere
    await store.create_table("bin", doc)
    await store.commit("bin", 1, doc[::-1], [(1, b"\x00\xff")])
    assert await store.load_table("bin") == (2, doc[::-1], [])
    assert await store.read_log("bin", 0) == [(1, b"\x00\xff")]


async def test_create_existing_table_conflicts_and_changes_nothing(store: Store) -> None:
    await store.create_table("t1", b"first")
    with pytest.raises(VersionConflict) as info:
        await store.create_table("t1", b"second")
    assert (info.value.expected, info.value.actual) == (None, 1)
    assert await store.load_table("t1") == (1, b"first", [])


async def test_stale_commit_changes_nothing(store: Store, redis_client: aioredis.Redis) -> None:
    await store.create_table("t1", b"v1")
    await store.commit("t1", 1, b"v2", [(1, b"a"), (2, b"b")])
    log_key = store.keys.log("t1")
    raw_log_before = await redis_client.lrange(log_key, 0, -1)

    with pytest.raises(VersionConflict) as info:
        await store.commit("t1", 1, b"stale", [(3, b"stale-event")])
    assert (info.value.table_id, info.value.expected, info.value.actual) == ("t1", 1, 2)

    assert await store.load_table("t1") == (2, b"v2", [])
    assert await redis_client.lrange(log_key, 0, -1) == raw_log_before
    assert await store.read_log("t1", 0) == [(1, b"a"), (2, b"b")]


async def test_commit_to_missing_table_conflicts(store: Store) -> None:
    with pytest.raises(VersionConflict) as info:
        await store.commit("ghost", 1, b"doc", [(1, b"e")])
    assert info.value.actual is None
    assert await store.load_table("ghost") is None
    assert await store.read_log("ghost", 0) is None


async def test_concurrent_commits_on_one_version_have_one_winner(store: Store) -> None:
    await store.create_table("t1", b"v1")
    writers = 12
    results = await asyncio.gather(
        *(store.commit("t1", 1, f"doc-{i}".encode(), [(1, f"ev-{i}".encode())])
          for i in range(writers)),
        return_exceptions=True,
    )  # fmt: skip
    winners = [i for i, r in enumerate(results) if r == 2]
    losers = [r for r in results if isinstance(r, VersionConflict)]
    assert len(winners) == 1 and len(losers) == writers - 1
    (w,) = winners
    assert await store.load_table("t1") == (2, f"doc-{w}".encode(), [])
    assert await store.read_log("t1", 0) == [(1, f"ev-{w}".encode())]


async def test_retried_commit_recognises_its_own_success(store: Store) -> None:
    """A retry after a lost reply must not report a conflict nor apply twice."""
    await store.create_table("t1", b"v1")
    nonce = b"same-call-nonce"
    first = await store.commit("t1", 1, b"v2", [(1, b"e")], nonce=nonce)
    again = await store.commit("t1", 1, b"v2", [(1, b"e")], nonce=nonce)
    assert first == again == 2
    assert await store.read_log("t1", 0) == [(1, b"e")]
    with pytest.raises(VersionConflict):
        await store.commit("t1", 1, b"other", [], nonce=b"another-call")
    assert await store.load_table("t1") == (2, b"v2", [])


async def test_retried_create_recognises_its_own_success(store: Store) -> None:
    assert await store._create_table("t1", b"d", b"n1") == 1
    assert await store._create_table("t1", b"d", b"n1") == 1
    with pytest.raises(VersionConflict):
        await store._create_table("t1", b"d", b"n2")


async def test_table_index_and_delete_keeps_record(
    store: Store, redis_client: aioredis.Redis
) -> None:
    for tid in ("b", "a", "c"):
        await store.create_table(tid, b"doc")
    await store.commit("a", 1, b"doc2", [(1, b"e")])
    await store.save_record("a", b"record-of-a")
    assert await store.table_ids() == ["a", "b", "c"]

    await store.delete_table("a")
    assert await store.table_ids() == ["b", "c"]
    assert await store.load_table("a") is None
    assert await redis_client.exists(store.keys.doc("a"), store.keys.log("a")) == 0
    assert await store.load_record("a") == b"record-of-a"
    await store.delete_table("a")  # idempotent

    # a recreated table starts clean: version 1, empty log
    assert await store.create_table("a", b"fresh") == 1
    assert await store.read_log("a", 0) == []


@pytest.mark.parametrize("bad", ["", "a{b", "a}b", "has space", "x" * 129, "é"])
async def test_ids_that_would_break_the_hash_tag_are_refused(store: Store, bad: str) -> None:
    with pytest.raises(ValueError):
        await store.create_table(bad, b"doc")
    with pytest.raises(ValueError):
        await store.new_session(bad, "Ana", "0" * 64, 60)


def test_prefix_is_validated(redis_client: aioredis.Redis) -> None:
    with pytest.raises(ValueError):
        Store(redis_client, "bad{prefix}")


async def test_lobby_changes_name_only_the_tables_whose_entry_changed(store: Store) -> None:
    """Issue 32: a process reads again only the lobby entries that changed since its last
    read: a create with an entry, a commit with a new one, a delete; a commit without a new
    entry (a play) is not a lobby change."""
    seq0, whole = await store.lobby_changes(-1)
    assert whole is None                      # nothing read yet: read every table
    await store.create_table("a", b"doc", info=b"ia")
    await store.create_table("b", b"doc", info=b"ib")
    await store.create_table("c", b"doc")     # no entry: not listed, not a change
    seq1, changed = await store.lobby_changes(seq0)
    assert (seq1, changed) == (seq0 + 2, ["a", "b"])
    await store.commit("a", 1, b"doc2")                  # a play: no new entry
    assert await store.lobby_changes(seq1) == (seq1, [])
    await store.commit("b", 1, b"doc2", info=b"ib2")
    await store.commit("b", 2, b"doc3", info=b"ib3")     # counted once, at its last change
    await store.delete_table("a")
    seq2, changed = await store.lobby_changes(seq1)
    assert seq2 == seq1 + 3
    assert sorted(changed or []) == ["a", "b"]
    assert await store.lobby_infos(["a", "b"]) == {"b": b"ib3"}   # "a" is gone
    assert await store.lobby_changes(seq2) == (seq2, [])


async def test_a_reader_behind_the_changes_kept_or_ahead_of_the_store_reads_all(
        store: Store, redis_client: aioredis.Redis,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the newest ``LOBBY_CHANGES_KEPT`` changes are kept (the keys also expire): a
    reader that missed a dropped one, or whose number is past the store's (a store that
    lost its data), is told to read every table instead of trusting a partial list."""
    from server.store import tables
    monkeypatch.setattr(tables, "LOBBY_CHANGES_KEPT", 3)
    seq0, _ = await store.lobby_changes(-1)
    for tid in ("a", "b", "c"):
        await store.create_table(tid, b"doc", info=b"i")
    seq1, changed = await store.lobby_changes(seq0)
    assert changed == ["a", "b", "c"]
    for tid in ("d", "e"):                    # "a" and "b" are dropped
        await store.create_table(tid, b"doc", info=b"i")
    assert await store.lobby_changes(seq1) == (seq1 + 2, ["d", "e"])
    assert await store.lobby_changes(seq0) == (seq1 + 2, None)
    assert await redis_client.zcard(store.keys.lobby_changes) == 3
    assert await redis_client.ttl(store.keys.lobby_changes) > 0
    assert await redis_client.ttl(store.keys.lobby_clock) > 0
    await redis_client.delete(store.keys.lobby_changes, store.keys.lobby_clock)
    assert await store.lobby_changes(seq1 + 2) == (0, None)


async def test_a_commit_numbers_its_lobby_change_itself(
        store: Store, redis_client: aioredis.Redis, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32: on one node the commit's own script numbers its new lobby entry (a second
    call cost 4% of a process at full pace), beside a finished match's records, which are
    still written to every record key; a refused commit numbers nothing; the changes kept
    are still bounded."""
    from server.store import tables
    monkeypatch.setattr(tables, "LOBBY_CHANGES_KEPT", 2)
    assert store.one_node
    seq0, _ = await store.lobby_changes(-1)
    for tid in ("a", "b", "c"):
        await store.create_table(tid, b"doc")        # no entry: no change
    await store.commit("a", 1, b"doc2", info=b"ia", record=b"rec", record_match=1)
    assert await store.lobby_changes(seq0) == (seq0 + 1, ["a"])
    assert await store.load_record("a") == b"rec"
    assert await store.load_record("a", 1) == b"rec"
    with pytest.raises(VersionConflict):
        await store.commit("b", 5, b"doc2", info=b"ib")
    assert await store.lobby_changes(seq0) == (seq0 + 1, ["a"])
    await store.commit("b", 1, b"doc2", info=b"ib")
    await store.commit("c", 1, b"doc2", info=b"ic")     # "a" is dropped: two are kept
    assert await store.lobby_changes(seq0 + 1) == (seq0 + 3, ["b", "c"])
    assert await store.lobby_changes(seq0) == (seq0 + 3, None)
    assert await redis_client.zcard(store.keys.lobby_changes) == 2
    assert await redis_client.ttl(store.keys.lobby_clock) > 0


def test_a_forked_process_makes_nonces_of_its_own() -> None:
    """A commit's nonce tells a retry its own earlier success: two processes must never
    make the same one. They are a random start and a count; a fork draws a new start."""
    import os

    from server.store.base import _nonce
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:                                 # the child: its next nonce, then out
        os.write(write, _nonce())
        os._exit(0)
    os.close(write)
    theirs = os.read(read, 64)
    os.waitpid(pid, 0)
    mine = _nonce()
    assert len(theirs) == len(mine) == 16
    assert theirs[:8] != mine[:8]


async def test_presence_batches_on_one_node(store: Store, redis_client: aioredis.Redis) -> None:
    async def ttl_of(table: str) -> int:
        return int(await redis_client.ttl(store.keys.present(table)))
    await check_presence_batches(store, ttl_of)


async def test_a_create_is_indexed_and_noted_in_its_own_call_on_one_node(store: Store) -> None:
    """Issue 32: on one node a new table's index entry and lobby change are written by the
    create's script; a second delivery (same nonce) notes nothing more."""
    assert await store._create_table("listed", b"d", b"n1", info=b"i") == 1
    assert await store._create_table("listed", b"d", b"n1", info=b"i") == 1   # resent
    assert await store._create_table("unlisted", b"d", b"n2") == 1           # no entry
    assert sorted(await store.table_ids()) == ["listed", "unlisted"]
    seq, changed = await store.lobby_changes(0)
    assert (seq, changed) == (1, ["listed"])
