"""Fixtures for durability tests: in-process servers and real server processes."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from server.app import running
from tests.server.conftest import server_settings
from tests.server.netclient import NetClient


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ServerProcess:
    """``aluette-server`` as a real OS process, so it can be SIGKILLed and restarted."""

    def __init__(self, args: list[str]) -> None:
        self.args = args
        self.proc: asyncio.subprocess.Process | None = None
        self.output: list[str] = []

    async def start(self) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "server.app", *self.args,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env=env)
        async with asyncio.timeout(60):
            while True:
                line = (await self.proc.stdout.readline()).decode()
                if not line:
                    raise RuntimeError("server exited:\n" + "".join(self.output))
                self.output.append(line)
                # Its own line, printed once it serves (the websockets library logs a
                # "listening on" of its own before the server is done starting).
                if "aluette-server listening on" in line:
                    break
        asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        assert self.proc and self.proc.stdout
        while line := await self.proc.stdout.readline():
            self.output.append(line.decode())

    async def kill(self) -> None:
        assert self.proc
        self.proc.send_signal(signal.SIGKILL)
        await self.proc.wait()

    async def terminate(self) -> int:
        assert self.proc
        self.proc.send_signal(signal.SIGTERM)
        async with asyncio.timeout(30):
            return await self.proc.wait()


@pytest.fixture
async def server_process(redis_url: str, key_prefix: str, redis_client: Any
                         ) -> AsyncIterator[Callable[..., Any]]:
    """Start ``aluette-server`` processes on one port against the test Redis."""
    started: list[ServerProcess] = []
    port = free_port()

    async def start(*extra: str) -> ServerProcess:
        proc = ServerProcess(["--port", str(port), "--redis-url", redis_url,
                              "--key-prefix", key_prefix, *extra])
        await proc.start()
        started.append(proc)
        return proc

    start.url = f"ws://127.0.0.1:{port}"  # type: ignore[attr-defined]
    yield start
    for p in started:
        if p.proc and p.proc.returncode is None:
            p.proc.kill()
            await p.proc.wait()


@pytest.fixture
async def inproc(redis_url: str, key_prefix: str, redis_client: Any):
    async with running(server_settings(redis_url, key_prefix)) as srv:
        yield srv


async def reconnect(old: NetClient, url: str) -> NetClient:
    """What a real client does after a drop: hello with its newest token, then resume every
    table with the last sequence number it saw. The new client keeps the old one's events
    so a test can read the whole stream."""
    token = old.welcome["session"]
    new = await NetClient.open(url, old.welcome["name"], token=token, ids=old.ids)
    new.events = list(old.events)
    new.acted_turns = set(old.acted_turns)
    tables = {e["table"] for e in old.events}
    for table in tables:
        last = max(old.seqs(table))
        await new.call("resume", token=new.welcome["session"], table=table, last_seq=last)
    return new
