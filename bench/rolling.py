"""Rolling upgrade (issue 30, item 3): three server processes, every one stopped (SIGTERM)
and started again in turn while the tables play.

    python bench/rolling.py [--tables 100] [--deals 3] [--redis-url URL]

Starts a Valkey store (or uses ``--redis-url``, under a key prefix of its own) and three
``aluette-server`` processes on it sharing one port (``SO_REUSEPORT``, as ``--workers``
does: the kernel hands each new connection to a live process, as the proxy of
``deploy/haproxy.cfg`` does in a deployment). Each table is four network bots
(``client_cli``'s ``NetBot``, level ``random``, a move every ``--pace-s``): real clients
with the terminal client's own reconnect-and-resume logic, nothing added. Once every table
plays, each process in turn gets SIGTERM (it stops listening, refuses new commands, lets
stored work finish, hands its leases back and closes its clients with 1001), exits, and is
started again on the same port before the next one stops. The clients reconnect and resume
by themselves.

Prints one JSON object: each restart's stop and start time; every connection drop a client
saw and how long it took that client to be back (``lost`` to ``resumed``: p50, p99, max, and
the share back within 5 s); the moves each seat had acknowledged against the finished
match's record (``lost_moves``: acknowledged but not in the record; ``unacknowledged``:
in the record, never acknowledged: a reply lost with the connection, which the client
resent and the server answered from its replies, is not one); clients that gave up; and
matches that did not finish.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchlib import free_port, own_store, release_store, start_server
from rich.console import Console

import protocol
from client_cli.model import TableModel
from client_cli.netbot import NetBot
from server.game.record import verify_record

BACK_WITHIN_S = 5.0
SERVER_FLAGS = ["--bot-workers", "0", "--busy-lag-ms", "0", "--lease-ttl", "3",
                "--lease-renew", "1", "--max-tables", "100000",
                "--max-tables-per-player", "100000", "--max-tables-per-address", "100000",
                "--max-connections", "100000", "--max-connections-per-address", "100000",
                "--new-sessions-per-minute", "1000000", "--rate-per-second", "1000000",
                "--rate-burst", "1000000",
                # Every client of this bench connects from 127.0.0.1: one address for 400
                # players. Resumes paced per address (5 a second, issue 30's resume
                # amplification) made a restart's 130 clients queue for up to 36 s at 100
                # tables; real players come from their own addresses.
                "--resumes-per-address", "0"]


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q * len(values)))], 3)


class Seat(NetBot):
    """A network bot that remembers the moves it was acknowledged, its drops and returns,
    and the record of its match."""

    def __init__(self, url: str, name: str, pace_s: float, **kw: Any) -> None:
        super().__init__(url, "random", name, Console(file=io.StringIO()), quiet=True, **kw)
        self.pace_s = pace_s
        self.acked: list[str] = []
        self.drops: list[float] = []
        self.backs: list[float] = []
        self.fatal: str | None = None
        self.record: dict[str, Any] | None = None
        self.task: asyncio.Task[int] | None = None
        call = self.conn.call

        async def counted(cls: Any, **fields: Any) -> dict[str, Any]:
            result = await call(cls, **fields)
            if cls is protocol.Play:
                self.acked.append(fields["card"])
            return result

        self.conn.call = counted  # type: ignore[method-assign]

    async def _act(self, model: TableModel) -> None:
        """A person's pace: the tables are still playing while the processes restart."""
        await asyncio.sleep(self.pace_s)
        await super()._act(model)

    def _on_status(self, kind: str, text: str) -> None:
        now = time.monotonic()
        if kind == "lost":
            self.drops.append(now)
        elif kind == "resumed" and len(self.backs) < len(self.drops):
            self.backs.append(now)
        elif kind == "fatal":
            self.fatal = text
        super()._on_status(kind, text)

    def _on_event(self, model: TableModel, seq: int, event: protocol.EventPayload,
                  before: protocol.TableInfo | None) -> None:
        if isinstance(event, protocol.MatchOver) and model.table == self.table:
            self.record = event.record
        super()._on_event(model, seq, event, before)


def plays_by_seat(record: dict[str, Any]) -> dict[int, list[str]]:
    """Each seat's cards in the order it played them, from the record (R17, checked R18)."""
    summary = verify_record(record)
    out: dict[int, list[str]] = {0: [], 1: [], 2: [], 3: []}
    for deal, derived in zip(record["deals"], summary["deals"], strict=True):
        for cards, trick in zip(deal["tricks"], derived["tricks"], strict=True):
            for i, card in enumerate(cards):
                out[(trick["leader"] + i) % 4].append(card)
    return out


class Server:
    def __init__(self, args: list[str], log: Path) -> None:
        self.args, self.log = args, log
        self.proc: subprocess.Popen[str] | None = None

    def start(self) -> float:
        started = time.monotonic()
        self.proc = start_server(self.args, self.log, env={"ALUETTE_REUSE_PORT": "1"},
                                 append=True)
        return time.monotonic() - started

    def stop(self) -> tuple[int, float]:
        assert self.proc is not None
        started = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(60)
        return code, time.monotonic() - started


