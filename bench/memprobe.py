"""Run ``server.app`` with an allocator probe (``bench/soak.py --probe``, issue 30).

    python bench/memprobe.py OUT.jsonl [server flags...]

Each SIGUSR1 appends one JSON line to OUT.jsonl: the resident memory, glibc's heap as
``mallinfo2`` sees it (``heap_mib``: taken from the system; ``in_use_mib``: handed out;
``free_mib``: kept free inside it), pymalloc's arenas and the bytes in its allocated
blocks (``sys._debugmallocstats``), and the objects the garbage collector tracks. Bytes in
use that stay flat while RSS grows are fragmentation; bytes in use that grow are a leak.
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import runpy
import signal
import sys
import time
from collections import Counter
from types import FrameType

MIB = 2**20


class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
                 "uordblks", "fordblks", "keepcost")]


def pymalloc() -> dict[str, float]:
    """pymalloc's arenas and allocated bytes (``sys._debugmallocstats`` writes to fd 2)."""
    read, write = os.pipe()
    saved = os.dup(2)
    os.dup2(write, 2)
    try:
        sys._debugmallocstats()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(write)
    chunks = []
    while chunk := os.read(read, 1 << 16):
        chunks.append(chunk)
    os.close(read)
    out = {}
    for line in b"".join(chunks).decode(errors="replace").splitlines():
        if line.startswith("# arenas allocated current"):
            out["pymalloc_arenas"] = float(line.rsplit("=", 1)[1].replace(",", ""))
        elif line.startswith("# bytes in allocated blocks"):
            out["pymalloc_in_use_mib"] = round(
                int(line.rsplit("=", 1)[1].replace(",", "")) / MIB, 2)
    return out


def main() -> None:
    out_path = sys.argv[1]
    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = MallInfo2
    page = os.sysconf("SC_PAGE_SIZE")

    def probe(signum: int, frame: FrameType | None) -> None:
        with open("/proc/self/statm") as f:
            rss = int(f.read().split()[1]) * page
        mi = libc.mallinfo2()
        line = {"t": round(time.time(), 1), "rss_mib": round(rss / MIB, 2),
                "heap_mib": round(mi.arena / MIB, 2),
                "in_use_mib": round(mi.uordblks / MIB, 2),
                "free_mib": round(mi.fordblks / MIB, 2), **pymalloc(),
                "gc_objects": len(gc.get_objects())}
        with open(out_path, "a") as f:
            f.write(json.dumps(line) + "\n")

    def census(signum: int, frame: FrameType | None) -> None:
        """SIGUSR2: a full collection, keeping what it finds unreachable, counted by type
        (the cyclic garbage the server's rare full collections leave behind), then freed;
        the lines before and after say what it gave back."""
        probe(signum, frame)
        gc.set_debug(gc.DEBUG_SAVEALL)
        found = gc.collect()
        by_type = Counter(type(o).__qualname__ for o in gc.garbage)
        gc.set_debug(0)
        gc.garbage.clear()
        gc.collect()
        with open(out_path, "a") as f:
            f.write(json.dumps({"unreachable": found,
                                "by_type": dict(by_type.most_common(40))}) + "\n")
        probe(signum, frame)

    signal.signal(signal.SIGUSR1, probe)
    signal.signal(signal.SIGUSR2, census)
    sys.argv = ["server.app", *sys.argv[2:]]
    runpy.run_module("server.app", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
