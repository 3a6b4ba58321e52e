"""Limits on open tables: for the server, per player, per address (``too_many_tables``).

A table counts as open while it is waiting or playing. A new table, and a rematch that
opens a finished table again, are checked against the limits and counted *in flight* in
one synchronous step, until they are stored: many opened at the same moment cannot
overshoot a limit. The server's and each player's counts come from the lobby every
process sees (:mod:`.listing`); the per-address count from the tables this process made
(an address is not stored).
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import AsyncIterator

from protocol import CommandError, ErrorCode, ServiceError
from server.store import StorageUnavailable

from ..config import Settings
from ..table import Table
from .index import Index
from .listing import Listing, Tally
from .registry import Registry


class Openings:
    def __init__(self, settings: Settings, listing: Listing, registry: Registry) -> None:
        self.settings = settings
        self.listing = listing
        self.registry = registry
        self._creating: Counter[str] = Counter()       # player -> opening in flight
        self._creating_from: Counter[str] = Counter()  # address -> opening in flight
        self._address_of: dict[str, str] = {}          # table id -> creator's address
        self._made_from = Index()                      # address -> those tables' ids
        self._matching = 0                              # the matchmaker's, in flight

    def made_from(self, table_id: str, address: str) -> None:
        self.forget(table_id)
        self._address_of[table_id] = address
        self._made_from.add(address, table_id)

    def forget(self, table_id: str) -> None:
        address = self._address_of.pop(table_id, None)
        if address is not None:
            self._made_from.discard(address, table_id)

    def _open_tables_from(self, address: str, limit: int) -> int:
        """How many of the tables made from ``address`` are open; only the tables made
        from it are counted, and counted one by one only if there are ``limit`` of them
        (fewer tables than the limit are fewer open tables: issue 32)."""
        made = self._made_from.of(address)
        if len(made) < limit:
            return len(made)
        return sum(1 for tid in made if (t := self.registry.get(tid)) is not None
                   and t.state.status in ("waiting", "playing") and not t.closed)

    @contextlib.asynccontextmanager
    async def opening(self, creator: str, address: str | None, *,
                      new: bool) -> AsyncIterator[None]:
        """Check the limits for one more open table of ``creator`` (from ``address``), then
        count it in flight until the block ends. ``new``: a new table also counts against
        the server's total (a rematch reopens a table that is already counted)."""
        tally = await self._tally(creator)
        in_flight = sum(self._creating.values()) + self._matching
        if new and tally.at_most + in_flight >= self.settings.max_tables \
                and self.listing.total() + in_flight >= self.settings.max_tables:
            raise CommandError(ErrorCode.TOO_MANY_TABLES, "the server has as many tables as "
                               "it can hold; join one or try later")
        self._check(creator, address, tally.mine, mine=new)
        self._creating[creator] += 1
        if address is not None:
            self._creating_from[address] += 1
        try:
            yield
        finally:
            self._creating[creator] -= 1
            if self._creating[creator] <= 0:
                del self._creating[creator]
            if address is not None:
                self._creating_from[address] -= 1
                if self._creating_from[address] <= 0:
                    del self._creating_from[address]

    async def room_for(self, player: str, address: str | None) -> None:
        """Play now (issue 27): a request may make a table whose creator is ``player``
        (the first request of the four, or a casual player's alone with bots), so it is
        refused while ``player``, or ``address``, has as many open tables as allowed, as
        ``create_table`` would be. Without it, one player asking, leaving and asking again
        opened tables of bots without end."""
        self._check(player, address, (await self._tally(player)).mine, mine=True)

    async def _tally(self, creator: str, fresh: bool = False) -> Tally:
        """The lobby's tables, and ``creator``'s open ones (``Listing.tally``)."""
        try:
            return await self.listing.tally(creator, fresh)
        except StorageUnavailable:
            raise ServiceError(ErrorCode.STORAGE_UNAVAILABLE,
                               "storage is unavailable; nothing was changed") from None

    def _check(self, creator: str, address: str | None, open_tables: int, *,
               mine: bool) -> None:
        """The per-player and per-address limits on ``creator``'s open tables, of which
        the lobby holds ``open_tables`` (``mine``: the player asking is the creator;
        otherwise a rematch of someone else's table)."""
        s = self.settings
        if (open_tables + self._creating[creator]
                >= s.max_tables_per_player):
            who = "you already have" if mine else "the table's creator already has"
            raise CommandError(ErrorCode.TOO_MANY_TABLES, f"{who} {s.max_tables_per_player} "
                               "open tables; finish or leave one",
                               details={"limit": s.max_tables_per_player})
        if address is not None and (
                self._open_tables_from(address, s.max_tables_per_address
                                       - self._creating_from[address])
                + self._creating_from[address] >= s.max_tables_per_address):
            whose = "your" if mine else "the table's creator's"
            raise CommandError(ErrorCode.TOO_MANY_TABLES, f"too many open tables from {whose} "
                               "address", details={"limit": s.max_tables_per_address})

    @contextlib.asynccontextmanager
    async def matching(self, wanted: int) -> AsyncIterator[int]:
        """Room for up to ``wanted`` tables the matchmaker makes (issue 27): they count
        against the server's total like any new table, in flight until the block ends; the
        rest wait in the queue."""
        tally = await self.listing.tally("", fresh=True)
        free = self.settings.max_tables - sum(self._creating.values()) - self._matching
        room = max(0, min(wanted, free - (tally.at_most if free - tally.at_most >= wanted
                                          else self.listing.total())))
        self._matching += room
        try:
            yield room
        finally:
            self._matching -= room

    @contextlib.asynccontextmanager
    async def reopening(self, table: Table) -> AsyncIterator[None]:
        """A rematch opens a finished table again, so it counts against its creator's
        open tables, and its creator's address's, like a new table: refused with
        ``too_many_tables`` at the limit, and counted in flight while it is applied."""
        if table.state.status != "finished":
            yield                     # not a reopening: the table answers for itself
            return
        async with self.opening(table.state.creator, self._address_of.get(table.id),
                                new=False):
            yield
