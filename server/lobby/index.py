"""Table ids grouped by a key (a creator, an address), so a limit counts one group's
tables rather than passing over every table (issue 32)."""

from __future__ import annotations


class Index:
    """Key -> the ids filed under it; a key whose last id goes is dropped with it, so the
    index holds only keys with tables."""

    def __init__(self) -> None:
        self._ids: dict[str, set[str]] = {}

    def add(self, key: str, table_id: str) -> None:
        self._ids.setdefault(key, set()).add(table_id)

    def discard(self, key: str, table_id: str) -> None:
        ids = self._ids.get(key)
        if ids is not None:
            ids.discard(table_id)
            if not ids:
                del self._ids[key]

    def of(self, key: str) -> frozenset[str] | set[str]:
        """The ids filed under ``key`` (not to be changed by the caller)."""
        return self._ids.get(key, frozenset())

    def clear(self) -> None:
        self._ids.clear()
