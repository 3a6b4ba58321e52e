"""Watching a table: spectators, and viewers who come back (``spectate``, ``resume``).

- :func:`spectate`: a spectator needs the code of a private table (or to have been let in
  with it before) and a free spectator place; a seated player gets their seat's view;
- :func:`resume`: a viewer that comes back gets what it missed since its ``last_seq``,
  read from the table's log without the table's lock (:func:`read_replay`), or a head when
  the log no longer holds it all; its live events are held meanwhile and follow in order.
  A replay is bounded (issue 30, resume amplification; :func:`worth_replaying`): a
  spectator far behind, or one that never watched the table, gets a head, and every replay
  is paid for from its address's and the process's budget (a head when they are spent).
"""

from __future__ import annotations

import asyncio
from typing import Protocol

import protocol
from protocol import CommandError, ErrorCode, ServiceError
from protocol.results import Result, ResumeResult, SpectateResult
from server.game import Match
from server.store import StorageUnavailable, Store
from server.store.bus import unpack_entry

from ..config import Settings
from ..viewer import Viewer
from .decide import Mutation
from .fanout import Viewers, head_payloads
from .state import TableState


class Watched(Protocol):
    """What watching needs of its table."""

    @property
    def id(self) -> str: ...

    @property
    def state(self) -> TableState: ...

    @property
    def match(self) -> Match | None: ...

    @property
    def store(self) -> Store: ...

    @property
    def settings(self) -> Settings: ...

    @property
    def viewers(self) -> Viewers: ...

    @property
    def lock(self) -> asyncio.Lock: ...

    def spectators(self) -> int: ...

    def head(self, viewer: Viewer) -> None: ...

    def subscribe(self, viewer: Viewer) -> None: ...

    async def seat_presence(self, seat: int) -> None: ...

    async def announce_spectators(self) -> None: ...

    async def execute(self, mutate: Mutation, origin: None = None, *,
                      force: bool = False) -> Result | None: ...

#: Players admitted as spectators of a private table, remembered so their resume works.
GUESTS_KEPT = 200
#: The most events a spectator's resume replays: further behind, it gets a head (a
#: snapshot, a few frames), never thousands of events (issue 30).
SPECTATOR_REPLAY_MAX = 100


def admit_spectator(state: TableState, player: str, code: str | None, spectators: int,
                    max_spectators: int) -> bool:
    """Refuse a spectator the table cannot take (``bad_code``, ``too_many_spectators``);
    True when this admits a new guest of a private table (to be remembered)."""
    new_guest = False
    if state.private and player not in state.members:
        if code is None and player in state.guests:
            pass
        elif code != state.code:
            raise CommandError(ErrorCode.BAD_CODE, "wrong or missing join code")
        else:
            new_guest = player not in state.guests
    if spectators >= max_spectators:
        raise CommandError(ErrorCode.TOO_MANY_SPECTATORS,
                           "this table has all the spectators it can take")
    return new_guest


def remember_guest(state: TableState, player: str) -> None:
    """A private table's new spectator, kept (the most recent :data:`GUESTS_KEPT`) so that
    their resume after a drop or a restart is let in too."""
    kept = [g for g in state.guests if g != player][-GUESTS_KEPT + 1:]
    state.guests = [*kept, player]


async def read_replay(store: Store, table_id: str, player: str, after: int, upto: int,
                      anchor: int, log_max: int) -> list[tuple[int, bytes]] | None:
    """``player``'s events numbered ``after+1 .. upto``, read backwards from the log entry
    ``anchor`` (the last one when ``upto`` was read); None if some were trimmed."""
    if after == upto:
        return []
    want = upto - after
    window = min(max(4 * want + 16, 64), log_max)
    while True:
        first = max(0, anchor - window)
        raw = await store.read_log(table_id, first)
        if raw is None:
            return None
        collected: list[tuple[int, bytes]] = []
        seq = upto
        for gseq, blob in reversed(raw):
            if gseq > anchor:
                continue
            entry = unpack_entry(gseq, blob)
            if entry is None:
                return None
            if entry.visible_to(player):
                collected.append((seq, entry.payload))
                seq -= 1
                if seq == after:
                    collected.reverse()
                    return collected
        if first == 0 or window >= log_max:
            return None
        window = min(window * 4, log_max)


