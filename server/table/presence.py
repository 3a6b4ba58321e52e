"""Who is at a table, over every process: seated players' connections and spectators.

Bots pause when nobody watches; a seat is disconnected when its player has no connection
left anywhere; spectators are counted and limited; a spectator's chat goes to the players
watching without a seat. All of that is read from one count per ``<process>|<player>``:
this process's own fields are kept here exactly, the others' are read from the store
(:meth:`Presence.refresh`), and a field of a process that stopped beating is ignored.

The counts are written to the store by the cluster's presence writer, off the command path
(:class:`Membership`, which the cluster implements): a table never waits on it.
"""

from __future__ import annotations

from typing import Protocol

from server.store import Store

from .state import TableState


class Membership(Protocol):
    """What a table needs of the cluster: this process's name, which processes are alive,
    a way to have a presence count written to the store, and where to report what it
    hears from the others (``/healthz``'s figures)."""

    @property
    def process(self) -> str: ...

    def field(self, player: str) -> str: ...

    def alive(self, field: str) -> bool: ...

    def others_alive(self) -> bool: ...

    def count(self, table_id: str, player: str, delta: int) -> None: ...

    def heard(self, lag_ms: float, *, gap: bool) -> None: ...


class Presence:
    def __init__(self, table_id: str, membership: Membership) -> None:
        self.table_id = table_id
        self.membership = membership
        #: ``<process>|<player>`` -> connections at this table, over every process.
        self.present: dict[str, int] = {}

    def count(self, player: str, delta: int) -> None:
        """One of this process's connections of ``player`` came (+1) or went (-1)."""
        field = self.membership.field(player)
        n = self.present.get(field, 0) + delta
        if n > 0:
            self.present[field] = n
        else:
            self.present.pop(field, None)
        self.membership.count(self.table_id, player, delta)

    async def refresh(self, store: Store) -> bool:
        """Read the other processes' counts from the store (ours stay exact); True if
        anything changed."""
        return self.adopt(await store.present(self.table_id))

    def adopt(self, stored: dict[str, int]) -> bool:
        """The counts as the store has them (ours stay exact); True if anything changed."""
        mine = self.membership.process + "|"
        fresh = {f: n for f, n in stored.items() if not f.startswith(mine)}
        fresh.update({f: n for f, n in self.present.items() if f.startswith(mine)})
        if fresh == self.present:
            return False
        self.present = fresh
        return True

    def _live(self) -> list[tuple[str, int]]:
        return [(f.partition("|")[2], n) for f, n in self.present.items()
                if n > 0 and self.membership.alive(f)]

    def anyone(self) -> bool:
        """Someone is here, on any process: a seated player's connection or a spectator."""
        return bool(self._live())

    def connected(self, player: str) -> bool:
        return any(p == player for p, _ in self._live())

    def spectators(self, state: TableState) -> int:
        """Connections watching without a seat, on every process."""
        return sum(n for p, n in self._live() if state.seat_of(p) is None)

    def watchers(self, state: TableState) -> frozenset[str]:
        """Players watching without a seat, on every process (a spectator's chat)."""
        return frozenset(p for p, _ in self._live() if state.seat_of(p) is None)
