"""What a sweep leaves behind is freed, and the heap's free pages go back to the system
(issue 30: the soak's resident memory).

The soak (bench/soak.py --probe, BENCHMARKS.md) found RSS growing by about 2.8 MiB per
1,000 table lifecycles, and why:

- **Swept tables and closed connections sit in reference cycles** (a ``Table`` and its
  parts: replica, replies, presence, viewers, clock, follower, lock, queue; a closed
  socket's transport and protocol), so only the cyclic garbage collector frees them. The
  server's collector is tuned against pauses (server/app.py, issue 11: start-up's objects
  frozen, young collections every 50,000 allocations, a full one after 100 of the middle
  generation's), so a full collection comes rarely: one found 35,898 unreachable objects
  (268 tables, 342 sockets) after two minutes of soak, 8 MiB of pymalloc's blocks. Garbage
  that piles up that high leaves pymalloc's arenas scattered when it is finally freed, and
  they are not given back: RSS ratchets up.
- **glibc keeps freed pages inside its heap** (only the heap's top is given back by
  ``free``); ``malloc_trim(0)`` also releases the free pages in its middle.

So after a sweep, every ``--full-gc`` seconds, a full collection (what start-up made is
frozen out of it: it walks the live tables' objects and the garbage, milliseconds), and
every ``--malloc-trim`` seconds, ``malloc_trim(0)``. Elsewhere than glibc (musl, macOS)
there is no ``malloc_trim``: :func:`trim` does nothing.
"""

from __future__ import annotations

import ctypes
import gc
import os
import time
from collections.abc import Callable

__all__ = ["HeapKeeper", "resident_bytes", "trim"]

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _malloc_trim() -> Callable[[int], int] | None:
    try:
        libc = ctypes.CDLL("libc.so.6")
        fn = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_size_t]
    fn.restype = ctypes.c_int
    return fn


_TRIM = _malloc_trim()
AVAILABLE = _TRIM is not None


def resident_bytes() -> int:
    """This process's resident memory (0 where ``/proc`` is not there)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return 0


def trim() -> int:
    """``malloc_trim(0)``: the C heap's free pages go back to the system. Returns the
    resident bytes given back (0 without glibc)."""
    if _TRIM is None:
        return 0
    before = resident_bytes()
    _TRIM(0)
    return max(0, before - resident_bytes())


class HeapKeeper:
    """After a sweep: a full collection every ``collect_every_s`` seconds and a trim every
    ``trim_every_s`` (0: never), counted for ``/metrics``."""

    def __init__(self, collect_every_s: float, trim_every_s: float) -> None:
        self.collect_every_s = collect_every_s
        self.trim_every_s = trim_every_s
        self.last_collect = self.last_trim = 0.0
        self.collections = 0
        self.collected = 0           # unreachable objects found, all collections together
        self.collect_seconds = 0.0   # their time on the loop, all together
        self.longest_collect_s = 0.0
        self.trims = 0
        self.released = 0            # resident bytes given back, all trims together

    def after_sweep(self, now: float) -> None:
        if self.collect_every_s > 0 and now - self.last_collect >= self.collect_every_s:
            self.last_collect = now
            started = time.perf_counter()
            self.collected += gc.collect()
            took = time.perf_counter() - started
            self.collect_seconds += took
            self.longest_collect_s = max(self.longest_collect_s, took)
            self.collections += 1
        if AVAILABLE and self.trim_every_s > 0 and now - self.last_trim >= self.trim_every_s:
            self.last_trim = now
            self.released += trim()
            self.trims += 1
