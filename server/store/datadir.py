"""The data directory's privacy: 0700 directories, 0600 files, atomic private writes.

The append-only files hold every seed, hand and talon, and the password file opens the
store; a world-readable data directory would hand all of it to any local user. New files
are created private (``O_CREAT`` with mode 0600, the store process runs with umask 077)
and an existing directory is tightened on every start, so a data directory written by an
older version is fixed the first time this one runs on it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import secrets
import stat
from pathlib import Path

from server.store.errors import EmbeddedStoreError

log = logging.getLogger(__name__)

DIR_MODE = 0o700
FILE_MODE = 0o600

#: The embedded store's password (hex), generated once and reused on every restart.
PASSWORD_FILE = "store.password"
_PASSWORD_RE = re.compile(r"[0-9a-f]{32,128}")


def make_private_dir(path: Path) -> None:
    """Create ``path`` (and parents) if missing; the leaf is created 0700.

    It does not chmod an existing directory: that waits until the caller holds the data
    directory's lock (a refused second server must not touch the first one's files).
    """
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)


def tighten_modes(root: Path) -> list[str]:
    """Make ``root`` and every directory under it 0700, and take every permission away
    from group and others on every regular file under it (a 0644 file becomes 0600).

    Only group/other bits are removed from files, so a data directory pointed by mistake
    at a directory of scripts keeps them executable by their owner. Symlinks are neither
    followed nor changed (a link inside the data directory must not let us chmod something
    outside it). Returns the paths that could not be changed (not ours, read-only file
    system), which the caller logs; it never raises for one file.
    """
    failed: list[str] = []

    def fix(path: str, mode: int, st: os.stat_result) -> None:
        if stat.S_IMODE(st.st_mode) != mode:
            try:
                os.chmod(path, mode, follow_symlinks=False)
            except (OSError, NotImplementedError):
                failed.append(path)

    fix(str(root), DIR_MODE, root.lstat())
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue  # removed meanwhile (the store rewrites its AOF in the background)
            if stat.S_ISDIR(st.st_mode):
                fix(path, DIR_MODE, st)
            elif stat.S_ISREG(st.st_mode):
                fix(path, stat.S_IMODE(st.st_mode) & 0o700, st)
    return failed


def write_private(path: Path, data: bytes) -> None:
    """Atomically replace ``path`` with ``data``, mode 0600 from the first byte on disk.

    Written to a temporary name, fsynced, renamed over ``path``, then the directory is
    fsynced: a crash leaves either the old or the new file, never a torn or empty one
    (an empty identity file would later read as "no identity").
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_dir(path.parent)


def fsync_dir(path: Path) -> None:
    """Make a rename in ``path`` durable (best effort where directories cannot be fsynced)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def load_or_create_password(data_dir: Path) -> str:
    """The store password kept in ``data_dir/store.password``; created on first use.

    It is 64 hex digits (256 bits): safe to put in the store's config file without quoting,
    and checked on read, so an edited file cannot inject configuration lines.
    """
    path = data_dir / PASSWORD_FILE
    try:
        text = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        password = secrets.token_hex(32)
        write_private(path, (password + "\n").encode("ascii"))
        return password
    except (OSError, UnicodeDecodeError) as exc:
        raise EmbeddedStoreError(f"cannot read the store password file {path}: {exc}") from exc
    if not _PASSWORD_RE.fullmatch(text):
        raise EmbeddedStoreError(
            f"the store password file {path} is malformed (expected 32-128 lowercase hex "
            "digits); restore it, or delete it only if the store has never run with it"
        )
    return text
