"""Soak (issue 30, item 1): table lifecycles for a long time against two server processes on
one store, watching memory, tasks, tables and the store for growth.

    python bench/soak.py [--lifecycles N | --seconds S] [--concurrency C] [--interval 10]
                         [--redis-url URL --key-prefix P]

Starts a Valkey store (or uses ``--redis-url``, only under a key prefix of its own) and two
``aluette-server`` processes on it with short retention settings (tables leave memory
seconds after they end, records and sessions expire after a minute), then runs
``--concurrency`` lifecycles at once, over and over. A lifecycle, in turn:

- ``match``: A creates a table (one deal, random bots, no bot delay, ``grace_s`` 0), B joins
  on the *other* process, two bots sit, a spectator S watches, A and B chat, A starts; A and
  B disconnect (bots take their seats at once), B comes back with its token, resumes with
  its last sequence number and leaves again; S waits for the end and leaves; the table is
  swept;
- ``rematch`` (every 4th): the same, then A and B come back, resume and both ask for a
  rematch; the second match plays out with bots too;
- ``abandon`` (every 5th): A creates, B joins, both vanish: the waiting table is abandoned
  and swept;
- ``leave`` (every 7th): A creates, B joins, B leaves, A leaves.

Every ``--interval`` seconds it prints one JSON line: lifecycles done, per process its RSS
(``process_resident_memory_bytes``), asyncio task count (``aluette_tasks``) and the tables
it holds by status (from ``GET /metrics``), the store's keys under the prefix and its
memory (``INFO memory``), and errors by code. The last line is the verdict, over the
samples taken while lifecycles ran, from ``--warmup`` of the run (10%) to its end: each
process's RSS (the mean of the first tenth of those samples against the last tenth: under
5% growth) and its least-squares slope per 1,000 lifecycles; each process's tasks when no
table is open, at the warm-up's end and after the run (``idle_tasks``: at most 5% or 3
more), because while lifecycles run the count follows the tables open at each sample (a few
tasks per table), which says nothing of growth: at the warm-up mark the lifecycles pause
until every table is swept, one sample is taken, and they go on (the figures while open are
printed too, ``tasks``); every key with a lifetime: after the run, the store's keys
under the prefix fall back to the count before the first lifecycle, but for a few kept once
per store, within the longest lifetime the run sets (twice ``--retention``, which sets how
long records and sessions are kept) and 15 s more (the keys while lifecycles run follow
their pace, so they are printed, ``store_keys``, not judged); every table gone from both
processes within 30 s of the end; and no error but those the run provokes (a turn that
timed out is an error: every seat is a bot's or has no grace period, so none should).

``--plain N`` runs the first N processes with ``--full-gc 0 --malloc-trim 0`` (no full
collection nor return of the C heap's free pages after a sweep: server/memory.py), so one
run compares them with the others. ``--probe``
runs the processes under ``bench/memprobe.py``: at each sample they also write their
allocators' figures (bytes in use and kept free, in glibc's heap and in pymalloc), and the
verdict adds their growth (``allocators``): bytes in use flat while RSS grows is
fragmentation; bytes in use growing is a leak.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import msgpack
import redis.asyncio as aioredis
from benchlib import free_port, own_store, release_store, stop_process
from websockets.asyncio.client import connect

ROOT = Path(__file__).resolve().parents[1]
#: ``turn_timer_s``: every seat is a bot's or its player's who left with no grace, so no
#: turn should ever time out; one that does is a seat nobody plays (a lost presence
#: change), counted as ``turn_timed_out`` instead of stalling the lifecycle.
OPTIONS = {"deals": 1, "bot_delay_ms": 0, "bot_level": "random", "grace_s": 0,
           "first_dealer": 3, "turn_timer_s": 10}
#: Server settings: short retention so the run reaches its steady state in minutes.
SERVER_FLAGS = ["--bot-workers", "0", "--busy-lag-ms", "0", "--sweep-interval", "1",
                "--table-ttl", "2", "--waiting-ttl", "3", "--token-grace", "2",
                "--max-tables", "100000", "--max-tables-per-player", "100000",
                "--max-tables-per-address", "100000", "--max-connections", "100000",
                "--max-connections-per-address", "100000",
                "--new-sessions-per-minute", "10000000", "--rate-per-second", "1000000",
                "--rate-burst", "1000000", "--lease-ttl", "3", "--lease-renew", "1",
                # Every client of the soak comes from 127.0.0.1: the per-address resume
                # pacing (5 a second per process, issue 30) held its resumes back for
                # 73-367 s in all over 90 s, and now and then one past the client's 60 s
                # (the rare "TimeoutError (rematch: first match)": no reply to resume).
                "--resumes-per-address", "0"]
#: Errors the run provokes on purpose (a resume racing the table's sweep, a rematch
#: racing the other player's departure).
#: The longest a lifecycle waits for one event (a match of random bots takes seconds).
WAIT_S = 90
PROVOKED = {"no_such_table", "wrong_phase", "not_at_table", "not_seated"}
#: Keys the first lifecycles make once per store and keep, past the count before the first
#: lifecycle (the history index, the lobby's clock and change stream, the table list...).
KEPT_ONCE_PER_STORE = 8


class Failed(Exception):
    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


class Peer:
    """A minimal protocol client (plain msgpack)."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.ids = itertools.count(1)
        self.waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.events: list[dict[str, Any]] = []
        self.seq: dict[str, int] = {}
        self.changed = asyncio.Event()
        self.token = ""
        self.reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def open(cls, url: str, name: str, token: str | None = None,
                   ids: Any = None) -> Peer:
        ws = await connect(url, compression=None, max_size=2**22, open_timeout=30)
        peer = cls(ws)
        if ids is not None:
            peer.ids = ids
        hello: dict[str, Any] = {"versions": [1], "name": name}
        if token:
            hello["token"] = token
        welcome = await peer.call("hello", **hello)
        peer.token = welcome["session"]
        return peer

    async def _read(self) -> None:
        try:
            async for frame in self.ws:
                msg = msgpack.unpackb(frame)
                if msg.get("type") == "event":
                    self.events.append(msg)
                    self.seq[msg["table"]] = msg["seq"]
                    self.changed.set()
                elif msg.get("id") in self.waiting:
                    self.waiting.pop(msg["id"]).set_result(msg)
        except Exception:
            pass
        finally:
            for fut in self.waiting.values():
                if not fut.done():
                    fut.set_exception(ConnectionError("closed"))
            self.changed.set()

    async def call(self, kind: str, **fields: Any) -> dict[str, Any]:
        cid = next(self.ids)
        for attempt in range(4):
            fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
            self.waiting[cid] = fut
            await self.ws.send(msgpack.packb({"type": kind, "id": cid, **fields}))
            try:
                reply = await asyncio.wait_for(fut, 60)
            except TimeoutError:
                raise TimeoutError(f"no reply to {kind}") from None
            # docs/PROTOCOL.md: `conflict` means nothing was applied (the table kept
            # changing under two processes); a client sends it again with the same id.
            if reply["type"] == "error" and reply["code"] == "conflict" and attempt < 3:
                await asyncio.sleep(0.05 * (attempt + 1))
                continue
            break
        if reply["type"] == "error":
            raise Failed(reply["code"])
        return reply.get("result", reply)  # type: ignore[no-any-return]

    async def wait_for(self, kind: str, table: str, after: int = 0) -> int:
        """Index in ``events`` of the first ``kind`` event of ``table`` at or after ``after``
        (:data:`WAIT_S` at most)."""
        try:
            async with asyncio.timeout(WAIT_S):
                return await self._wait_for(kind, table, after)
        except TimeoutError:
            raise TimeoutError(f"no {kind} event") from None

    async def _wait_for(self, kind: str, table: str, after: int) -> int:
        while True:
            for i in range(after, len(self.events)):
                e = self.events[i]
                if e["table"] == table and e["event"]["type"] == kind:
                    return i
            if self.reader.done():
                raise ConnectionError("closed")
            self.changed.clear()
            await self.changed.wait()

    async def close(self) -> None:
        await self.ws.close()
        self.reader.cancel()


