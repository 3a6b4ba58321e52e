"""``aluette play``'s server: the real ``aluette-server`` program, run as a child process.

The client sits above the server in the layers and never imports it (docs/ARCHITECTURE.md,
"The layers"): a local game talks to the same program, over the same websocket, as a game
on a remote server. The child listens on a free port of 127.0.0.1 (``--port 0``) with the
embedded store in ``data_dir``, and says where on its first line of output; this module
reads that line, hands the URL to the client, and stops the server (SIGTERM: it closes its
tables and its store in order) when the client is done.

The child gets a session of its own, so the Ctrl-C a player types at the prompt reaches
the client only (the client asks before it leaves a live match); on Linux it is also told
to stop if the client dies without a word.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import BinaryIO

#: The server's first line names its address: ``aluette-server listening on ws://...``.
LISTENING = re.compile(rb"listening on (ws://[0-9.]+:\d+)")
#: How long a server may take to start its embedded store and listen.
START_TIMEOUT_S = 60.0
#: How long it may take to close its tables and its store when asked to stop.
STOP_TIMEOUT_S = 15.0


class LaunchFailed(Exception):
    """The local server did not start; the message says why (its own last words)."""


def server_command(data_dir: Path) -> list[str]:
    """The ``aluette-server`` program for a private local game: 127.0.0.1 on a free port,
    the embedded store in ``data_dir`` (never a Redis from the environment), no admission
    control."""
    return [sys.executable, "-m", "server.app", "--host", "127.0.0.1", "--port", "0",
            "--data-dir", str(data_dir), "--key-prefix", "aluette-play", "--redis-url", "",
            # One player on their own machine: admission control (which turns new players
            # away while the loop lags) would only refuse that player on a busy computer.
            "--busy-lag-ms", "0"]


def _environment() -> dict[str, str]:
    """The client's environment without the server's settings (``ALUETTE_*``,
    ``REDIS_URL``): a local game is the same whatever a shell exported for a real server."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith("ALUETTE_") and k != "REDIS_URL"}


def _die_with_parent() -> None:
    """In the child, before it runs: SIGTERM when the client dies (Linux only)."""
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)           # PR_SET_PDEATHSIG


async def _address(proc: asyncio.subprocess.Process) -> str:
    """Read the server's output until it says where it listens."""
    assert proc.stdout is not None
    while True:
        line = await proc.stdout.readline()
        if not line:
            raise LaunchFailed("the local server stopped before it listened")
        found = LISTENING.search(line)
        if found:
            return found.group(1).decode()


def _append(log: Path) -> BinaryIO:
    """The server's log file, opened for the child to write to (a local file: instant)."""
    return log.open("ab")


def _last_words(log: Path, lines: int = 5) -> str:
    with contextlib.suppress(OSError):
        tail = log.read_text(errors="replace").strip().splitlines()[-lines:]
        if tail:
            return ": " + " / ".join(tail)
    return ""


@contextlib.asynccontextmanager
async def local_server(data_dir: Path, log: Path,
                       start_timeout: float = START_TIMEOUT_S) -> AsyncIterator[str]:
    """Run a private ``aluette-server`` for as long as the block lasts; yields its URL.

    Its log goes to ``log``. Raises :class:`LaunchFailed` if it does not listen within
    ``start_timeout`` seconds.
    """
    with _append(log) as err:
        proc = await asyncio.create_subprocess_exec(
            *server_command(data_dir), stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=err, env=_environment(),
            start_new_session=True, preexec_fn=_die_with_parent)
    try:
        try:
            async with asyncio.timeout(start_timeout):
                url = await _address(proc)
        except TimeoutError:
            raise LaunchFailed(f"the local server did not listen within {start_timeout:g} s"
                               f"{_last_words(log)}") from None
        except LaunchFailed as exc:
            raise LaunchFailed(f"{exc}{_last_words(log)}") from None
        yield url
    finally:
        await _stop(proc)


async def _stop(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM, then SIGKILL if it has not stopped in time; always reaped."""
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)
        try:
            async with asyncio.timeout(STOP_TIMEOUT_S):
                await proc.communicate()
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
    await proc.wait()
