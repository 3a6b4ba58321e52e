"""A soak of network bots (issue 12, "done when"): several real ``aluette --bot`` processes
play whole matches against a real ``aluette-server`` process, and none of them crashes.

Each table is four bot processes of mixed levels: the first creates the table (chanter on,
R9; a signals mode, R16; several deals, R14) and prints its id, the other three join it.
Every process must exit 0 with the match over, print no traceback and no refused command;
the server must log no failure; and each table's record (R17), read back over the
protocol as any client would, must verify (R18) and show four players who were never
replaced by a server bot (a crashed or stalled network bot would have been).

The quick case (one table) runs in every suite; the soak (four tables at once, every level,
every signals mode) is marked ``slow``.
"""

from __future__ import annotations

import asyncio
import re
import select
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import protocol
from client_cli.connection import Connection
from server.game.record import verify_record

from .conftest import BIN, ServerProcess, cli_env

SEATED = re.compile(r"(\w+) bot sits at seat (\d) of table (t[0-9a-f]+)")


@dataclass
class BotProcess:
    level: str
    name: str
    proc: subprocess.Popen[str]
    log: Path

    def output(self) -> str:
        return self.log.read_text()


def spawn_bot(server: ServerProcess, level: str, log: Path, seed: int,
              *extra: str) -> BotProcess:
    name = f"{level}-{seed}"
    out = open(log, "w")  # noqa: SIM115 - the child owns it
    proc = subprocess.Popen(
        [str(BIN / "aluette"), "--server", server.url, "--bot", level, "--seed", str(seed),
         "--name", name, *extra],
        stdout=out, stderr=subprocess.STDOUT, text=True, env=cli_env())
    out.close()
    return BotProcess(level, name, proc, log)


def wait_for_table(bot: BotProcess, timeout: float = 30) -> str:
    """The id of the table ``bot`` created, from its first line (no sleeping: polls the
    process and its log with a deadline)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if m := SEATED.search(bot.output()):
            return m.group(3)
        if bot.proc.poll() is not None:
            break
        select.select([], [], [], 0.05)
    raise AssertionError(f"{bot.level} bot did not create a table:\n{bot.output()[-3000:]}")


def start_table(server: ServerProcess, tmp: Path, n: int, levels: list[str], deals: int,
                signals: str) -> tuple[str, list[BotProcess]]:
    first = spawn_bot(server, levels[0], tmp / f"t{n}-s0.log", 100 * n,
                      "--deals", str(deals), "--chanter", "--signals", signals)
    table = wait_for_table(first)
    rest = [spawn_bot(server, lvl, tmp / f"t{n}-s{i}.log", 100 * n + i, "--table", table)
            for i, lvl in enumerate(levels[1:], start=1)]
    return table, [first, *rest]


def wait_all(bots: list[BotProcess], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    for b in bots:
        try:
            b.proc.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for other in bots:
                other.proc.kill()
            raise AssertionError(f"{b.level} bot still running after {timeout} s:\n"
                                 f"{b.output()[-3000:]}") from None


async def read_record(url: str, table: str) -> dict[str, Any]:
    conn = Connection(url, "soak-reader", on_event=lambda *a: None, on_status=lambda *a: None)
    await conn.start()
    try:
        result = await conn.call(protocol.GetRecord, table=table)
        return dict(result["record"])
    finally:
        await conn.close()


def check_tables(server: ServerProcess, tables: dict[str, list[BotProcess]],
                 deals: int) -> None:
    for table, bots in tables.items():
        for b in bots:
            out = b.output()
            assert b.proc.returncode == 0, f"{b.level} bot at {table}:\n{out[-3000:]}"
            assert "Traceback" not in out, out[-3000:]
            assert "Match over" in out, out[-3000:]
            # A refused command means the bot's model was wrong (it resyncs and goes on,
            # but it should not happen at all when nobody else plays its seat).
            assert "✖" not in out and "Error" not in out, out[-3000:]
        seat_of = {b.name: int(_seated(b).group(2)) for b in bots}
        assert sorted(seat_of.values()) == [0, 1, 2, 3]
        record = asyncio.run(read_record(server.url, table))
        summary = verify_record(record)
        assert len(summary["deals"]) == deals and summary["fair"] == "proven"
        # Nobody was replaced: every seat is still the network bot that sat there.
        assert record["seats"] == sorted(seat_of, key=seat_of.__getitem__), record["seats"]
    server_log = "".join(p.read_text(errors="replace")
                         for p in sorted(server.log_dir.glob("server-*.log")))
    assert "Traceback" not in server_log and "ERROR" not in server_log, server_log[-3000:]


def _seated(bot: BotProcess) -> re.Match[str]:
    m = SEATED.search(bot.output())
    assert m, bot.output()[-3000:]
    return m


def test_four_bot_processes_play_a_match(server_proc: ServerProcess, tmp_path: Path) -> None:
    """R9, R14, R16, R17, R18: one table of four ``aluette --bot`` processes, one of each
    level, chanter on, risky signals, two deals."""
    table, bots = start_table(server_proc, tmp_path, 1, ["expert", "random", "normal", "easy"],
                              deals=2, signals="risky")
    wait_all(bots, timeout=120)
    check_tables(server_proc, {table: bots}, deals=2)


@pytest.mark.slow
def test_soak_sixteen_bot_processes_at_four_tables(server_proc: ServerProcess,
                                                   tmp_path: Path) -> None:
    """R9, R13, R14, R16: sixteen bot processes at four tables at once, every level at
    every table position and every signals mode, five deals each; zero crashes."""
    rotations = [["random", "easy", "normal", "expert"], ["easy", "normal", "expert", "random"],
                 ["normal", "expert", "random", "easy"], ["expert", "random", "easy", "normal"]]
    modes = ["risky", "private", "off", "risky"]
    tables: dict[str, list[BotProcess]] = {}
    for n, (levels, mode) in enumerate(zip(rotations, modes, strict=True), start=1):
        table, bots = start_table(server_proc, tmp_path, n, levels, deals=5, signals=mode)
        tables[table] = bots
    wait_all([b for bots in tables.values() for b in bots], timeout=400)
    check_tables(server_proc, tables, deals=5)


def test_a_bot_creating_a_table_passes_its_options() -> None:
    """``--chanter`` and ``--signals`` reach the table a network bot creates."""
    from client_cli.main import bot_table_options, parse_args

    args = parse_args(["--bot", "easy", "--deals", "3", "--chanter", "--signals", "off"])
    assert bot_table_options(args) == {"deals": 3, "chanter": True, "signals": "off"}
    assert bot_table_options(parse_args(["--bot", "easy"])) == {"deals": 5}

