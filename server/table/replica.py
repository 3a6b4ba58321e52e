"""A table as this process holds it, kept equal to the stored table: commit, follow, catch up.

The store is the truth (docs/ARCHITECTURE.md, "Many processes"): every change is a commit
naming the version it was computed from, so a stale writer is refused instead of
overwriting. :class:`Replica` is this process's copy of the document and match at a known
version, and the only code that changes it:

- :meth:`commit`: store a command's working copy, its events and its reply in one round
  trip (and publish them to the other processes, when there are any), then adopt the copy.
  A game action is stored as a delta of its actions (:mod:`.delta`); anything else, and
  every :data:`~.delta.COMPACT_EVERY`-th commit, as the whole document;
- :meth:`hear`: adopt another process's commit from the message it published (its delta
  applied to this copy, or its whole document);
- :meth:`catch_up`: read what this process missed from the store (the table, and the log
  after the last event it delivered);
- :meth:`reload`: adopt the stored table whole, when the log cannot bridge the gap.

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
from server.game import Match, RuleError
from server.store import StorageUnavailable, Store, StoredTable
from server.store.bus import CLOSED, Entry, TableCommit, unpack_entry

from ..config import Settings
from . import delta
from .delta import COMPACT_EVERY, TableDelta
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
    #: Heard from the commit's own message, which carries its command's answer (``reply``:
    #: the player and the entry, if it had one): the answers this process remembers stay
    #: complete. A change read from the store does not say.
    replies_known: bool = False
    reply: tuple[str, bytes] | None = None
    #: This commit ended a match (issue 27: its history and ratings are kept).
    finished: bool = False


class Replica:
    def __init__(self, state: TableState, version: int, *, store: Store, settings: Settings,
                 process: str, match: Match | None = None) -> None:
        self.state = state
        self.version = version
        self.match = match if match is not None else (
            Match.from_dict(state.match) if state.match else None)
        self.store = store
        self.settings = settings
        self.process = process
        #: Lag of the last message heard from another process (milliseconds).
        self.heard_lag_ms = 0.0
        #: Light commits since the whole document was last written (by anyone), as far as
        #: this process knows: it writes the whole document when it reaches COMPACT_EVERY.
        self.lights = 0

    @property
    def id(self) -> str:
        return self.state.id

    def counters(self) -> Counters:
        return self.state.pub, dict(self.state.priv)

    # ------------------------------------------------------------------ our commits

    async def commit(self, work: Work, reply: tuple[str, bytes] | None, now: float, *,
                     publish: bool = True) -> Change:
        """Number the events, store everything in one round trip, adopt the copy.

        ``reply`` is ``(player, entry)`` to remember with the commit; ``publish``: other
        processes may hold the table (a process alone does not send itself its commits).
        Raises :class:`VersionConflict` (the table moved on: catch up, then apply the
        command again) or a ``storage_unavailable`` :class:`ServiceError` (nothing was
        applied, as far as anyone can tell: resending with the same id is safe)."""
        state = work.state
        before = (state.pub, dict(state.priv))
        finished = work.match is not None and work.match.over and state.status == "playing"
        if finished:
            state.status = "finished"
            state.finished_at = work.now
            work.table_changed()    # docs/PROTOCOL.md: everyone hears of a status change
        entries = number_events(state, work.events, work.watchers)
        state.last_activity = work.now
        info = told = None
        if any(isinstance(em.payload, protocol.TableChanged) for em in work.events):
            told = work.spectators
            info = encode_lobby_entry(lobby_entry(state, told))
        light = (work.light and bool(work.actions) and info is None and not finished
                 and work.match is not None and self.lights < COMPACT_EVERY)
        record: bytes | None = None
        if light:
            body = delta.delta_of(self.version + 1, work.now, work.actions, state,
                                  before[1]).encode()
        else:
            if work.match is not None:
                state.match = work.match.to_dict(copy_data=False)   # never mutated again
                if finished:
                    record = msgpack.packb({"private": state.private,
                                            "members": state.members,
                                            # issue 28: its holders may read the record
                                            "code": state.code,
                                            "record": msgspec.json.encode(work.record()),
                                            "match": state.matches_started()})
            body = state.to_bytes()
        message = None
        if publish:
            message = TableCommit(self.process, self.version + 1, b"" if light else body,
                                  entries, now, delta=body if light else b"",
                                  reply_to=reply[0] if reply else "",
                                  reply=reply[1] if reply else b"").encode()
        s = self.settings
        try:
            self.version = await self.store.commit(
                state.id, self.version, body, [(e.gseq, e.pack()) for e in entries],
                s.event_log_max, delta=light, info=info, publish=message,
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
        self.lights = self.lights + 1 if light else 0
        self.state, self.match = state, work.match
        return Change(Outcome.CHANGED, entries, before, told, finished=finished)

    def beacon(self, now: float) -> bytes:
        """A message saying only which version this table is at (for a process that joined
        while this one, alone, did not publish)."""
        return TableCommit(self.process, self.version, b"", [], now).encode()

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
        if message.version != self.version + 1 or not (message.doc or message.delta):
            return Change(Outcome.GAP)      # one was missed (or a beacon says we are behind)
        match: Match | None
        if message.delta:
            if self.match is None:
                return Change(Outcome.GAP)
            try:
                state, match = delta.apply(self.state, self.match,
                                           TableDelta.decode(message.delta))
            except (msgspec.DecodeError, msgspec.ValidationError, RuleError):
                log.exception("table %s: a delta that does not apply; reloading", self.id)
                return Change(Outcome.GAP)
            self.lights += 1
        else:
            state = TableState.from_bytes(message.doc)
            # Decoded just now and changed only through clones (execute, delta.apply).
            match = Match.from_dict(state.match, copy_data=False) if state.match else None
            self.lights = 0
        change = self._adopt(message.version, state, match, message.events)
        change.replies_known = True
        if message.reply_to:
            change.reply = (message.reply_to, message.reply)
        return change

    def _adopt(self, version: int, state: TableState, match: Match | None,
               entries: list[Entry]) -> Change:
        before = self.counters()
        self.version, self.state, self.match = version, state, match
        return Change(Outcome.CHANGED, entries, before)

    async def _load(self) -> tuple[StoredTable, TableState, Match | None] | None:
        loaded = await self.store.load_table(self.id)
        if loaded is None:
            return None
        state, match = delta.restore(loaded)
        return loaded, state, match

    async def catch_up(self) -> Change:
        """Read what this process missed: the table, and the log after the last event it
        delivered (or, if those were trimmed, the table alone). Nothing new (the usual
        case, when a table's subscription takes effect) reads no document."""
        stored = await self.store.load_table_if_newer(self.id, self.version)
        if stored is None:
            return Change(Outcome.CLOSED)
        if isinstance(stored, int):
            return Change(Outcome.UNCHANGED)
        fresh, match = delta.restore(stored)
        missed = await self.store.read_log(self.id, self.state.gseq)
        entries = None if missed is None else [unpack_entry(g, b) for g, b in missed
                                               if g <= fresh.gseq]
        if entries is None or any(e is None for e in entries):
            return await self.reload()
        self.lights = len(stored.deltas)
        return self._adopt(stored.version, fresh, match, [e for e in entries if e is not None])

    async def reload(self) -> Change:
        """Adopt the stored table whole (after a version conflict, or a gap the log cannot
        bridge): every viewer needs a head."""
        loaded = await self._load()
        if loaded is None:
            return Change(Outcome.CLOSED)
        stored, fresh, match = loaded
        self.version, self.state, self.match = stored.version, fresh, match
        self.lights = len(stored.deltas)
        return Change(Outcome.RELOADED)
