"""What reviews in progress cost the people playing on the same server (issue 28's target).

    .venv/bin/python bench/review_load.py [--reviews 20] [--plays 300]

Starts the real server in-process on 127.0.0.1 (embedded store, two bot worker
processes, as shipped), stores ``--reviews`` finished five-deal match records and asks the
server to review one seat of each (protocol ``review``), then seats four network players
at a table and times ``--plays`` plays from send to ``ok``, and reads the event loop's lag
(the server's own ``/healthz`` sampler). It does the same first with no review running:
the baseline of the same run. Prints one JSON object; the targets are a play ack p99 of
20 ms and a loop lag p99 of 10 ms while 20 reviews run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import msgpack
from network import Seat, pct
from review import play as finished_record
from websockets.asyncio.client import connect

from server.app import running
from server.config import Settings


async def plays(srv: Any, seats: list[Seat], n: int, name: str) -> list[float]:
    """Play ``n`` cards at tables of the four seats (a new one when a match ends); the ack
    times in ms."""
    opts = {"deals": 50, "first_dealer": 3, "bot_delay_ms": 0}
    out: list[float] = []
    while len(out) < n:
        created = await seats[0].call("create_table", options=opts, name=name)
        table = created["result"]["table"]
        for i in (1, 2, 3):
            await seats[i].call("join", table=table, seat=i)
        await seats[0].call("start", table=table)
        match = srv.hub.tables[table]
        while len(out) < n and match.match.to_act is not None:
            seat = seats[match.match.to_act]
            card = match.match.hands[seat.seat][0]      # bench driver: reads the card only
            t0 = time.perf_counter()
            reply = await seat.call("play", table=table, card=card)
            out.append((time.perf_counter() - t0) * 1e3)
            assert reply["type"] == "ok", reply
        for s in seats:
            await s.call("leave", table=table)
    return out


def figures(acks: list[float], lag: dict[str, float]) -> dict[str, Any]:
    return {"ack_p50_ms": round(statistics.median(acks), 2),
            "ack_p99_ms": round(pct(acks, 0.99), 2), "loop_lag_ms": lag}


async def bench(reviews: int, n: int) -> dict[str, Any]:
    # Played before the server starts: their bots would otherwise hold its loop up.
    records = [finished_record(100 + i, 5) for i in range(reviews)]
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(port=0, data_dir=Path(tmp) / "data", rate_per_second=1e6,
                            rate_burst=10**6, max_tables_per_player=100)
        async with running(settings) as srv:
            hub = srv.hub
            url = f"ws://127.0.0.1:{srv.port}"
            seats = []
            for i in range(4):
                ws = await connect(url, compression=None, max_size=2**20)
                seats.append(Seat(ws, i))
                await seats[i].call("hello", versions=[1], name=f"P{i}")
            hub.lag.samples.clear()
            baseline = figures(await plays(srv, seats, n, "baseline"), hub.lag.summary())
            for i, record in enumerate(records):
                body = json.dumps(record).encode()
                await hub.store.save_record(f"bench-{i}", msgpack.packb(
                    {"private": False, "members": [], "record": body}), ttl_s=3600)
            # One asker for all of them: lift the per-player and per-address bounds.
            hub.reviews.per_player = hub.reviews.per_address = reviews
            asker = Seat(await connect(url, compression=None, max_size=2**20), 0)
            await asker.call("hello", versions=[1], name="Asker")
            for i in range(reviews):
                reply = await asker.call("review", table=f"bench-{i}", seat=i % 4)
                assert reply["type"] == "ok", reply
            running_now = sum(j.status in ("queued", "running")
                              for j in hub.reviews.jobs.values())
            hub.lag.samples.clear()
            loaded = figures(await plays(srv, seats, n, "loaded"), hub.lag.summary())
            still = sum(j.status in ("queued", "running") for j in hub.reviews.jobs.values())
            for s in [*seats, asker]:
                await s.ws.close()
    return {"reviews": reviews, "plays": n, "reviews_waiting_at_start": running_now,
            "reviews_waiting_at_end": still, "reviews_made_meanwhile": hub.reviews.made,
            "baseline": baseline, "while_reviewing": loaded,
            "targets": {"ack_p99_ms": 20, "loop_lag_p99_ms": 10}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reviews", type=int, default=20)
    parser.add_argument("--plays", type=int, default=300)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(bench(args.reviews, args.plays))))


if __name__ == "__main__":
    main()
