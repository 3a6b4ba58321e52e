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
from typing import Any

import pytest

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