class Soak:
    def __init__(self, urls: list[str]) -> None:
        self.urls = urls
        self.done = 0
        self.kinds: Counter[str] = Counter()
        self.errors: Counter[str] = Counter()
        self.n = itertools.count()
        self.seconds: Counter[str] = Counter()
        self.stage = ""
        self.plain = 0
        self.pids: list[int] = []                  # probed processes (--probe)
        self.probes: list[Path] = []

    async def lifecycle(self) -> None:
        i = next(self.n)
        first = random.randrange(2)
        here, there = self.urls[first], self.urls[1 - first]
        kind = ("leave" if i % 7 == 6 else "abandon" if i % 5 == 4
                else "rematch" if i % 4 == 3 else "match")
        peers: list[Peer] = []
        stage = ["open"]
        began = time.monotonic()
        try:
            a = await Peer.open(here, "A")
            b = await Peer.open(there, "B")
            peers += [a, b]
            table = (await a.call("create_table", options=OPTIONS))["table"]
            await b.call("join", table=table, seat=1)
            if kind == "leave":
                await b.call("leave", table=table)
                await a.call("leave", table=table)
            elif kind == "abandon":
                pass                                    # both vanish below
            else:
                await self._match(a, b, table, peers, here, there, kind == "rematch", stage)
            self.kinds[kind] += 1
            self.seconds[kind] += time.monotonic() - began
            self.done += 1
        except Failed as exc:
            self.errors[exc.code] += 1
        except (ConnectionError, OSError, TimeoutError) as exc:
            what = f": {exc}" if isinstance(exc, TimeoutError) and str(exc) else ""
            self.errors[f"{type(exc).__name__} ({kind}: {stage[-1]}{what})"] += 1
        finally:
            for p in peers:
                with contextlib.suppress(Exception):
                    await p.close()

    async def _match(self, a: Peer, b: Peer, table: str, peers: list[Peer], here: str,
                     there: str, rematch: bool, stage: list[str]) -> None:
        await a.call("add_bot", table=table, seat=2, level="random")
        await a.call("add_bot", table=table, seat=3, level="random")
        s = await Peer.open(random.choice(self.urls), "S")
        peers.append(s)
        await s.call("spectate", table=table)
        await a.call("chat", table=table, text="bonne partie")
        await b.call("chat", table=table, text="merci")
        await a.call("start", table=table)
        # Both humans drop (grace 0: bots take their seats); B comes back and resumes.
        a_token, a_ids, b_token, b_ids = a.token, a.ids, b.token, b.ids
        a_seq, b_seq = a.seq.get(table, 0), b.seq.get(table, 0)
        await a.close()
        await b.close()
        stage.append("resume")
        b2 = await Peer.open(there, "B", token=b_token, ids=b_ids)
        peers.append(b2)
        await b2.call("resume", token=b2.token, table=table, last_seq=b_seq)
        b_token, b_ids, b_seq = b2.token, b2.ids, b2.seq.get(table, b_seq)
        await b2.close()
        stage.append("first match")
        over = await s.wait_for("match_over", table)
        self._count_timeouts(s, table)
        if rematch:
            a2 = await Peer.open(here, "A", token=a_token, ids=a_ids)
            b3 = await Peer.open(there, "B", token=b_token, ids=b_ids)
            peers += [a2, b3]
            await a2.call("resume", token=a2.token, table=table, last_seq=a_seq)
            await b3.call("resume", token=b3.token, table=table, last_seq=b_seq)
            stage.append("rematch")
            await a2.call("rematch", table=table)
            await b3.call("rematch", table=table)
            await s.wait_for("deal_started", table, after=over + 1)
            await a2.close()
            await b3.close()
            stage.append("second match")
            await s.wait_for("match_over", table, after=over + 1)
            self._count_timeouts(s, table)
        await s.call("leave", table=table)

    def _count_timeouts(self, s: Peer, table: str) -> None:
        timed_out = sum(1 for e in s.events if e["table"] == table
                        and e["event"]["type"] == "turn_timed_out")
        if timed_out:
            self.errors["turn_timed_out"] += timed_out
            s.events = [e for e in s.events if e["event"]["type"] != "turn_timed_out"]


