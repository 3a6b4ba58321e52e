"""Fixtures for driving the real ``aluette`` client in a pseudo-terminal (pexpect).

The server is a real ``aluette-server`` subprocess on the test Redis (so a test can kill -9
it and start it again on the same port); each client is the real console script in a pty
with a wide terminal. Every wait is an ``expect`` with a timeout, never a sleep.
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest

BIN = Path(sys.executable).parent
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
HAND_ROW = re.compile(r"^\s*(\d+)\s+([1-9VCR][ocbe])\s", re.M)
TURN = "▶ Your turn"


def plain(text: str) -> str:
    """Terminal output without the escape sequences the prompt library writes."""
    return ANSI.sub("", text)


class ServerProcess:
    """``aluette-server`` as a subprocess; kill() and start() again on the same port."""

    def __init__(self, redis_url: str, key_prefix: str, log_dir: Path) -> None:
        self.redis_url = redis_url
        self.key_prefix = key_prefix
        self.log_dir = log_dir
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.starts = 0

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def start(self, timeout: float = 30) -> None:
        self.starts += 1
        log = open(self.log_dir / f"server-{self.starts}.log", "wb")  # noqa: SIM115
        cmd = [str(BIN / "aluette-server"), "--port", str(self.port), "--redis-url",
               self.redis_url, "--key-prefix", self.key_prefix, "--hello-timeout", "5"]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log)
        log.close()
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        line = b""
        while not line.endswith(b"\n"):
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self.proc.poll() is not None:
                raise RuntimeError(f"the server did not start: {line!r}")
            ready, _, _ = select.select([self.proc.stdout], [], [], remaining)
            if ready:
                chunk = os.read(self.proc.stdout.fileno(), 1)
                if not chunk:
                    raise RuntimeError(f"the server exited: {line!r}")
                line += chunk
        match = re.search(rb"listening on ws://127\.0\.0\.1:(\d+)", line)
        assert match, line
        self.port = int(match.group(1))

    def kill(self) -> None:
        """kill -9: no goodbye to the clients, nothing flushed but what Redis holds."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()


@pytest.fixture
def server_proc(redis_url: str, key_prefix: str, redis_client: Any,
                tmp_path: Path) -> Iterator[ServerProcess]:
    server = ServerProcess(redis_url, key_prefix, tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


class Cli:
    """One running ``aluette`` in a pty, with the whole output kept for assertions."""

    def __init__(self, child: pexpect.spawn) -> None:
        self.child = child

    def expect(self, pattern: Any, timeout: float = 20) -> Any:
        try:
            self.child.expect(pattern, timeout=timeout)
        except pexpect.TIMEOUT:
            tail = plain(self.output)[-3000:]
            raise AssertionError(f"timed out waiting for {pattern!r}; output ends:\n{tail}"
                                 ) from None
        return self.child.match

    def expect_any(self, patterns: list[str], timeout: float = 20) -> int:
        """Which of ``patterns`` comes first (its index)."""
        try:
            return int(self.child.expect(patterns, timeout=timeout))
        except pexpect.TIMEOUT:
            tail = plain(self.output)[-3000:]
            raise AssertionError(f"timed out waiting for {patterns!r}; output ends:\n{tail}"
                                 ) from None

    def send(self, line: str) -> None:
        self.child.sendline(line)

    @property
    def output(self) -> str:
        return self.child.logfile_read.getvalue()  # type: ignore[no-any-return]

    def wait_turn(self, timeout: float = 20) -> list[str]:
        """Wait for the next "your turn" screen; return the hand it shows, in order."""
        self.expect(TURN, timeout)
        before = plain(self.child.before)
        block = before[before.rindex("Your hand"):]
        rows = [(int(n), code) for n, code in HAND_ROW.findall(block)]
        assert [n for n, _ in rows] == list(range(1, len(rows) + 1)), block
        return [code for _, code in rows]

    def quit(self) -> None:
        self.send("quit")
        self.child.expect(pexpect.EOF, timeout=10)


class _Log:
    """pexpect's logfile_read target: keeps everything as text."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, data: str) -> None:
        self.parts.append(data)

    def flush(self) -> None:
        pass

    def getvalue(self) -> str:
        return "".join(self.parts)


def cli_env(term: str = "dumb", color: bool = False,
            state_dir: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    if state_dir is not None:
        env["XDG_STATE_HOME"] = state_dir      # remembered sessions stay inside the test
    env.update(TERM=term, PROMPT_TOOLKIT_NO_CPR="1", PYTHONUNBUFFERED="1",
               COLUMNS="200", LINES="60")
    if not color:
        env["NO_COLOR"] = "1"
    return env


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Callable[..., Cli]]:
    """Start ``aluette ARGS`` in a pty, 60x200 unless ``size=(rows, cols)`` (TERM=dumb, no
    colour unless asked). Every client of one test shares one state directory, so a
    restarted client finds the session its predecessor remembered."""
    with terminals(tmp_path, shared_state=True) as make:
        yield make


@contextlib.contextmanager
def terminals(tmp_path: Path, *, shared_state: bool) -> Iterator[Callable[..., Cli]]:
    """``make(*args)`` starts the real client in a pty; all of them are ended with the
    block. ``shared_state``: one state directory for all (a restarted client finds its
    session), else one each (different players on one machine)."""
    children: list[pexpect.spawn] = []

    def make(*args: str, term: str = "dumb", color: bool = False,
             size: tuple[int, int] = (60, 200)) -> Cli:
        rows, cols = size
        state = tmp_path / ("state" if shared_state else f"state{len(children)}")
        env = cli_env(term, color, str(state))
        env.update(LINES=str(rows), COLUMNS=str(cols))
        child = pexpect.spawn(str(BIN / "aluette"), list(args), env=env,
                              dimensions=(rows, cols), encoding="utf-8",
                              codec_errors="replace", timeout=20)
        child.logfile_read = _Log()
        children.append(child)
        return Cli(child)

    try:
        yield make
    finally:
        for child in children:
            if child.isalive():
                child.terminate(force=True)
