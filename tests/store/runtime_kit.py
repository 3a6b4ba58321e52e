"""Helpers for the storage-runtime tests: an owner process, a stranger, process checks.

The process checks here are written independently of ``server/store/embedded.py`` (they
read /proc themselves), so a bug in the code under test cannot hide itself.
"""

from __future__ import annotations

import asyncio
import json
import os
import select
import signal
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

OWNER_TIMEOUT_S = 60


class Owner:
    """``tests/store/storage_owner.py`` as a real OS process."""

    def __init__(self, proc: asyncio.subprocess.Process, ready: dict[str, Any]) -> None:
        self.proc = proc
        self.ready = ready

    @classmethod
    async def start(cls, *args: str, expect_ready: bool = True) -> Owner:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tests.store.storage_owner", *args,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        assert proc.stdout is not None
        async with asyncio.timeout(OWNER_TIMEOUT_S):
            line = await proc.stdout.readline()
        if not line:
            await proc.wait()
            raise AssertionError(f"owner exited with {proc.returncode} before saying ready")
        ready = json.loads(line)
        if expect_ready and "error" in ready:
            raise AssertionError(f"owner refused: {ready}")
        return cls(proc, ready)

    @property
    def pid(self) -> int:
        return int(self.ready["pid"])

    @property
    def store_pid(self) -> int:
        return int(self.ready["store_pid"])

    @property
    def port(self) -> int:
        return int(self.ready["port"])

    async def call(self, command: str) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(command.encode() + b"\n")
        await self.proc.stdin.drain()
        async with asyncio.timeout(OWNER_TIMEOUT_S):
            line = await self.proc.stdout.readline()
        assert line, f"owner exited while answering {command!r}"
        reply: dict[str, Any] = json.loads(line)
        return reply

    async def kill(self) -> None:
        """SIGKILL, as a crash would."""
        self.proc.send_signal(signal.SIGKILL)
        await self.proc.wait()

    async def quit(self) -> int:
        await self.call("quit")
        async with asyncio.timeout(OWNER_TIMEOUT_S):
            return await self.proc.wait()

    async def ensure_gone(self) -> None:
        if self.proc.returncode is None:
            await self.kill()


class Stranger:
    """Another program listening on a port: counts every connection it is offered."""

    def __init__(self) -> None:
        self.connections = 0
        self.received = b""
        self._server: asyncio.Server | None = None

    async def _on_connect(self, reader: asyncio.StreamReader,
                          writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            async with asyncio.timeout(5):
                self.received += await reader.read(4096)
            writer.write(b"+PONG\r\n")  # answers like a store would, to tempt the server
            await writer.drain()
        except (TimeoutError, OSError):
            pass
        finally:
            writer.close()

    async def listen(self, port: int) -> None:
        self._server = await asyncio.start_server(self._on_connect, "127.0.0.1", port)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()


def store_pids_on(data_dir: Path) -> list[int]:
    """Pids of Valkey/Redis servers whose working directory is ``data_dir``."""
    target = str(data_dir.resolve())
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            exe = os.path.basename(os.readlink(f"/proc/{entry.name}/exe"))
            cwd = os.readlink(f"/proc/{entry.name}/cwd")
        except OSError:
            continue
        if cwd == target and ("valkey" in exe or "redis" in exe):
            found.append(int(entry.name))
    return sorted(found)


def alive(pid: int) -> bool:
    """True if ``pid`` runs (a zombie, which holds no port and no file, counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


async def wait_gone(pid: int, timeout: float) -> bool:
    """Wait for ``pid`` to exit (pidfd: the event itself, no polling); False on timeout."""
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True

    def wait() -> bool:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        return bool(poller.poll(int(timeout * 1000)))

    try:
        return await asyncio.to_thread(wait)
    finally:
        os.close(pidfd)


async def wait_until(predicate: Callable[[], bool], timeout: float) -> None:
    """Wait for ``predicate()`` (a state another task changes), failing after ``timeout``."""
    async with asyncio.timeout(timeout):
        # The state is a plain attribute of the object under test (no event to await):
        # re-check it every 20 ms until it holds or the timeout fails the test.
        while not predicate():  # noqa: ASYNC110
            await asyncio.sleep(0.02)


def proc_file(pid: int, name: str) -> bytes:
    """``/proc/<pid>/<name>`` (cmdline, environ...)."""
    with open(f"/proc/{pid}/{name}", "rb") as f:
        return f.read()


def modes_under(root: Path) -> dict[str, int]:
    """``{relative path: permission bits}`` for ``root`` and everything below it."""
    out = {".": stat.S_IMODE(root.lstat().st_mode)}
    for path in root.rglob("*"):
        out[str(path.relative_to(root))] = stat.S_IMODE(path.lstat().st_mode)
    return out
