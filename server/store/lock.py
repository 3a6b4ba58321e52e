"""Exclusive ownership of a data directory: one live server per directory.

Why ``flock`` and not a pid file: a pid file outlives a SIGKILLed owner, and deciding
whether it is stale means guessing from a pid that may have been recycled; that guessing is
how a second server used to take over the first one's store. An ``flock`` is held by an
open file description and dropped by the kernel the moment its owner dies, so "locked"
always means "a live process owns this directory". The lock file is never deleted
(unlinking a lock file while another process waits on it would let two owners in); it
holds the owner's pid only so the refusal can name it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from server.store.errors import DataDirInUse, StorageStartupError

LOCK_FILE = "aluette.lock"


class DataDirLock:
    """``acquire()`` or raise ``DataDirInUse``; ``release()``; also a context manager.

    The descriptor is close-on-exec, so the embedded store (a child process) never
    inherits the lock and cannot keep it after its parent is gone.
    """

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.path = data_dir / LOCK_FILE
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock without waiting; idempotent while held by this object."""
        if self._fd is not None:
            return
        # O_CREAT without O_TRUNC: a refused caller must not alter the owner's file.
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise StorageStartupError(f"cannot open the lock file {self.path}: {exc}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_pid(fd)
            os.close(fd)
            raise DataDirInUse(str(self.data_dir), holder) from None
        except OSError as exc:  # e.g. a file system without flock: never run unlocked
            os.close(fd)
            raise StorageStartupError(f"cannot lock {self.path}: {exc}") from exc
        except BaseException:
            os.close(fd)
            raise
        # Write then trim (not trim then write): a concurrent reader never sees it empty.
        text = f"{os.getpid()}\n".encode()
        os.pwrite(fd, text, 0)
        os.ftruncate(fd, len(text))
        self._fd = fd

    def release(self) -> None:
        """Drop the lock (closing the descriptor drops it); a no-op if not held."""
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)  # no stale pid for the next reader to misname
            os.close(fd)

    def __enter__(self) -> DataDirLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        return int(text) if text else None
    except (OSError, ValueError):
        return None
