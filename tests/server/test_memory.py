"""Issue 30: after a sweep the server gives the C heap's free pages back to the system
(server/memory.py, ``--malloc-trim``).

The soak's RSS grew after warm-up while the bytes in use stayed flat: free space kept in
the middle of glibc's heap, which ``free()`` never returns (only the heap's top does).
Here the test process's own heap is fragmented that way (2 KiB blocks, above pymalloc's
512 bytes, so from ``malloc``; nine in ten freed, the last kept so the top stays in use),
and the server running in this process must give those pages back at its next sweep.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from server import memory
from server.app import running

from .conftest import server_settings

pytestmark = pytest.mark.skipif(not memory.AVAILABLE, reason="glibc's malloc_trim only")

MIB = 2**20


def fragment_the_heap() -> list[bytes]:
    """About 40 MiB of 2 KiB blocks written to (so resident), nine in ten freed."""
    blocks = [bytes([i % 251]) * 2048 for i in range(20_000)]
    kept = blocks[9::10]
    del blocks
    return kept


async def test_a_sweep_gives_the_heaps_free_pages_back(redis_url: str, key_prefix: str,
                                                       redis_client: Any) -> None:
    settings = server_settings(redis_url, key_prefix, sweep_interval_s=0.05,
                               malloc_trim_s=0.05)
    async with running(settings) as srv:
        kept = fragment_the_heap()
        fragmented = memory.resident_bytes()
        async with asyncio.timeout(10):
            while memory.resident_bytes() > fragmented - 16 * MIB:  # noqa: ASYNC110
                await asyncio.sleep(0.05)             # a sweep comes every 50 ms
        trimmer = srv.hub.trimmer
        assert trimmer.trims >= 1 and trimmer.released >= 16 * MIB, vars(trimmer)
        text = srv.hub.metrics.render().decode()
        assert f"aluette_heap_trims_total {float(trimmer.trims)}" in text
        assert "aluette_heap_trimmed_bytes_total" in text
        assert len(kept) == 2000


def test_no_trim_when_switched_off() -> None:
    trimmer = memory.Trimmer(0)
    trimmer.maybe(1e9)
    assert trimmer.trims == 0
    every = memory.Trimmer(60)
    every.maybe(1000.0)
    every.maybe(1030.0)                                # within the minute: not again
    every.maybe(1061.0)
    assert every.trims == 2