async def scrape(url: str) -> dict[str, Any]:
    """The few figures the soak watches, from one process's ``/metrics``."""
    host, port = url.removeprefix("ws://").rstrip("/").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(f"GET /metrics HTTP/1.1\r\nHost: {host}:{port}\r\n"
                 "Connection: close\r\n\r\n".encode())
    await writer.drain()
    raw = await asyncio.wait_for(reader.read(), 30)
    writer.close()
    out: dict[str, Any] = {"rss_mib": 0.0, "tasks": 0.0, "tables": 0.0, "clients": 0.0,
                           "by_status": {}}
    for line in raw.partition(b"\r\n\r\n")[2].decode().splitlines():
        if line.startswith("#") or not line:
            continue
        name, _, value = line.rpartition(" ")
        if name == "process_resident_memory_bytes":
            out["rss_mib"] = round(float(value) / 2**20, 2)
        elif name == "aluette_tasks":
            out["tasks"] = float(value)
        elif name.startswith("aluette_tables{"):
            out["tables"] += float(value)
            status = name.split('status="', 1)[1].split('"', 1)[0]
            out["by_status"][status] = out["by_status"].get(status, 0) + float(value)
        elif name == "aluette_clients":
            out["clients"] = float(value)
    return out


async def key_names(store: aioredis.Redis, prefix: str) -> list[str]:
    """The store's keys under the run's prefix (SCAN leaves out keys already expired)."""
    return sorted([k.decode() async for k in store.scan_iter(match=f"{prefix}:*", count=2000)])


