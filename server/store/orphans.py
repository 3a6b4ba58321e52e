"""An embedded store that outlived its owner (another OS without ``PR_SET_PDEATHSIG``, or a
store started by an older version): found by its working directory, pinned with a pidfd,
checked again, and stopped (SIGTERM, then SIGKILL) before a new one starts on its files.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import signal
import subprocess
import time
from pathlib import Path

from server.store.errors import EmbeddedStoreError

log = logging.getLogger(__name__)

_ORPHAN_TERM_TIMEOUT_S = 15.0
_ORPHAN_KILL_TIMEOUT_S = 5.0


def is_store_binary(exe: str) -> bool:
    name = os.path.basename(exe)
    return "valkey" in name or "redis" in name


def is_store_on(pid: int, data_dir: Path) -> bool:
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
    return uid == os.getuid() and cwd == str(data_dir) and is_store_binary(exe)


def stores_on(data_dir: Path, recorded: int | None) -> list[int]:
    """Pids of every store of ours serving ``data_dir`` (Linux: a scan of /proc)."""
    if Path("/proc/self/cwd").exists():
        pids = []
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                pid = int(entry.name)
                if pid != os.getpid() and is_store_on(pid, data_dir):
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
    return [recorded] if out.strip() and is_store_binary(out.strip()) else []


def wait_gone(pid: int, pidfd: int | None, timeout: float) -> bool:
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


def stop_orphan(pid: int, data_dir: Path) -> None:
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
        if Path("/proc/self/cwd").exists() and not is_store_on(pid, data_dir):
            return
        log.warning("stopping an orphaned embedded store (pid %d) on %s", pid, data_dir)

        def send(sig: signal.Signals) -> None:
            with contextlib.suppress(ProcessLookupError):
                if pidfd is not None:
                    signal.pidfd_send_signal(pidfd, sig)
                else:
                    os.kill(pid, sig)

        send(signal.SIGTERM)  # it flushes its append-only file and exits
        if wait_gone(pid, pidfd, _ORPHAN_TERM_TIMEOUT_S):
            return
        send(signal.SIGKILL)
        if not wait_gone(pid, pidfd, _ORPHAN_KILL_TIMEOUT_S):
            raise EmbeddedStoreError(
                f"could not stop the orphaned embedded store (pid {pid}) on {data_dir}"
            )
    finally:
        if pidfd is not None:
            os.close(pidfd)


def read_pidfile(path: Path) -> tuple[int, int] | None:
    try:
        pid, port = (int(x) for x in path.read_text().split()[:2])
    except (OSError, ValueError):
        return None
    return pid, port


