"""Where the client remembers its session between runs, so a restarted client (a closed
laptop, a crashed terminal) takes its seats back instead of losing them to a bot.

One small JSON file, readable only by its owner (the tokens are secrets), under
``$XDG_STATE_HOME/aluette`` (default ``~/.local/state/aluette``). For each server and player
name it keeps the newest session token and the end of a reserved block of command ids:
ids must be unique for the whole session (docs/PROTOCOL.md), so a restarted client starts
past every id the previous run could have used, without writing the file per command.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

#: Command ids reserved per write of the file.
ID_BLOCK = 10_000


def default_path() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "aluette" / "sessions.json"


class SessionFile:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_path()

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self, data: dict[str, Any]) -> None:
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
