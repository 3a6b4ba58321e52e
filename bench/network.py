"""Server round trips, as a ratio to a bare ping on the same connection, measured in one run.

    python bench/network.py [--plays 400]

Starts the real server in-process on 127.0.0.1 with the embedded Valkey store (fsync on
every write, as shipped), seats four network clients at a table and times each ``play``
from send to ``ok`` (the move is validated, stored with its events in one Redis round trip,
and fanned out first), beside ``ping`` round trips (no storage) on the same connections.
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

# bench/protocol.py would shadow the protocol package: put the project root first.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import msgpack
from websockets.asyncio.client import connect

import protocol
from server.app import running
from server.config import Settings


class Seat:
    def __init__(self, ws, seat: int) -> None:
        self.ws, self.seat, self.ids, self.hand = ws, seat, iter(range(1, 10**9)), []

    async def call(self, kind: str, **fields) -> dict:
        cid = next(self.ids)
        await self.ws.send(msgpack.packb({"type": kind, "id": cid, **fields}))
        while True:
            msg = protocol.to_dict(protocol.decode_server(await self.ws.recv()))
            ev = msg.get("event") or {}
            if ev.get("type") == "hand_dealt":
                self.hand = list(ev["cards"])
            if msg.get("id") == cid:
                return msg


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


async def bench(plays: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        # The bench drives four seats as fast as it can: lift the per-connection rate limit.
        settings = Settings(port=0, data_dir=Path(tmp) / "data", rate_per_second=1e6,
                            rate_burst=10**6)
        async with running(settings) as srv:
            url = f"ws://127.0.0.1:{srv.port}"
            seats = []
            for i in range(4):
                ws = await connect(url, compression=None, max_size=2**20)
                seats.append(Seat(ws, i))
                await seats[i].call("hello", versions=[1], name=f"B{i}")
            opts = {"deals": 50, "first_dealer": 3, "bot_delay_ms": 0}
            table = (await seats[0].call("create_table", options=opts))["result"]["table"]
            for i in (1, 2, 3):
                await seats[i].call("join", table=table, seat=i)
            await seats[0].call("start", table=table)
            ping_us, play_us = [], []
            match = srv.hub.tables[table]
            for _ in range(plays):
                seat = seats[match.match.to_act]
                card = match.match.hands[seat.seat][0]   # bench driver: reads the card only
                t0 = time.perf_counter()
                reply = await seat.call("play", table=table, card=card)
                play_us.append((time.perf_counter() - t0) * 1e6)
                assert reply["type"] == "ok", reply
                t0 = time.perf_counter()
                await seat.call("ping")
                ping_us.append((time.perf_counter() - t0) * 1e6)
            for s in seats:
                await s.ws.close()
    return {
        "plays": plays,
        "play_p50_us": round(statistics.median(play_us)),
        "play_p99_us": round(pct(play_us, 0.99)),
        "ping_p50_us": round(statistics.median(ping_us)),
        "ping_p99_us": round(pct(ping_us, 0.99)),
        "play_to_ping_ratio": round(statistics.median(play_us) / statistics.median(ping_us), 2),
        "plays_per_s_one_table": round(1e6 / statistics.mean(play_us)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plays", type=int, default=400)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(bench(args.plays))))


if __name__ == "__main__":
    main()
