"""The two example bots of docs/BOT-API.md play against a real server (issue 33, Build 3).

``examples/bot.py`` (websockets + msgpack) and ``examples/bot.mjs`` (node + the vendored
msgpack) use nothing of the project's code. Each creates a table, fills it with the
server's bots (their delay at 0, so a match is quick), plays one whole match with legal
cards and exits 0, with no command refused: each bot counts the error replies it got,
prints the count, and prints every refusal on stderr. One match each in the normal suite,
one across a SIGKILLed and restarted server, and 20 each under ``slow``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from server.app import Running, running
from tests.durability.conftest import ServerProcess, free_port
from tests.server.conftest import server_settings
from tests.server.netclient import NetClient

ROOT = Path(__file__).resolve().parents[2]
BOTS = {"python": [sys.executable, str(ROOT / "examples" / "bot.py")],
        "node": ["node", str(ROOT / "examples" / "bot.mjs")]}
OVER = re.compile(r"^match over: (team0|team1|draw), points \[\d+, \d+\]; 0 commands refused$",
                  re.M)


@contextlib.asynccontextmanager
async def example_bot(kind: str, url: str, *args: str) -> AsyncIterator[Any]:
    """The example bot as a process of its own (in a group of its own: node 20 runs a child
    node with the WebSocket flag), killed with its group if the test ends first."""
    if kind == "node" and shutil.which("node") is None:
        pytest.skip("node is not installed")
    proc = await asyncio.create_subprocess_exec(
        *BOTS[kind], url, *args, cwd=ROOT, start_new_session=True,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        yield proc
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()


async def finished(proc: Any, timeout: float = 120) -> str:
    """Wait for the bot to end; it must exit 0 after a whole match with nothing refused."""
    out, err = await asyncio.wait_for(proc.communicate(), timeout)
    assert proc.returncode == 0, (out.decode(), err.decode())
    assert OVER.search(out.decode()), out.decode()
    assert "refused:" not in err.decode(), err.decode()
    return out.decode()


@pytest.fixture
async def server(redis_url: str, key_prefix: str, redis_client: Any) -> AsyncIterator[Running]:
    async with running(server_settings(redis_url, key_prefix)) as srv:
        yield srv


@pytest.mark.parametrize("kind", list(BOTS))
async def test_an_example_bot_plays_a_whole_match(server: Running, kind: str) -> None:
    async with example_bot(kind, f"ws://127.0.0.1:{server.port}") as bot:
        await finished(bot)
    [table] = list(server.hub.lobby.tables.values())
    assert table.match is not None and table.match.over
    # It said it is a bot: its seat shows it (protocol 1.5), beside the server's three.
    assert [s.bot for s in table.info().seats] == [True] * 4
    assert [s.kind for s in table.state.seats] == ["human", "bot", "bot", "bot"]


@pytest.mark.slow
@pytest.mark.parametrize("kind", list(BOTS))
async def test_an_example_bot_plays_twenty_matches(server: Running, kind: str) -> None:
    for _ in range(20):
        async with example_bot(kind, f"ws://127.0.0.1:{server.port}") as bot:
            await finished(bot)
    tables = list(server.hub.lobby.tables.values())
    assert len(tables) == 20 and all(t.match is not None and t.match.over for t in tables)


@pytest.mark.parametrize("kind", list(BOTS))
async def test_an_example_bot_survives_a_killed_server(kind: str, redis_url: str,
                                                       key_prefix: str,
                                                       redis_client: Any) -> None:
    """The server is SIGKILLed in the middle of the match and started again on the same
    port and store: the bot reconnects, resumes, resends, and finishes the match."""
    port = free_port()
    args = ["--port", str(port), "--redis-url", redis_url, "--key-prefix", key_prefix]
    servers = [ServerProcess(args), ServerProcess(args)]
    url = f"ws://127.0.0.1:{port}"
    try:
        await servers[0].start()
        async with example_bot(kind, url, "2", "30") as bot:   # two deals, bots at 30 ms
            assert bot.stdout is not None
            first = (await asyncio.wait_for(bot.stdout.readline(), 30)).decode()
            table = re.fullmatch(r"table (\S+), seat 0\n", first)
            assert table, first
            watcher = await NetClient.open(url, "Sam")
            await watcher.call("spectate", table=table.group(1))
            await watcher.wait_until(lambda: len(watcher.payloads("card_played")) >= 6, 30)
            await servers[0].kill()                  # in the middle of the first deal
            await servers[1].start()
            await finished(bot)
    finally:
        for proc in servers:
            if proc.proc is not None and proc.proc.returncode is None:
                proc.proc.kill()
                await proc.proc.wait()