async def store_figures(store: aioredis.Redis, prefix: str) -> dict[str, float]:
    keys = len(await key_names(store, prefix))
    info = await store.info("memory")
    return {"keys": keys, "used_mib": round(int(info["used_memory"]) / 2**20, 2)}


async def keys_after_their_lifetimes(store: aioredis.Redis, prefix: str, before: float,
                                     longest: float) -> dict[str, Any]:
    """Every key has a lifetime: after the run, the store's keys under the prefix, read once a
    second until no more are left than before the first lifecycle plus the few the run keeps
    once per store (``KEPT_ONCE_PER_STORE``), for at most the longest lifetime the run sets
    and 15 s more. A key kind made per table, player or match with no lifetime, or one that
    something renews for ever, stays, and the run fails whatever its pace was."""
    started = time.monotonic()
    while True:
        names = await key_names(store, prefix)
        expired = len(names) <= before + KEPT_ONCE_PER_STORE
        if expired or time.monotonic() - started >= longest + 15:
            break
        await asyncio.sleep(1)
    return {"before_the_run": before, "left": len(names), "expired": expired,
            "waited_s": round(time.monotonic() - started, 1),
            "left_names": [n.removeprefix(f"{prefix}:") for n in names[:20]]}


def growth(samples: list[dict[str, Any]], pick: Any) -> dict[str, float]:
    """Mean of the first tenth of ``samples`` vs the mean of their last tenth."""
    n = len(samples)
    span = max(1, n // 10)
    early = [pick(s) for s in samples[:span]]
    late = [pick(s) for s in samples[n - span:]]
    a, b = sum(early) / len(early), sum(late) / len(late)
    return {"from": round(a, 2), "to": round(b, 2),
            "growth_pct": round(100 * (b - a) / a, 2) if a else 0.0}


def per_thousand(samples: list[dict[str, Any]], pick: Any) -> float:
    """The least-squares slope of ``pick`` against lifecycles done, per 1,000 lifecycles."""
    xs = [s["lifecycles"] for s in samples]
    ys = [pick(s) for s in samples]
    if len(xs) < 3 or max(xs) == min(xs):
        return 0.0
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = (sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
             / sum((x - mx) ** 2 for x in xs))
    return round(1000 * slope, 3)


#: The allocator figures the verdict follows (bench/memprobe.py).
PROBED = ("rss_mib", "in_use_mib", "free_mib", "heap_mib", "pymalloc_in_use_mib",
          "pymalloc_arenas", "gc_objects")


def probes(paths: list[Path], warmup: float) -> list[list[dict[str, Any]]]:
    """Each probed process's figures while lifecycles ran, past the warm-up."""
    out = []
    for path in paths:
        lines = [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []
        lines = lines[:-1]                         # the last was taken after the run
        out.append(lines[int(warmup * len(lines)):])
    return out


def verdict(samples: list[dict[str, Any]], soak: Soak, seconds: float,
            drained: list[dict[str, Any]], warmup: float,
            quiet: dict[str, Any] | None, lifetimes: dict[str, Any]) -> dict[str, Any]:
    """RSS and tasks from ``warmup`` of the run to its end (while lifecycles ran), the
    store's keys gone once their lifetimes ran out, every table gone once the run is over,
    no unexpected error."""
    active = [s for s in samples if s["active"]]
    after = active[int(warmup * len(active)):] or active
    procs = len(samples[-1]["processes"])

    def rss(i: int) -> Any:
        return lambda s: s["processes"][i]["rss_mib"]

    def tasks(i: int) -> Any:
        return lambda s: s["processes"][i]["tasks"]

    rss_growth = [growth(after, rss(i)) for i in range(procs)]
    task_growth = [growth(after, tasks(i)) for i in range(procs)]
    slopes = [{"rss_mib": per_thousand(after, rss(i)), "tasks": per_thousand(after, tasks(i))}
              for i in range(procs)]
    # The keys while lifecycles run are printed, not judged: they follow the pace (about
    # five per lifecycle of the last two retentions), and the pace moves with the machine.
    n = len(active)
    middle = [s["store"]["keys"] for s in active[n // 3: 2 * n // 3]] or [0]
    late_keys = growth(after, lambda s: s["store"]["keys"])["to"]
    other_errors = {k: v for k, v in soak.errors.items() if k not in PROVOKED}
    left = [{"tables": p["tables"], "tasks": p["tasks"]} for p in drained[-1]["processes"]]
    clean = all(p["tables"] == 0 for p in left)
    # Tasks compared with no table open (a few per open table otherwise): at the warm-up's
    # end and after the run. A task left behind per lifecycle would be thousands more.
    idle = [{"from": a["tasks"], "to": b["tasks"], "tables_then": a["tables"]}
            for a, b in zip(quiet["processes"], drained[-1]["processes"], strict=True)] \
        if quiet else []
    tasks_flat = bool(idle) and all(
        t["tables_then"] == 0 and t["to"] - t["from"] <= max(3, 0.05 * t["from"]) for t in idle)
    ok = (all(r["growth_pct"] < 5 for r in rss_growth) and tasks_flat and lifetimes["expired"]
          and clean and not other_errors and soak.done > 0)
    return {"verdict": "pass" if ok else "fail", "lifecycles": soak.done,
            "by_kind": dict(soak.kinds),
            "mean_s_by_kind": {k: round(soak.seconds[k] / v, 2) for k, v in soak.kinds.items()},
            "seconds": round(seconds, 1),
            "lifecycles_per_s": round(soak.done / seconds, 2) if seconds else 0,
            "warmup": warmup, "rss_mib": rss_growth, "tasks": task_growth,
            "idle_tasks": idle, "quiet_at_lifecycles": quiet["lifecycles"] if quiet else None,
            "per_1000_lifecycles": slopes,
            "store_keys": {"middle_max": max(middle), "end": late_keys},
            "store_keys_after_their_lifetimes": lifetimes,
            "plain": soak.plain,
            "allocators": [{k: growth(probe, lambda s, k=k: s[k])
                            for k in PROBED if probe and k in probe[0]}
                           for probe in probes(soak.probes, warmup)],
            "after_the_run": left, "all_tables_gone": clean,
            "errors": dict(soak.errors), "unexpected_errors": other_errors,
            "samples": len(samples)}


async def soak_run(args: argparse.Namespace, urls: list[str], store: aioredis.Redis,
                   prefix: str, servers: list[subprocess.Popen[str]],
                   probe_files: list[Path]) -> dict[str, Any]:
    soak = Soak(urls)
    soak.plain = args.plain
    soak.probes = probe_files
    soak.pids = [p.pid for p in servers] if probe_files else []
    samples: list[dict[str, Any]] = []
    started = time.monotonic()
    stop = asyncio.Event()

    def finished() -> bool:
        if args.lifecycles:
            return soak.done + sum(soak.errors.values()) >= args.lifecycles
        return time.monotonic() - started >= args.seconds

    def warmed_up() -> bool:
        if args.lifecycles:
            return soak.done + sum(soak.errors.values()) >= args.warmup * args.lifecycles
        return time.monotonic() - started >= args.warmup * args.seconds

    # The quiet point: once warmed up, the workers stop taking lifecycles; the last one to
    # stop waits for every table to be swept, samples, and lets them all go on.
    going = asyncio.Event()
    going.set()
    running, resting, settling = args.concurrency, 0, False
    quiet: dict[str, Any] | None = None

    async def drain() -> list[dict[str, Any]]:
        """Samples once a second until no process holds a table (at most 30 s): every
        table ends and is swept within seconds (--table-ttl 2, --waiting-ttl 3)."""
        seen: list[dict[str, Any]] = []
        for _ in range(30):
            await asyncio.sleep(1)
            await sample()
            seen.append(samples[-1])
            if all(p["tables"] == 0 for p in samples[-1]["processes"]):
                break
        return seen

    async def settle() -> None:
        nonlocal quiet, settling
        if settling or going.is_set() or resting < running:
            return
        settling = True
        quiet = (await drain())[-1]
        going.set()

    async def worker() -> None:
        nonlocal running, resting
        try:
            while not finished() and not stop.is_set():
                if quiet is None and warmed_up():
                    going.clear()
                    resting += 1
                    await settle()
                    await going.wait()
                await soak.lifecycle()
        finally:
            running -= 1
            await settle()

    async def sample() -> None:
        for pid in soak.pids:                      # bench/memprobe.py writes a line
            os.kill(pid, signal.SIGUSR1)
        figures = [await scrape(u) for u in urls]
        line = {"t": round(time.monotonic() - started, 1), "lifecycles": soak.done,
                "active": not finished() and going.is_set(),
                "processes": figures, "store": await store_figures(store, prefix),
                "errors": dict(soak.errors)}
        samples.append(line)
        print(json.dumps(line), flush=True)

    async def sampler() -> None:
        while not stop.is_set():
            await sample()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), args.interval)

    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, stop.set)
    sampling = asyncio.create_task(sampler())
    await asyncio.gather(*(worker() for _ in range(args.concurrency)))
    seconds = time.monotonic() - started
    stop.set()
    await sampling
    drained = await drain()
    lifetimes = await keys_after_their_lifetimes(
        store, prefix, samples[0]["store"]["keys"], 2 * args.retention)
    return verdict(samples, soak, seconds, drained, args.warmup, quiet, lifetimes)


def start_server(url: str, prefix: str, port: int, log: Path, retention: float,
                 extra: list[str], probe: Path | None) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    keep = str(int(retention))
    run = ([str(ROOT / "bench" / "memprobe.py"), str(probe)] if probe is not None
           else ["-m", "server.app"])
    proc = subprocess.Popen(
        [sys.executable, *run, "--port", str(port), "--redis-url", url,
         "--key-prefix", prefix, *SERVER_FLAGS, "--record-ttl", keep, "--session-ttl", keep,
         "--history-ttl", keep,
         "--table-key-ttl", str(2 * int(retention)), *extra],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=open(log, "w"),  # noqa: SIM115
        text=True)
    assert proc.stdout is not None
    while "listening on" not in (line := proc.stdout.readline()):
        if not line:
            raise SystemExit(f"the server did not start: see {log}")
    return proc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lifecycles", type=int, default=0,
                        help="stop after this many lifecycles (default: --seconds)")
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--interval", type=float, default=10.0)
    parser.add_argument("--redis-url", default="", help="an existing store (default: start "
                        "a Valkey); only keys under the run's own prefix are touched")
    parser.add_argument("--key-prefix", default="")
    parser.add_argument("--retention", type=float, default=60.0,
                        help="seconds records and sessions are kept (the store's keys level "
                        "off after about this long)")
    parser.add_argument("--warmup", type=float, default=0.1,
                        help="share of the run left out of the growth figures")
    parser.add_argument("--plain", type=int, default=0,
                        help="run the first N processes with --full-gc 0 --malloc-trim 0 "
                        "(to compare)")
    parser.add_argument("--probe", action="store_true",
                        help="the processes report their allocators (bench/memprobe.py)")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="aluette-soak-"))
    valkey, url = own_store(tmp, args.redis_url)
    prefix = args.key_prefix or f"aluette-soak-{uuid.uuid4().hex[:8]}"
    servers: list[subprocess.Popen[str]] = []
    try:
        ports = [free_port(), free_port()]
        probe_files = [tmp / f"probe{i}.jsonl" for i in range(len(ports))] if args.probe \
            else []
        for i, port in enumerate(ports):
            extra = ["--full-gc", "0", "--malloc-trim", "0"] if i < args.plain else []
            servers.append(start_server(url, prefix, port, tmp / f"server{i}.log",
                                        args.retention, extra,
                                        probe_files[i] if probe_files else None))
        urls = [f"ws://127.0.0.1:{p}" for p in ports]

        async def go() -> dict[str, Any]:
            store = aioredis.from_url(url)
            try:
                return await soak_run(args, urls, store, prefix, servers, probe_files)
            finally:
                await store.aclose()

        result = asyncio.run(go())
        result["server_logs"] = str(tmp)
        print(json.dumps(result), flush=True)
    finally:
        stop_process(*servers)
        release_store(valkey, url, prefix)


if __name__ == "__main__":
    main()
