"""Giving the C heap's free pages back to the system (issue 30: the soak's resident memory).

The soak (bench/soak.py) saw each process's RSS grow after warm-up while the bytes in use
did not: glibc's ``mallinfo2`` in-use bytes and pymalloc's allocated bytes stayed flat
over 6,900 table lifecycles, and the growth was free space kept inside the C heap
(``fordblks``: 2.4 -> 3.8 MiB, most of the RSS growth) with one more pymalloc arena (1 MiB)
— fragmentation, not a leak (BENCHMARKS.md). glibc returns a free chunk to the system by
itself only from the heap's top; ``malloc_trim(0)`` also releases the free pages in its
middle. Called after a sweep every ``--malloc-trim`` seconds (a few hundred microseconds on
a server's heap), it kept RSS flat in the same run where the process that did not call it
grew.

Elsewhere than glibc (musl, macOS) there is no ``malloc_trim``: :func:`trim` does nothing.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable

__all__ = ["Trimmer", "resident_bytes", "trim"]

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


class Trimmer:
    """:func:`trim` at most every ``every_s`` seconds (0: never), counted for ``/metrics``."""

    def __init__(self, every_s: float) -> None:
        self.every_s = every_s
        self.last = 0.0
        self.trims = 0
        self.released = 0            # resident bytes given back, all trims together

    def maybe(self, now: float) -> None:
        if not AVAILABLE or self.every_s <= 0 or now - self.last < self.every_s:
            return
        self.last = now
        self.released += trim()
        self.trims += 1
