"""Where the client remembers its session between runs, so a restarted client (a closed
laptop, a crashed terminal) takes its seats back instead of losing them to a bot.

One small JSON file, readable only by its owner (the tokens are secrets), under
``$XDG_STATE_HOME/aluette`` (default ``~/.local/state/aluette``). For each server and player
name it keeps the newest session token and the end of a reserved block of command ids:
ids must be unique for the whole session (docs/PROTOCOL.md), so a restarted client starts
past every id the previous run could have used, without writing the file per command.

A remembered session belongs to one running client at a time: :meth:`SessionFile.claim`
holds an advisory lock (``flock``) on a per-server-and-name lock file next to the session
file for as long as the client runs, so a second client with the same name on the same
machine knows not to take the session (which would log the first one out, close 4009) and
starts a separate one instead (issue 14, item 11).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path

#: Command ids reserved per write of the file.
ID_BLOCK = 10_000


def default_path() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "aluette" / "sessions.json"


class SessionFile:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_path()
        self._locks: dict[Path, int] = {}     # lock files this process holds

    def _read(self) -> dict[str, object]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self, data: dict[str, object]) -> None:
        with contextlib.suppress(OSError):          # no state dir: just don't remember
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            tmp = self.path.with_suffix(".tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh)
            os.replace(tmp, self.path)

    @staticmethod
    def _key(url: str, name: str) -> str:
        return f"{url} {name}"

    def load(self, url: str, name: str) -> tuple[str | None, int]:
        """(token or None, first command id this run may use)."""
        entry = self._read().get(self._key(url, name))
        if not isinstance(entry, dict):
            return None, 1
        token = entry.get("token") if isinstance(entry.get("token"), str) else None
        next_id = entry.get("next_id")
        return token, next_id if isinstance(next_id, int) and next_id > 0 else 1

    def save(self, url: str, name: str, token: str | None, next_id: int) -> None:
        data = self._read()
        if token is None:
            data.pop(self._key(url, name), None)
        else:
            data[self._key(url, name)] = {"token": token, "next_id": next_id}
        self._write(data)

    def lock_path(self, url: str, name: str) -> Path:
        digest = hashlib.sha256(self._key(url, name).encode()).hexdigest()[:16]
        return self.path.with_name(f"{self.path.stem}.{digest}.lock")

    def claim(self, url: str, name: str) -> bool:
        """Take the remembered session of ``url`` and ``name`` for this process.

        False when another live process holds it. The lock goes with the process (the
        kernel drops an ``flock`` when its file is closed, a killed client included), so a
        restarted client can always claim its session again. Where locking is impossible
        (no state directory, no ``fcntl``) it claims, as the client did before locks.
        """
        try:
            import fcntl
        except ImportError:                     # not a POSIX system: no lock, as before
            return True
        path = self.lock_path(url, name)
        if path in self._locks:
            return True
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            return True
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        except OSError:
            os.close(fd)
            return True
        self._locks[path] = fd
        return True

    def release(self) -> None:
        """Give the session back before the process ends (tests; the kernel does it too)."""
        for fd in self._locks.values():
            os.close(fd)
        self._locks.clear()
