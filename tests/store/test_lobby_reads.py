"""The lobby a process reads from the store (issue 32): only the entries that changed.

Finished tables stay listed for an hour (``table_ttl_s``), so at a busy server the store
holds many more tables than are being played. Before, every process read every table's
entry every two seconds (``LOBBY_CACHE_S``): a cost that grew with the tables kept, and was
paid once per process. Now the store numbers each change of an entry
(``TableStore.lobby_changes``) and a process reads only those, with a whole read at its
first read and every ``LOBBY_WHOLE_S``.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.lobby import listing as listing_module
from server.lobby.listing import Listing
from server.store import Store
from server.table.state import LobbyEntry, TableStatus, encode_lobby_entry


class NoTablesHere:
    """The registry of a process that holds no table: its lobby is the store's alone."""

    def held(self) -> list[Any]:
        return []

    def get(self, table_id: str) -> None:
        return None


def entry(status: TableStatus, players: Sequence[str] = ("ana",)) -> bytes:
    return encode_lobby_entry(LobbyEntry(created=1.0, creator="ana", private=False,
                                         players=list(players), status=status))


@pytest.fixture
def asked(store: Store, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every table id whose entry is read from the store (the real read, watched)."""
    ids: list[str] = []
    read = store.lobby_infos

    async def watched(table_ids: Sequence[str]) -> dict[str, bytes]:
        ids.extend(table_ids)
        return await read(table_ids)

    monkeypatch.setattr(store, "lobby_infos", watched)
    return ids


async def test_a_process_reads_again_only_the_entries_that_changed(
        store: Store, asked: list[str]) -> None:
    for i in range(30):
        await store.create_table(f"old{i}", b"doc", info=entry("finished"))
    other = Listing(store, NoTablesHere())  # type: ignore[arg-type]
    assert len(await other.entries(fresh=True)) == 30
    assert len(asked) == 30                 # the first read: every table
    # Elsewhere: a table is made, one is played again (a rematch), one is swept, and one
    # is played on (a commit that changes no entry).
    await store.create_table("new", b"doc", info=entry("waiting"))
    await store.commit("old0", 1, b"doc", info=entry("playing", ["ana", "bo"]))
    await store.delete_table("old1")
    await store.commit("old2", 1, b"doc")
    asked.clear()
    seen = await other.entries(fresh=True)
    assert sorted(asked) == ["new", "old0", "old1"]
    assert len(seen) == 30
    assert seen["new"].status == "waiting"
    assert (seen["old0"].status, seen["old0"].players) == ("playing", ["ana", "bo"])
    assert "old1" not in seen
    asked.clear()
    assert len(await other.entries(fresh=True)) == 30
    assert asked == []                      # nothing changed: nothing read


async def test_a_change_whose_note_was_lost_is_read_at_the_next_whole_read(
        store: Store, asked: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    await store.create_table("t", b"doc", info=entry("waiting"))
    other = Listing(store, NoTablesHere())  # type: ignore[arg-type]
    assert (await other.entries(fresh=True))["t"].status == "waiting"
    # The entry is stored, but its note never was (the process stopped in between).
    await store.redis.hset(store.keys.doc("t"), "info", entry("playing"))
    assert (await other.entries(fresh=True))["t"].status == "waiting"
    monkeypatch.setattr(listing_module, "LOBBY_WHOLE_S", 0.0)
    asked.clear()
    assert (await other.entries(fresh=True))["t"].status == "playing"
    assert asked == ["t"]


class HeldTable:
    """What the lobby reads of a table this process holds (its id, whether it is closed,
    its state's creator and status)."""

    def __init__(self, table_id: str, closed: bool, creator: str, status: str) -> None:
        self.id, self.closed, self.version = table_id, closed, 1
        self.state = SimpleNamespace(creator=creator, status=status, created_at=1.0,
                                     private=False, humans=lambda: [])


class TheseTables(NoTablesHere):
    def __init__(self, tables: list[HeldTable]) -> None:
        self.tables = {t.id: t for t in tables}

    def held(self) -> list[Any]:
        return list(self.tables.values())

    def made_by(self, creator: str) -> list[Any]:
        return [t for t in self.tables.values() if t.state.creator == creator]


IDS = st.sampled_from([f"t{i}" for i in range(8)])


def creator_of(table_id: str) -> str:
    """A table's creator never changes: the store's entry and the table held say the same."""
    return "ana" if int(table_id[1:]) % 3 else "bo"

STATUSES = st.sampled_from(["waiting", "playing", "finished", "abandoned"])


@settings(max_examples=300, deadline=None)
@given(stored=st.lists(st.tuples(IDS, STATUSES, st.booleans()), max_size=20),
       held=st.dictionaries(IDS, st.tuples(st.booleans(), STATUSES), max_size=6))
async def test_the_limits_count_what_the_merged_lobby_holds(
        stored: list[tuple[str, str, bool]], held: dict[str, tuple[bool, str]]) -> None:
    """Issue 32: the table limits count the lobby's tables and a creator's open ones
    without merging every entry (``Listing.tally``): what they count is what the merged
    lobby (``entries``: the store's, this process's own tables over them) holds, through
    any sequence of entries changed and removed; the cheap bound of the total (enough
    below the server's limit) is never below it."""
    tables = [HeldTable(tid, closed, creator_of(tid), status)
              for tid, (closed, status) in held.items()]
    listing = Listing(None, TheseTables(tables))  # type: ignore[arg-type]
    listing._entries_at = float("inf")       # read nothing: the store's entries are these
    for tid, status, gone in stored:
        listing._keep(tid, None if gone else LobbyEntry(
            created=1.0, creator=creator_of(tid), private=False, players=[],
            status=status))  # type: ignore[arg-type]
    merged = await listing.entries()
    for creator in ("ana", "bo", "cy"):
        mine = sum(1 for e in merged.values() if e.creator == creator and e.open)
        tally = await listing.tally(creator)
        assert (listing.total(), tally.mine) == (len(merged), mine)
        assert tally.at_most >= len(merged)
