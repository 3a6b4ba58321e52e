"""The terminal client's player commands (issue 27): `play` (play now) with its visible
wait and `cancel`, `history`, `profile`, their help. The real client in a pty against a
real server."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from .conftest import TURN, ServerProcess


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