async def worth_replaying(table: Watched, viewer: Viewer, seat: int | None,
                          was_watching: bool, events: int) -> bool:
    """Whether a resume replays ``events`` events rather than sending a head (issue 30).

    A spectator gets a replay only when it is not far behind (:data:`SPECTATOR_REPLAY_MAX`)
    and it watched this table before (this connection watches it, or the store remembers
    that the player does, ``list_tables.watching``): a stranger cannot make a table replay
    its log for it. Anyone's replay is then paid for by the viewer's address and the
    process (:meth:`~server.viewer.Viewer.may_replay`); a head costs a few frames.
    """
    if events <= 0:
        return True
    if seat is None:
        if events > SPECTATOR_REPLAY_MAX:
            return False
        if not was_watching and table.id not in await table.store.watching(viewer.player):
            return False
    return viewer.may_replay(events)


def _may_watch(table: Watched, viewer: Viewer, code: str | None) -> bool:
    """Refuse a spectator the table cannot take; True when this admits a new guest."""
    if table.state.seat_of(viewer.player) is not None or viewer in table.viewers:
        return False
    return admit_spectator(table.state, viewer.player, code, table.spectators(),
                           table.settings.max_spectators)


async def spectate(table: Watched, viewer: Viewer, cmd: protocol.Spectate) -> None:
    """Watch the table: ok, then the head. A player let into a private table with its code
    is remembered (stored), so that their resume after a drop or a restart is let in too."""
    if _may_watch(table, viewer, cmd.code):
        player = viewer.player
        async with table.lock:
            await table.execute(lambda w: remember_guest(w.state, player), force=True)
    viewer.reply(cmd.id, SpectateResult(table=table.id, seq=table.state.seq_for(viewer.player)))
    table.subscribe(viewer)
    if table.state.seat_of(viewer.player) is None:
        await table.announce_spectators()


async def resume(table: Watched, viewer: Viewer, cmd: protocol.Resume) -> None:
    """Replay what ``viewer`` missed since ``last_seq`` (or a head), then go live."""
    player = viewer.player
    seat = table.state.seat_of(player)
    if seat is None:
        st = table.state
        if st.private and player not in st.members and player not in st.guests:
            raise CommandError(ErrorCode.NOT_AT_TABLE, "you are not at this table")
        _may_watch(table, viewer, None)
    was_watching = viewer in table.viewers
    viewer.begin_resume(table.id)
    table.viewers.add(viewer)
    try:
        if seat is not None:
            # Back at its seat before it hears anything: a bot playing the seat stops now,
            # so a turn the replay shows it is really its own to play.
            await table.seat_presence(seat)
        upto, anchor = table.state.seq_for(player), table.state.gseq
        replay = None
        if cmd.last_seq <= upto and await worth_replaying(table, viewer, seat, was_watching,
                                                          upto - cmd.last_seq):
            replay = await read_replay(table.store, table.id, player, cmd.last_seq, upto,
                                       anchor, table.settings.event_log_max)
    except BaseException as exc:
        # Keep a connection that was watching live (a fresh head re-bases it); one that was
        # not is not subscribed.
        viewer.forget(table.id)
        if was_watching and viewer in table.viewers:
            table.head(viewer)
        else:
            table.viewers.remove(viewer)
        if isinstance(exc, StorageUnavailable):
            raise ServiceError(ErrorCode.STORAGE_UNAVAILABLE,
                               "storage is unavailable; resume again shortly") from None
        raise
    if viewer not in table.viewers:   # it left or dropped while we read
        viewer.forget(table.id)
        return
    head = None
    if replay is None:
        upto = table.state.seq_for(player)
        head = (upto, head_payloads(table.state, table.match, player, table.spectators()))
    result = ResumeResult(table=table.id, seat=table.state.seat_of(player), seq=upto,
                          snapshot=replay is None, replayed=len(replay) if replay else 0)
    if not viewer.end_resume(table.id, cmd.id, result, replay, head, upto):
        table.head(viewer)
    if seat is None:
        await table.announce_spectators()
