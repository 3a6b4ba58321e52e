"""The tables a player watches without a seat, so ``list_tables`` can name them (1.5).

Seats are in the table documents; a spectator leaves no trace there (a public table must
not grow with every passer-by: tests/server/test_sessions_and_records.py). So a spectator's
tables are remembered apart, per player, in the store: they survive a restart of the
server (the point is to resume them after one), they are bounded (the latest
``protocol.MAX_WATCHING``), and they expire with the session they belong to. A client
that lost its memory (a new device, a reinstalled bot) reads them in ``list_tables``'s
``watching`` and resumes each one as a spectator.

What counts as watching: a ``spectate`` or a ``resume`` that left the player watching the
table without a seat. A ``leave`` forgets the table; a seat makes it one of the player's
``seats`` instead (the lobby lists a table in one of the two, never both); a table that
is cleaned up drops out of the listing because the lobby no longer has it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import protocol
from server.store import StorageUnavailable, Store

from ..table import Table

log = logging.getLogger(__name__)


class Watching:
    """One store's record of which tables each player watches."""

    def __init__(self, store: Store, ttl_s: int, *, kept: int = protocol.MAX_WATCHING,
                 clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.ttl_s = ttl_s
        self.kept = kept
        self.clock = clock

    async def after(self, player: str, cmd: protocol.Command, table: Table,
                    watching: bool) -> None:
        """Bring the record up to date after ``cmd`` succeeded at ``table``; ``watching``:
        the player's connection watches the table now.

        Best effort: the command was answered already, so a store that fails here costs
        only the memory aid (logged), never the command.
        """
        try:
            if isinstance(cmd, protocol.Leave):
                await self.store.forget_watching(player, table.id)
            elif (isinstance(cmd, protocol.Spectate | protocol.Resume) and watching
                  and table.state.seat_of(player) is None):
                await self.store.note_watching(player, table.id, now=self.clock(),
                                               kept=self.kept, ttl_s=self.ttl_s)
        except StorageUnavailable as exc:
            log.warning("could not record that %s watches %s: %s", player, table.id, exc)

    async def tables(self, player: str) -> list[str]:
        """The tables ``player`` watches, the most recent first (at most ``kept``)."""
        return (await self.store.watching(player))[: self.kept]
