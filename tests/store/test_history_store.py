"""The players' history in the store (issue 27, item 4): kept once, indexed per player and
account, paged, bounded by age and count. Real Valkey."""

from __future__ import annotations

import time
from typing import Any

import pytest

from protocol import TableOptions
from server.store import Store
from server.store.history import HistoryStore, Retention, StoredMatch, StoredSeat, digest

NOW = time.time()


@pytest.fixture(autouse=True)
def _now() -> None:
    """The clock is read as each test starts: ``record`` trims by the real time, so a
    base read when the module was collected (half an hour earlier in a whole run) put the
    matches past their age before the test looked."""
    global NOW
    NOW = time.time()


def m(i: int, at: float, *, private: bool = False) -> StoredMatch:
    seats = [StoredSeat(seat=s, name=f"N{s}", player=f"p{s}", account=f"a{s}" if s else None)
             for s in range(4)]
    return StoredMatch(table=f"t{i}", match=1, finished_at=NOW + at, private=private, rated=False,
                       result="team0", points=[3, 1], options=TableOptions(), seats=seats)


async def test_kept_once_paged_and_bounded_by_count(redis_client: Any, key_prefix: str):
    h = HistoryStore(Store(redis_client, key_prefix), Retention(max_age_s=10**9, max_count=3))
    assert await h.record(m(1, 1000.0)) is not None
    assert await h.record(m(1, 1000.0)) is None          # the same match again: nothing
    for i in range(2, 6):
        await h.record(m(i, 1000.0 + i))
    assert await h.count() == 3                          # the oldest went first
    page, nxt = await h.page(player="p1", limit=2)
    assert [x.table for x in page] == ["t5", "t4"] and nxt is not None
    rest, nxt = await h.page(player="p1", before=nxt, limit=2)
    assert [x.table for x in rest] == ["t3"] and nxt is None
    by_account, _ = await h.page(account="a2", limit=10)
    assert [x.table for x in by_account] == ["t5", "t4", "t3"]
    stats = await h.stats("a1")
    assert stats is not None and stats["played"] == "5" and "won" not in stats   # team 1
    assert stats["pm:" + digest("a3")] == "5"


async def test_old_matches_leave_with_their_indexes(redis_client: Any, key_prefix: str):
    h = HistoryStore(Store(redis_client, key_prefix), Retention(max_age_s=100, max_count=10))
    await h.record(m(1, 1000.0))
    await h.record(m(2, 1050.0))
    assert await h.trim(now=NOW + 1120.0) == 1
    page, _ = await h.page(player="p0", limit=10)
    assert [x.table for x in page] == ["t2"]
    assert await redis_client.zcard(f"{key_prefix}:{{h}}:by:p:p0") == 1


async def test_a_private_match_is_only_for_who_sat_there(redis_client: Any, key_prefix: str):
    h = HistoryStore(Store(redis_client, key_prefix))
    await h.record(m(1, 1000.0, private=True))
    kept, _ = await h.page(account="a1", limit=5)
    assert kept[0].visible_to("p1", None) and kept[0].visible_to(None, "a2")
    assert not kept[0].visible_to("someone", "a9")


async def test_a_guest_who_registers_keeps_the_sessions_matches(redis_client: Any,
                                                               key_prefix: str):
    h = HistoryStore(Store(redis_client, key_prefix))
    await h.record(m(1, 10.0))                 # seat 0: player p0, a guest (no account)
    assert (await h.page(account="new-account", limit=5))[0] == []
    assert await h.adopt("p0", "new-account") == 1
    kept, _ = await h.page(account="new-account", limit=5)
    assert [x.table for x in kept] == ["t1"] and kept[0].visible_to("p0", "new-account")
