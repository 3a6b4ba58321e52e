"""The terminal client's player commands (issue 27): `play` (play now) with its visible
wait and `cancel`, `history`, `profile`, their help. The real client in a pty against a
real server."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from tests.server.netclient import NetClient

from .conftest import TURN, ServerProcess, plain


@pytest.fixture
def quick_queue(redis_url: str, key_prefix: str, redis_client: Any, tmp_path: Path,
                monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("ALUETTE_QUEUE_BOTS_AFTER", "1")
    monkeypatch.setenv("ALUETTE_QUEUE_TICK", "0.1")
    monkeypatch.setenv("ALUETTE_BOT_WORKERS", "0")     # bots in threads: no niced processes
    server = ServerProcess(redis_url, key_prefix, tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def test_play_now_waits_visibly_is_seated_with_bots_and_the_match_is_in_history(
        quick_queue: ServerProcess, spawn) -> None:
    ana = spawn("--server", quick_queue.url, "--name", "Ana")
    ana.expect("Type `help`")
    ana.send("help play")
    ana.expect("`cancel` stops waiting")
    ana.send("play deals=2")
    ana.expect("Looking for players")
    ana.send("cancel")
    ana.expect("You left the queue.")
    ana.send("play casual deals=1 delay=0")
    ana.expect(r"Looking for players \(casual")
    table = ana.expect(re.compile(r"Seated at table (t[0-9a-f]+), seat 0")).group(1)
    while ana.expect_any([re.escape(TURN), r"Match over: "]) == 0:
        ana.send("1")
    ana.send("history")
    ana.expect("Finished matches \\(your\\)")
    ana.expect(re.escape(table))
    ana.send("profile Nobody")
    ana.expect("registered player has finished a match")


async def test_the_request_that_makes_the_table_is_seated_not_left_waiting(
        quick_queue: ServerProcess, spawn) -> None:
    """The fourth request makes the table at once: its ``matched`` is handled before the
    terminal reads the answer to ``queue``. The terminal says it is seated, and never that
    it is looking for players (nor a wait's ticker). The terminal is driven in a thread
    (pexpect blocks), the three other players on the test's loop."""
    others = [await NetClient.open(quick_queue.url, n) for n in ("Bo", "Cy", "Di")]
    try:
        for c in others:
            await c.call("queue", rated=False, options={"deals": 1, "bot_delay_ms": 0})

        def fourth() -> str:
            ana = spawn("--server", quick_queue.url, "--name", "Ana")
            ana.expect("Type `help`")
            ana.send("play casual deals=1 delay=0")
            ana.expect(re.compile(r"Seated at table t[0-9a-f]+, seat \d"))
            ana.send("help play")               # runs once `play` has read its answer
            ana.expect("`cancel` stops waiting")
            out = plain(ana.output)
            return out[out.index("Seated at table"):]

        after = await asyncio.to_thread(fourth)
        assert "Looking for players" not in after
        assert "looking for players" not in after
    finally:
        for c in others:
            await c.close()
