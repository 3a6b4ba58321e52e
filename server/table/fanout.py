"""Who gets which event of a table, numbered in each viewer's own sequence.

A command's events are numbered once, when they are stored (:func:`number_events`): each
gets its place in the table's log and its audience (everyone, the humans of some seats,
or a chat's watchers), and is counted in the sequences of exactly those players
(docs/PROTOCOL.md, "Sequence numbers": nobody learns how many events they may not see).
After the commit, every connection watching the table on this process (:class:`Viewers`)
is handed the events it may see (:func:`visible`), numbered from where its sequence stood;
a viewer opens, and is re-based, with a *head* (:func:`head_payloads`).
"""

from __future__ import annotations

from collections.abc import Iterator

import protocol
from protocol import EventPayload
from server.game import Match, spectator_view, view
from server.store.bus import Entry

from ..viewer import Viewer
from . import chat
from .mutations import Audience, Emitted, Watchers
from .presence import Presence
from .state import TableState

#: Where each viewer's sequence stood before a commit: ``(pub, priv)`` of the document.
Counters = tuple[int, dict[str, int]]


def number_events(state: TableState, events: list[Emitted],
                  watchers: frozenset[str]) -> list[Entry]:
    """Give each event its log number and its audience, and count it in the viewers'
    sequences (``state.pub`` or each recipient's ``state.priv``).

    A private event's audience is the players seated where it goes (R8, R9, R16), or for
    chat the players at the table then (:class:`~.mutations.Watchers`); one that reaches no
    player (a bot's hand) is not stored at all.
    """
    entries: list[Entry] = []
    for em in events:
        payload = protocol.encode(em.payload)
        if em.to is None:
            state.pub += 1
            recipients: tuple[str, ...] | None = None
        else:
            recipients = audience(state, em.to, watchers)
            if not recipients:
                continue
            for p in recipients:
                state.priv[p] = state.priv.get(p, 0) + 1
        state.gseq += 1
        entries.append(Entry(state.gseq, recipients, payload))
    return entries


def audience(state: TableState, to: Audience, watchers: frozenset[str]) -> tuple[str, ...]:
    """The players a private event goes to, as the table is when it is stored."""
    if isinstance(to, Watchers):
        players = state.humans() if to.seats else []
        if to.spectators:
            players += sorted(p for p in watchers if state.seat_of(p) is None)
        return tuple(p for p in players if p not in to.muting)
    assert to is not None
    return tuple(p for s in to if state.seats[s].kind == "human" and (p := state.seats[s].player))


def visible(entries: list[Entry], player: str, before: Counters) -> tuple[int, list[bytes]]:
    """The entries ``player`` may see, and the number the first of them takes in its
    sequence (its sequence stood at ``before``)."""
    pub0, priv0 = before
    return pub0 + priv0.get(player, 0) + 1, [e.payload for e in entries
                                             if e.visible_to(player)]


def head_payloads(state: TableState, match: Match | None, player: str,
                  spectators: int) -> list[EventPayload]:
    """A head's events: ``table_changed``, a ``snapshot`` when a match exists (the seat's
    view, or the spectators'), and the chat so far when this player may see some."""
    payloads: list[EventPayload] = [protocol.TableChanged(table=state.info(spectators))]
    if match is not None:
        seat = state.seat_of(player)
        v = view(match, seat) if seat is not None else spectator_view(match)
        payloads.append(protocol.Snapshot(view=v))
    history = chat.history(state, player)
    if history is not None:
        payloads.append(history)
    return payloads


class Viewers:
    """The connections watching one table on this process (seated or not), counted in its
    presence."""

    def __init__(self, table_id: str, presence: Presence) -> None:
        self.table_id = table_id
        self.presence = presence
        self._viewers: dict[Viewer, None] = {}    # an insertion-ordered set

    def __contains__(self, viewer: object) -> bool:
        return viewer in self._viewers

    def __iter__(self) -> Iterator[Viewer]:
        return iter(list(self._viewers))    # a copy: sending may make a viewer leave

    def __len__(self) -> int:
        return len(self._viewers)

    def add(self, viewer: Viewer) -> None:
        if viewer not in self._viewers:
            self._viewers[viewer] = None
            self.presence.count(viewer.player, +1)

    def remove(self, viewer: Viewer) -> None:
        if self._viewers.pop(viewer, False) is None:
            self.presence.count(viewer.player, -1)
