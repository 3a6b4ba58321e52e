"""Play now with a full queue: how long after the fourth compatible player joins is the
table made (issue 27 target: within 1 s with 1,000 players queued)?

    python bench/matchmaker.py [--queued 1000] [--rounds 20]

Starts a real server (its embedded Valkey, in a temp dir) and fills the store's queue with
``--queued`` requests that cannot match one another (three per options preset, rated,
ratings spread out), as the matchmaker would read them. Then, each round, four real
websocket clients ask for a casual game with a preset nobody else uses; the figure is the
time from the fourth's ``queue`` being sent to its ``matched`` message (the table made,
its four seats taken atomically, the match started). The same rounds with an empty queue
are the baseline, measured in the same run. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import statistics
import tempfile
import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import msgpack
import msgspec
from websockets.asyncio.client import ClientConnection, connect

import protocol
from server.app import running
from server.config import Settings
from server.players.matchmaker import Request


class Client:
    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.ids = itertools.count(1)
        self.matched = asyncio.get_running_loop().create_future()
        self.replies: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.reader = asyncio.ensure_future(self._read())

    @classmethod
    async def open(cls, url: str, name: str) -> Client:
        c = cls(await connect(url, compression=None, max_size=protocol.MAX_SERVER_FRAME_BYTES))
        await c.call("hello", versions=[1], name=name)
        return c

    async def _read(self) -> None:
        async for frame in self.ws:
            msg = msgpack.unpackb(frame)
            if msg["type"] == "matched" and not self.matched.done():
                self.matched.set_result(time.perf_counter())
            elif msg.get("id") in self.replies:
                self.replies.pop(msg["id"]).set_result(msg)

    async def call(self, kind: str, **fields: Any) -> dict[str, Any]:
        cid = next(self.ids)
        fut = self.replies[cid] = asyncio.get_running_loop().create_future()
        await self.ws.send(msgpack.packb({"type": kind, "id": cid, **fields}))
        reply = await asyncio.wait_for(fut, 10)
        assert reply["type"] in ("ok", "welcome"), reply
        return reply

    async def close(self) -> None:
        self.reader.cancel()
        await self.ws.close()


def background(n: int, one_preset: bool = False) -> list[Request]:
    """``n`` requests, three per preset, that never make a table together in a run
    (``one_preset``: all with the same options, ratings too far apart to meet)."""
    if one_preset:
        now = time.time()
        return [Request(player=uuid.uuid4().hex, name=f"Q{i}", rated=True,
                        options=protocol.TableOptions(), mu=25.0 + 5.0 * i, sigma=3.0,
                        since=now, account=f"q{i}") for i in range(n)]
    presets = [protocol.TableOptions(deals=d, chanter=c, partner_draw=p, signals=s)
               for d in range(1, 51) for c in (False, True) for p in (False, True)
               for s in ("off", "private", "risky")]
    now = time.time()
    return [Request(player=uuid.uuid4().hex, name=f"Q{i}", rated=True,
                    options=presets[i // 3 % len(presets)], mu=25.0 + (i % 3) * 20.0,
                    sigma=3.0, since=now, account=f"q{i}") for i in range(n)]


async def rounds(url: str, n: int, first: int) -> list[float]:
    out = []
    for r in range(n):
        clients = [await Client.open(url, f"R{r}P{i}") for i in range(4)]
        options = {"deals": 1, "target_points": 1 + (first + r) % 50, "bot_delay_ms": 10000,
                   "grace_s": 3600, "mordienne": bool((first + r) // 50 % 2)}
        try:
            for c in clients[:3]:
                await c.call("queue", rated=False, options=options)
            start = time.perf_counter()
            await clients[3].ws.send(msgpack.packb({"type": "queue", "id": 99, "rated": False,
                                                    "options": options}))
            done = await asyncio.wait_for(clients[3].matched, 10)
            out.append((done - start) * 1000)
        finally:
            for c in clients:
                await c.close()
    return out


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


async def run(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="aluette-bench-mm-") as tmp:
        settings = replace(Settings(), port=0, data_dir=Path(tmp), bot_workers=0,
                           busy_lag_ms=0, queue_bots_after_s=3600.0,
                           new_sessions_per_minute=100_000, max_tables=100_000,
                           max_tables_per_address=100_000)
        async with running(settings) as srv:
            url = f"ws://127.0.0.1:{srv.port}"
            empty = await rounds(url, args.rounds, 0)
            q = srv.hub.queue.queue
            for r in background(args.queued):
                await q.put(r.player, msgspec.msgpack.encode(r))
            assert await q.waiting() == args.queued
            full = await rounds(url, args.rounds, args.rounds)
            still = await q.waiting()
            for r in background(args.queued, one_preset=True):     # worst case: one group
                await q.put(r.player, msgspec.msgpack.encode(r))
            crowded = await rounds(url, args.rounds, 2 * args.rounds)
    return {
        "queued": args.queued,
        "queued_after": still,
        "rounds": args.rounds,
        "form_p50_ms": round(statistics.median(full), 1),
        "form_p99_ms": round(pct(full, 0.99), 1),
        "form_max_ms": round(max(full), 1),
        "one_preset_queued": args.queued * 2,
        "one_preset_form_p50_ms": round(statistics.median(crowded), 1),
        "one_preset_form_max_ms": round(max(crowded), 1),
        "baseline_empty_p50_ms": round(statistics.median(empty), 1),
        "baseline_empty_max_ms": round(max(empty), 1),
        "target_ms": 1000,
        "within_target": max(full) <= 1000 and max(crowded) <= 1000,
        "tick_s": settings.queue_tick_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queued", type=int, default=1000, help="requests waiting meanwhile")
    parser.add_argument("--rounds", type=int, default=20, help="tables timed")
    print(json.dumps(asyncio.run(run(parser.parse_args()))))


if __name__ == "__main__":
    main()
