"""Logins in flight: their p99, and how late the server's event loop runs meanwhile.

    python bench/login.py [--in-flight 50] [--rounds 4] [--memory-kib 19456] [--time-cost 2]

Starts the real server in-process on 127.0.0.1 with the embedded Valkey store, registers
``--in-flight`` accounts, and from a separate process (so the clients' own work is not on
the server's loop) opens one connection per account and sends every ``login`` at once,
``--rounds`` times, timing each from send to ``ok``. Meanwhile a probe on the server's
loop sleeps 2 ms at a time and records how late it wakes: the lag every other command of
every table would see. Baseline in the same run: the same number of ``ping`` round trips
in flight (no hashing), and the loop's lag while they run; and one Argon2id hash alone.
Targets (issue 27): login p99 <= 300 ms, loop lag p99 <= 10 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import sys
import tempfile
import time
from pathlib import Path

# bench/protocol.py would shadow the protocol package: put the project root first.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import msgpack
from websockets.asyncio.client import connect

import protocol
from server.accounts import Hasher, HashParams
from server.app import running
from server.config import Settings

PROBE_S = 0.002
IDLE_S = 2.0
PASSWORD = "correct horse battery staple"


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else 0.0


async def _call(ws, cid: int, kind: str, **fields) -> tuple[dict, float]:
    t0 = time.perf_counter()
    await ws.send(msgpack.packb({"type": kind, "id": cid, **fields}))
    while True:
        msg = protocol.to_dict(protocol.decode_server(await ws.recv()))
        if msg.get("id") == cid:
            return msg, (time.perf_counter() - t0) * 1000


async def _clients(url: str, n: int, rounds: int) -> dict:
    conns = [await connect(url, compression=None) for _ in range(n)]
    for i, ws in enumerate(conns):
        await _call(ws, 1, "hello", versions=[1], name=f"client {i}")
    phases: dict[str, dict] = {}
    for phase in ("ping", "login"):
        times: list[float] = []
        start = time.time()
        # Pings are quick: ten times the rounds, so the baseline's lag has samples too.
        for r in range(rounds * 10 if phase == "ping" else rounds):
            if phase == "ping":
                calls = [_call(ws, 100 + r, "ping") for ws in conns]
            else:
                calls = [_call(ws, 10 + r, "login", name=f"player{i}", password=PASSWORD)
                         for i, ws in enumerate(conns)]
            for reply, ms in await asyncio.gather(*calls):
                assert reply["type"] in ("ok", "pong"), reply
                times.append(ms)
        phases[phase] = {"from": start, "to": time.time(), "ms": times}
    for ws in conns:
        await ws.close()
    return phases


def _client_process(url: str, n: int, rounds: int, out: multiprocessing.Queue) -> None:
    out.put(asyncio.run(_clients(url, n, rounds)))


async def _probe(samples: list[tuple[float, float]]) -> None:
    loop = asyncio.get_running_loop()
    while True:
        start = loop.time()
        await asyncio.sleep(PROBE_S)
        samples.append((time.time(), (loop.time() - start - PROBE_S) * 1000))


def _lag(samples: list[tuple[float, float]], window: dict) -> dict:
    lags = [lag for at, lag in samples if window["from"] <= at <= window["to"]]
    return {"lag_p50_ms": round(pct(lags, 0.5), 2), "lag_p99_ms": round(pct(lags, 0.99), 2),
            "lag_max_ms": round(max(lags, default=0.0), 2), "lag_samples": len(lags)}


async def bench(n: int, rounds: int, memory_kib: int, time_cost: int, workers: int) -> dict:
    params = HashParams(memory_kib=memory_kib, time_cost=time_cost)
    alone = Hasher(params, workers=1)
    t0 = time.perf_counter()
    for _ in range(5):
        await alone.hash(PASSWORD)
    one_hash_ms = (time.perf_counter() - t0) * 1000 / 5
    alone.close()
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(port=0, data_dir=Path(tmp) / "data", rate_per_second=1e6,
                            rate_burst=10**6, argon2_memory_kib=memory_kib,
                            argon2_time_cost=time_cost, hash_workers=workers,
                            login_free_per_address=10**6, login_free_per_account=10**6,
                            new_sessions_per_minute=10**6, busy_lag_ms=0)
        async with running(settings) as srv:
            accounts = srv.hub.accounts
            for i in range(n):
                await accounts.register(f"p{i:030d}", f"player{i}", PASSWORD)
            samples: list[tuple[float, float]] = []
            probe = asyncio.get_running_loop().create_task(_probe(samples))
            idle = {"from": time.time()}
            await asyncio.sleep(IDLE_S)       # baseline: the loop with nothing to do
            idle["to"] = time.time()
            ctx = multiprocessing.get_context("spawn")
            out = ctx.Queue()
            child = ctx.Process(target=_client_process,
                                args=(f"ws://127.0.0.1:{srv.port}", n, rounds, out))
            child.start()
            loop = asyncio.get_running_loop()
            phases = await loop.run_in_executor(None, out.get)
            await loop.run_in_executor(None, child.join)
            probe.cancel()
    login, ping = phases["login"], phases["ping"]
    result = {
        "argon2id": {"memory_kib": memory_kib, "time_cost": time_cost, "parallelism": 1},
        "hash_workers": workers,
        "one_hash_ms": round(one_hash_ms, 1),
        "logins_in_flight": n,
        "logins": len(login["ms"]),
        "login_p50_ms": round(pct(login["ms"], 0.5), 1),
        "login_p99_ms": round(pct(login["ms"], 0.99), 1),
        "loop_lag_during_logins": _lag(samples, login),
        "baseline": {"loop_lag_idle": _lag(samples, idle),
                     "ping_p50_ms": round(pct(ping["ms"], 0.5), 2),
                     "ping_p99_ms": round(pct(ping["ms"], 0.99), 2),
                     "loop_lag_during_pings": _lag(samples, ping)},
        "targets": {"login_p99_ms": 300, "loop_lag_p99_ms": 10},
    }
    result["login_target_met"] = result["login_p99_ms"] <= 300
    result["lag_target_met"] = result["loop_lag_during_logins"]["lag_p99_ms"] <= 10
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--in-flight", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--memory-kib", type=int, default=19 * 1024)
    parser.add_argument("--time-cost", type=int, default=2)
    parser.add_argument("--workers", type=int, default=1, help="hash threads (--hash-workers)")
    args = parser.parse_args()
    print(json.dumps(asyncio.run(bench(args.in_flight, args.rounds, args.memory_kib,
                                       args.time_cost, args.workers))))


if __name__ == "__main__":
    main()
