"""A table as this process holds it, kept equal to the stored table: commit, follow, catch up.

The store is the truth (docs/ARCHITECTURE.md, "Many processes"): every change is a commit
naming the version it was computed from, so a stale writer is refused instead of
overwriting. :class:`Replica` is this process's copy of the document and match at a known
version, and the only code that changes it:

- :meth:`commit`: store a command's working copy, its events and its reply in one round
  trip (and publish them to the other processes), then adopt the copy;
- :meth:`hear`: adopt another process's commit from the message it published;
- :meth:`catch_up`: read what this process missed from the store (the document, and the
  log after the last event it delivered);
- :meth:`reload`: adopt the stored document whole, when the log cannot bridge the gap.

Each returns what the viewers must be sent (:class:`Change`); it sends nothing itself.
"""

from __future__ import annotations

import enum
import logging
from dataclasses import dataclass, field

import msgpack
import msgspec

import protocol
from protocol import ErrorCode, ServiceError
from server.game import Match
from server.store import StorageUnavailable, Store
from server.store.bus import CLOSED, Entry, TableCommit, unpack_entry

from ..config import Settings
from .fanout import Counters, number_events
from .mutations import Work
from .replies import REPLIES_KEPT
from .state import TableState, encode_lobby_entry, lobby_entry

log = logging.getLogger(__name__)


class Outcome(enum.Enum):
    CHANGED = "changed"     # adopted: deliver ``entries`` numbered on from ``before``
    RELOADED = "reloaded"   # adopted whole: every viewer needs a head
    UNCHANGED = "unchanged"  # nothing new (our own message, or an old one)
    GAP = "gap"             # a message was missed: catch up from the store
    CLOSED = "closed"       # the table is gone (swept by its owner)


@dataclass(slots=True)
class Change:
    outcome: Outcome
    entries: list[Entry] = field(default_factory=list)
    before: Counters = (0, {})
    #: The spectator count a ``table_changed`` of this change told (None: none did).
    spectators_told: int | None = None


class Replica:
    def __init__(self, state: TableState, version: int, *, store: Store, settings: Settings,
                 process: str) -> None:
        self.state = state
        self.version = version
        self.match = Match.from_dict(state.match) if state.match else None
        self.store = store
        self.settings = settings
        self.process = process
        #: Lag of the last message heard from another process (milliseconds).
        self.heard_lag_ms = 0.0

    @property
    def id(self) -> str:
        return self.state.id

    def counters(self) -> Counters:
        return self.state.pub, dict(self.state.priv)

    # ------------------------------------------------------------------ our commits

    async def commit(self, work: Work, reply: tuple[str, bytes] | None, now: float
                     ) -> Change:
        """Number the events, store everything in one round trip, adopt the copy.

        ``reply`` is ``(player, entry)`` to remember with the commit. Raises
        :class:`VersionConflict` (the table moved on: catch up, then apply the command
        again) or a ``storage_unavailable`` :class:`ServiceError` (nothing was applied,
        as far as anyone can tell: resending with the same id is safe)."""
        state = work.state
        before = (state.pub, dict(state.priv))
        finished = work.match is not None and work.match.over and state.status == "playing"
        if finished:
            state.status = "finished"
            state.finished_at = work.now
            work.table_changed()    # docs/PROTOCOL.md: everyone hears of a status change
        entries = number_events(state, work.events, work.watchers)
        record: bytes | None = None
        if work.match is not None:
            state.match = work.match.to_dict(copy_data=False)   # never mutated once stored
            if finished:
                record = msgpack.packb({"private": state.private, "members": state.members,
                                        "record": msgspec.json.encode(work.record()),
                                        "match": state.matches_started()})
        state.last_activity = work.now
        doc = state.to_bytes()
        info = told = None
        if any(isinstance(em.payload, protocol.TableChanged) for em in work.events):
            told = work.spectators
            info = encode_lobby_entry(lobby_entry(state, told))
        message = TableCommit(self.process, self.version + 1, doc, entries, now)
        s = self.settings
        try:
            self.version = await self.store.commit(
                state.id, self.version, doc, [(e.gseq, e.pack()) for e in entries],
                s.event_log_max, info=info, publish=message.encode(),
                ttl_s=s.table_key_ttl_s, reply=reply, replies_kept=REPLIES_KEPT,
                replies_ttl_s=s.session_ttl_s, record=record, record_ttl_s=s.record_ttl_s,
                record_match=state.matches_started() if record is not None else None)
        except StorageUnavailable:
            # Usually nothing was written; if the write landed but its reply was lost, the
            # version check catches it on the next write, and a resend with the same id is
            # answered from the stored reply: either way, resending is safe.
            raise ServiceError(ErrorCode.STORAGE_UNAVAILABLE,
                               "storage did not confirm the move; send it again with the same "
                               "id (it is never applied twice)") from None
        self.state, self.match = state, work.match
        return Change(Outcome.CHANGED, entries, before, told)

    # ------------------------------------------------------------------ the others' commits

    def hear(self, raw: bytes, now: float) -> Change:
        """Another process's commit of this table, as it published it."""
        try:
            message = TableCommit.decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError):
            log.warning("table %s: a message of another shape on its channel", self.id)
            return Change(Outcome.GAP)
        if message.process == self.process:
            return Change(Outcome.UNCHANGED)
        if message.version == CLOSED:
            return Change(Outcome.CLOSED)
        if message.version <= self.version:
            return Change(Outcome.UNCHANGED)
        self.heard_lag_ms = max(0.0, (now - message.sent) * 1000)
        if message.version != self.version + 1:
            return Change(Outcome.GAP)
        return self._adopt(message.version, TableState.from_bytes(message.doc),
                           message.events)

    def _adopt(self, version: int, fresh: TableState, entries: list[Entry]) -> Change:
        before = self.counters()
        self.version, self.state = version, fresh
        self.match = Match.from_dict(fresh.match) if fresh.match else None
        return Change(Outcome.CHANGED, entries, before)

    async def catch_up(self) -> Change:
        """Read what this process missed: the document, and the log after the last event
        it delivered (or, if those were trimmed, the document alone)."""
        loaded = await self.store.load_table(self.id)
        if loaded is None:
            return Change(Outcome.CLOSED)
        version, raw = loaded
        if version <= self.version:
            return Change(Outcome.UNCHANGED)
        fresh = TableState.from_bytes(raw)
        missed = await self.store.read_log(self.id, self.state.gseq)
        entries = None if missed is None else [unpack_entry(g, b) for g, b in missed
                                               if g <= fresh.gseq]
        if entries is None or any(e is None for e in entries):
            return await self.reload()
        return self._adopt(version, fresh, [e for e in entries if e is not None])

    async def reload(self) -> Change:
        """Adopt the stored document whole (after a version conflict, or a gap the log
        cannot bridge): every viewer needs a head."""
        loaded = await self.store.load_table(self.id)
        if loaded is None:
            return Change(Outcome.CLOSED)
        version, raw = loaded
        fresh = TableState.from_bytes(raw)
        self.version, self.state = version, fresh
        self.match = Match.from_dict(fresh.match) if fresh.match else None
        return Change(Outcome.RELOADED)
