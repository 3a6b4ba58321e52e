"""A table is its last whole document followed by its deltas (issue 32).

A game action's commit stores only the actions it applied and the event counters after
it; every other commit, and every ``COMPACT_EVERY``-th one, the whole document. Whatever
the point of a match, the table restored from the store (a restart, another process, a
catch-up) must be exactly the live table: the same match, the same seats, the same event
counters. The SIGKILL test in test_restart.py restarts a process from such a store.
"""

from __future__ import annotations

import asyncio
import itertools

import msgspec

from server.table.delta import COMPACT_EVERY, restore

from .players import autoplay, four_humans


def _same(live, loaded) -> None:
    state, match = restore(loaded)
    assert match is not None and live.match is not None
    assert match.to_dict() == live.match.to_dict()
    # The document's own copy of the match is the last whole one; the match is compared
    # above, everything else here.
    assert msgspec.structs.replace(state, match=None) == \
        msgspec.structs.replace(live.state, match=None)
    assert loaded.version == live.version


async def test_the_table_restored_from_document_and_deltas_is_the_live_table(connect, server):
    clients = [await connect(f"P{i}") for i in range(4)]
    table = await four_humans(clients, deals=3, signals="private")
    live = server.hub.tables[table]
    store = server.hub.store
    deltas_seen = []
    for _ in range(12):                        # 12 x 2 cards each: across a compaction
        await asyncio.gather(*(autoplay(c, table, i, max_plays=2)
                               for i, c in enumerate(clients)))
        await clients[0].call("signal", table=table, signal="useless_hand")
        loaded = await store.load_table(table)
        _same(live, loaded)
        deltas_seen.append(len(loaded.deltas))
    assert max(deltas_seen) > 8                # game actions were stored as deltas...
    assert max(deltas_seen) <= COMPACT_EVERY   # ...never more than COMPACT_EVERY of them
    assert any(b < a for a, b in itertools.pairwise(deltas_seen))  # compacted
