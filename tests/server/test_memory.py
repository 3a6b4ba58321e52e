"""Issue 30: after a sweep the server frees what it swept and gives the C heap's free
pages back to the system (server/memory.py, ``--full-gc`` and ``--malloc-trim``).

The soak's RSS grew by about 2.8 MiB per 1,000 lifecycles: swept tables and closed
connections sit in reference cycles, which only a full collection frees, and the server's
collector thresholds (set against pauses, issue 11) made those rare, so they piled up for
minutes; and glibc kept the freed pages inside its heap.
"""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import pytest

from server import memory
from server.app import running
from server.table import Table
from tests.server.netclient import NetClient

from .conftest import server_settings

MIB = 2**20


def tables_alive(table_id: str) -> int:
    return sum(1 for o in gc.get_objects() if type(o) is Table and o.id == table_id)


async def test_a_swept_table_is_freed_after_the_sweep(redis_url: str, key_prefix: str,
                                                      redis_client: Any) -> None:
    """With no automatic collection at all (the server's rare full collections, taken to
    the limit), a swept table is still freed, by the collection after the sweep."""
    settings = server_settings(redis_url, key_prefix, sweep_interval_s=0.05,
                               waiting_ttl_s=1, full_gc_s=0.05, malloc_trim_s=0)
    gc.collect()
    gc.disable()
    try:
        async with running(settings) as srv:
            ana = await NetClient.open(f"ws://127.0.0.1:{srv.port}", "Ana")
            table = (await ana.call("create_table", options={"deals": 1}))["table"]
            assert tables_alive(table) == 1
            await ana.close()                  # nobody there: abandoned, then swept
            async with asyncio.timeout(15):
                while srv.hub.tables or tables_alive(table):  # noqa: ASYNC110 - no event
                    await asyncio.sleep(0.05)
            heap = srv.hub.heap
            assert heap.collections >= 1 and heap.collected > 0, vars(heap)
            text = srv.hub.metrics.render().decode()
            assert f"aluette_full_gc_total {float(heap.collections)}" in text
    finally:
        gc.enable()


def fragment_the_heap() -> list[bytes]:
    """About 40 MiB of 2 KiB blocks (above pymalloc's 512 bytes, so from ``malloc``)
    written to (so resident), nine in ten freed, the last kept so the heap's top stays in
    use: free pages in its middle, which ``free()`` never gives back."""
    blocks = [bytes([i % 251]) * 2048 for i in range(20_000)]
    kept = blocks[9::10]
    del blocks
    return kept


@pytest.mark.skipif(not memory.AVAILABLE, reason="glibc's malloc_trim only")
async def test_a_sweep_gives_the_heaps_free_pages_back(redis_url: str, key_prefix: str,
                                                       redis_client: Any) -> None:
    settings = server_settings(redis_url, key_prefix, sweep_interval_s=0.05,
                               full_gc_s=0, malloc_trim_s=0.05)
    async with running(settings) as srv:
        kept = fragment_the_heap()
        fragmented = memory.resident_bytes()
        async with asyncio.timeout(10):
            while memory.resident_bytes() > fragmented - 16 * MIB:  # noqa: ASYNC110
                await asyncio.sleep(0.05)             # a sweep comes every 50 ms
        heap = srv.hub.heap
        assert heap.trims >= 1 and heap.released >= 16 * MIB, vars(heap)
        text = srv.hub.metrics.render().decode()
        assert f"aluette_heap_trims_total {float(heap.trims)}" in text
        assert "aluette_heap_trimmed_bytes_total" in text
        assert len(kept) == 2000


def test_each_at_its_own_interval_and_never_at_zero() -> None:
    never = memory.HeapKeeper(0, 0)
    never.after_sweep(1e9)
    assert never.collections == never.trims == 0
    every = memory.HeapKeeper(60, 120)
    for now in (1000.0, 1030.0, 1061.0, 1125.0):     # within a minute: not again
        every.after_sweep(now)
    assert every.collections == 3
    assert every.trims == (2 if memory.AVAILABLE else 0)