async def seat_tables(url: str, tables: int, deals: int, pace_s: float) -> list[list[Seat]]:
    """``tables`` tables of four bots, each started as its last seat is taken."""
    out: list[list[Seat]] = []
    for n in range(tables):
        first = Seat(url, f"t{n}-0", pace_s, options={"deals": deals, "first_dealer": 3,
                                             "signals": "off", "grace_s": 120})
        first.task = asyncio.ensure_future(first.run())
        async with asyncio.timeout(60):
            await first.seated.wait()
        rest = [Seat(url, f"t{n}-{i}", pace_s, table=first.table) for i in (1, 2, 3)]
        for bot in rest:
            bot.task = asyncio.ensure_future(bot.run())
            async with asyncio.timeout(60):
                await bot.seated.wait()
        out.append([first, *rest])
    return out


async def rolling(args: argparse.Namespace, url: str, servers: list[Server]) -> dict[str, Any]:
    started = time.monotonic()
    tables = await seat_tables(url, args.tables, args.deals, args.pace_s)
    bots = [b for t in tables for b in t]
    seated_s = time.monotonic() - started
    # Every table plays before the first process stops.
    # Every table plays (one of its seats sees the match) before the first process stops.
    def waiting() -> list[str]:
        return [t[0].table or "" for t in tables
                if all(b.conn.model(b.table).view is None for b in t)]
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(60):
            while waiting():  # noqa: ASYNC110
                await asyncio.sleep(0.2)
    not_started = waiting()
    # Seats that have not heard their table's match start although another seat has
    # (events from another process not delivered; they catch up when they resume).
    deaf = sum(1 for t in tables for b in t if b.conn.model(b.table).view is None)
    await asyncio.sleep(args.play_s)
    restarts = []
    for i, server in enumerate(servers):
        playing = sum(1 for t in tables if not t[0].task.done())
        code, stop_s = await asyncio.to_thread(server.stop)
        start_s = await asyncio.to_thread(server.start)
        restarts.append({"process": i, "exit_code": code, "stop_s": round(stop_s, 2),
                         "start_s": round(start_s, 2), "tables_playing": playing})
        await asyncio.sleep(args.play_s)     # play on the new process before the next stops
    finished_before_end = sum(1 for b in bots if b.task.done())
    results = await asyncio.wait([b.task for b in bots], timeout=args.finish_s)
    unfinished = len(results[1])
    for task in results[1]:
        task.cancel()
    back = [b2 - d for b in bots for d, b2 in zip(b.drops, b.backs, strict=False)]
    never_back = sum(max(0, len(b.drops) - len(b.backs)) for b in bots)
    acked = lost = unacked = 0
    mismatched_tables = 0
    from collections import Counter
    for t in tables:
        record = next((b.record for b in t if b.record is not None), None)
        if record is None:
            continue
        by_seat = plays_by_seat(record)
        bad = False
        for bot in t:
            seat = bot.conn.model(bot.table).seat
            played = by_seat[seat] if seat is not None else []
            acked += len(bot.acked)
            lost += sum((Counter(bot.acked) - Counter(played)).values())
            unacked += sum((Counter(played) - Counter(bot.acked)).values())
            bad |= played != bot.acked
        mismatched_tables += bad
    return {
        "tables": args.tables, "processes": len(servers), "deals": args.deals,
        "not_started": not_started, "seats_not_hearing_the_start": deaf,
        "seated_s": round(seated_s, 1), "restarts": restarts,
        "drops": len(back) + never_back, "back_s": {"p50": pct(back, 0.5),
                                                    "p99": pct(back, 0.99),
                                                    "max": pct(back, 1.0)},
        "back_within_5s": round(sum(1 for s in back if s <= BACK_WITHIN_S)
                                / max(1, len(back) + never_back), 4),
        "never_back": never_back,
        "clients_given_up": sum(1 for b in bots if b.fatal),
        "acknowledged_moves": acked, "lost_moves": lost, "unacknowledged_moves": unacked,
        "tables_out_of_order": mismatched_tables,
        "matches_finished": sum(1 for t in tables if any(b.record for b in t)),
        "finished_before_the_last_restart": finished_before_end // 4,
        "unfinished_bots": unfinished,
        "seconds": round(time.monotonic() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--deals", type=int, default=3)
    parser.add_argument("--pace-s", type=float, default=0.4,
                        help="seconds a bot waits before each move (a person's pace)")
    parser.add_argument("--play-s", type=float, default=3.0,
                        help="seconds of play before the first stop and after each start")
    parser.add_argument("--finish-s", type=float, default=600.0,
                        help="how long the matches may take to finish after the last restart")
    parser.add_argument("--redis-url", default="")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="aluette-rolling-"))
    valkey, url = own_store(tmp, args.redis_url)
    prefix = f"aluette-rolling-{uuid.uuid4().hex[:8]}"
    port = free_port()
    flags = ["--port", str(port), "--redis-url", url, "--key-prefix", prefix, *SERVER_FLAGS]
    servers = [Server(flags, tmp / f"server{i}.log") for i in range(3)]
    try:
        for s in servers:
            s.start()
        result = asyncio.run(rolling(args, f"ws://127.0.0.1:{port}", servers))
        failures = sum(s.log.read_text().count("Traceback") for s in servers)
        result["server_tracebacks"] = failures
        result["server_logs"] = str(tmp)
        print(json.dumps(result), flush=True)
    finally:
        for s in servers:
            if s.proc is not None and s.proc.poll() is None:
                with contextlib.suppress(Exception):
                    s.stop()
        release_store(valkey, url, prefix)


if __name__ == "__main__":
    main()
