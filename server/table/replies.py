"""The answers a table remembers, so that a command sent twice is carried out once.

A client resends a command it got no answer to, with the same id (docs/PROTOCOL.md,
"Resending"). Each command's result is stored with its commit (in the same Lua script),
among the player's last :data:`REPLIES_KEPT` at this table, and kept here for the players
who act; a resent id is answered from it and changes nothing. Loaded from the store the
first time a player acts after a restart (or after another process's commits made this
copy stale); not at all at a table this process made, whose answers are all here until
another process answers at it or a write's outcome is unknown (one store read per player
per table saved: issue 32).
"""

from __future__ import annotations

import msgpack

from protocol import ErrorCode, ServiceError
from server.store import StorageUnavailable, Store

#: Replies remembered per player per table (a resent command id gets its first answer).
REPLIES_KEPT = 64


class Replies:
    def __init__(self, store: Store, table_id: str, *, complete: bool = False) -> None:
        self.store = store
        self.table_id = table_id
        self._kept: dict[str, dict[int, bytes]] = {}
        #: Every answer stored at this table is kept here (a table this process made),
        #: so a player with none kept has none stored.
        self._complete = complete

    async def prior(self, player: str, cid: int) -> bytes | None:
        """The stored result of a command id this player already sent here, if any."""
        kept = self._kept.get(player)
        if kept is None and self._complete:
            kept = self._kept[player] = {}
        if kept is None:
            try:
                raw = await self.store.load_replies(self.table_id, player)
            except StorageUnavailable:
                raise ServiceError(ErrorCode.STORAGE_UNAVAILABLE,
                                   "storage is unavailable; send it again with the same id"
                                   ) from None
            kept = {}
            for item in reversed(raw):
                prior_cid, result = msgpack.unpackb(item)
                kept[prior_cid] = result
            self._kept[player] = kept
        return kept.get(cid)

    def remember(self, player: str, cid: int, result: bytes) -> bytes:
        """Keep ``result`` as the answer to ``cid``; returns the entry to store with the
        commit."""
        kept = self._kept.setdefault(player, {})
        kept[cid] = result
        while len(kept) > REPLIES_KEPT:
            del kept[next(iter(kept))]
        return msgpack.packb([cid, result])  # type: ignore[no-any-return]

    def learn(self, player: str, entry: bytes) -> None:
        """Another process answered ``player`` here (the entry its commit stored): keep it,
        if this player's answers are loaded (otherwise they are read from the store, which
        has it, the next time)."""
        kept = self._kept.get(player)
        if kept is None:
            if not self._complete:
                return
            kept = self._kept[player] = {}
        cid, result = msgpack.unpackb(entry)
        kept[cid] = result
        while len(kept) > REPLIES_KEPT:
            del kept[next(iter(kept))]

    def forget(self, player: str) -> None:
        """This player's answers are no longer known to be complete here (a write whose
        outcome is unknown): read them from the store next time."""
        self._kept.pop(player, None)
        self._complete = False

    def clear(self) -> None:
        """Another process may have answered commands of this table: read from the store."""
        self._kept.clear()
        self._complete = False
