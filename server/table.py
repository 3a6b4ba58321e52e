"""One table as an actor: commands in; (new state, events, reply) out; commit; then send.

Every change to a table, whoever causes it (a player's command, a bot's move, a timer, a
connection coming or going), goes through :meth:`Table._execute`, under the table's lock:

1. the pure mutation (:mod:`.mutations`) works on a *copy* of the document and match;
2. the copy, its events and the command's reply are stored in one Redis round trip with a
   version check (a refused or unstored command changes nothing);
3. then, and only then, the reply goes to the command's connection, **before** the events
   it caused (docs/PROTOCOL.md, "Events after ok"), and the events go to every viewer, each
   numbered in that viewer's own sequence (no viewer learns the count or timing of events
   it may not see).

Resumes replay from the store *without* the table's lock: the resuming connection's live
events are held by its session meanwhile and flushed after the replay, in order.

A table's clock (:meth:`Table.run`) is one supervised task that sleeps until the next thing
that acts by itself is due: a bot's move or signals, a turn timer, a grace period's end.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgpack
import msgspec

import protocol
from protocol import AluetteError, CloseCode, CommandError, ErrorCode, RuleError, ServiceError
from protocol.results import Result, ResumeResult, SpectateResult
from protocol.session import Send, SequenceGap
from server.game import Match, spectator_view, view
from server.game.actions import Action, Signal
from server.store import StorageUnavailable, Store, VersionConflict

from . import chat, mutations
from .botrunner import BotRunner
from .cluster import Cluster
from .config import Settings
from .mutations import Audience, Watchers, Work
from .tablestate import TableState, lobby_entry
from .viewer import Viewer

log = logging.getLogger(__name__)

Mutation = Callable[[Work], Result | None]

#: Replies remembered per player per table (a resent command id gets its first answer).
REPLIES_KEPT = 64
#: Players admitted as spectators of a private table, remembered so their resume works.
GUESTS_KEPT = 200
#: How often a table's clock retries an automatic move while storage is down (seconds).
RETRY_BACKOFF = (0.5, 1.0, 2.0, 5.0)


@dataclass(frozen=True, slots=True)
class Entry:
    """One stored event: its log number, who may see it (None: everyone), its bytes."""

    gseq: int
    recipients: tuple[str, ...] | None
    payload: bytes

    def visible_to(self, player: str) -> bool:
        return self.recipients is None or player in self.recipients

    def pack(self) -> bytes:
        return msgpack.packb([list(self.recipients) if self.recipients is not None else None,
                              self.payload])


def unpack_entry(gseq: int, raw: bytes) -> Entry | None:
    """A stored log entry, or None if it is not in this format (an older document)."""
    try:
        recipients, payload = msgpack.unpackb(raw)
    except (ValueError, TypeError, msgpack.UnpackException):
        return None
    if not isinstance(payload, bytes) or not (recipients is None or isinstance(recipients, list)):
        return None
    return Entry(gseq, tuple(recipients) if recipients is not None else None, payload)


def number_events(state: TableState, work: Work) -> list[Entry]:
    """Give each of a command's events its log number and its audience, and count it in
    the viewers' sequences (``state.pub`` or each recipient's ``state.priv``).

    A private event's audience is the players seated where it goes (R8, R9, R16), or for
    chat the players at the table then (:class:`~.mutations.Watchers`); one that reaches no
    player (a bot's hand) is not stored at all.
    """
    entries: list[Entry] = []
    for em in work.events:
        payload = protocol.encode(em.payload)
        if em.to is None:
            state.pub += 1
            recipients: tuple[str, ...] | None = None
        else:
            recipients = audience(state, em.to, work.watchers)
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


@dataclass(frozen=True, slots=True)
class Origin:
    """The connection whose command is being executed, and the command."""

    viewer: Viewer
    command: protocol.Command


@dataclass(frozen=True, slots=True)
class Due:
    """The next thing this table does by itself, and when (wall clock, seconds)."""

    at: float
    kind: str          # "signals" | "bot" | "timer" | "grace" | "rematch"
    seat: int | None = None
    key: tuple[Any, ...] = ()


class Table:
    def __init__(self, state: TableState, version: int, *, store: Store, settings: Settings,
                 bots: BotRunner, cluster: Cluster,
                 clock: Callable[[], float] = time.time) -> None:
        self.state = state
        self.version = version
        self.match = Match.from_dict(state.match) if state.match else None
        self.store = store
        self.settings = settings
        self.bots = bots
        self.clock = clock
        self.lock = asyncio.Lock()
        #: Connections watching this table, seated or not (an insertion-ordered set).
        self.viewers: dict[Viewer, None] = {}
        self._replies: dict[str, dict[int, bytes]] = {}
        self.chat_limits = chat.ChatLimiter(settings.chat_per_second, settings.chat_burst)
        self._wake = asyncio.Event()
        self._turn_key: tuple[Any, ...] | None = None
        self._turn_started = clock()
        self.stalled_since: float | None = None
        self.closed = False
        self.cluster = cluster
        #: This process runs the table's clock (it holds the table's lease).
        self.owned = False
        #: ``<process>|<player>`` -> connections at this table, over every process (this
        #: process's own fields are kept here exactly; the others' are refreshed).
        self.present: dict[str, int] = {}
        #: Messages from the other processes' commits (None: catch up from the log).
        self.inbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._note_turn()

    @property
    def id(self) -> str:
        return self.state.id

    # ------------------------------------------------------------------ who is here

    def _live_fields(self) -> list[tuple[str, int]]:
        return [(f, n) for f, n in self.present.items() if n > 0 and self.cluster.alive(f)]

    def spectators(self) -> int:
        """Connections watching without a seat, on every process."""
        return sum(n for f, n in self._live_fields()
                   if self.state.seat_of(f.partition("|")[2]) is None)

    def humans_watching(self) -> bool:
        """Someone is here, on any process: a seated player's connection or a spectator.
        Bots pause without."""
        return bool(self._live_fields())

    def _connected(self, player: str) -> bool:
        return any(f.partition("|")[2] == player for f, _ in self._live_fields())

    def _add_viewer(self, viewer: Viewer) -> None:
        if viewer in self.viewers:
            return
        self.viewers[viewer] = None
        self._count(viewer.player, +1)

    def _remove_viewer(self, viewer: Viewer) -> None:
        if self.viewers.pop(viewer, False) is None:
            self._count(viewer.player, -1)

    def _count(self, player: str, delta: int) -> None:
        field = self.cluster.field(player)
        n = self.present.get(field, 0) + delta
        if n > 0:
            self.present[field] = n
        else:
            self.present.pop(field, None)
        self.cluster.count(self.id, player, delta)

    async def refresh_presence(self) -> None:
        """The other processes' presence counts, read from the store; ours stay exact."""
        mine = self.cluster.process + "|"
        stored = await self.store.present(self.id)
        fresh = {f: n for f, n in stored.items() if not f.startswith(mine)}
        fresh.update({f: n for f, n in self.present.items() if f.startswith(mine)})
        if fresh != self.present:
            self.present = fresh
            self._wake.set()

    def set_owned(self, owned: bool) -> None:
        if owned != self.owned:
            self.owned = owned
            self._turn_started = self.clock()   # a new owner counts a bot's pause afresh
            self._wake.set()

    def _watchers(self) -> frozenset[str]:
        """Players watching without a seat, on every process (a spectator's chat)."""
        return frozenset(p for f, _ in self._live_fields()
                         if self.state.seat_of(p := f.partition("|")[2]) is None)

    def info(self) -> protocol.TableInfo:
        return self.state.info(self.spectators())

    # ------------------------------------------------------------------ commands

    async def command(self, viewer: Viewer, cmd: protocol.Command) -> None:
        """A player's command for this table; the reply and events go out in order."""
        if isinstance(cmd, protocol.Resume):
            await self.resume(viewer, cmd)
            return
        if isinstance(cmd, protocol.Spectate):
            await self.spectate(viewer, cmd)
            return
        if isinstance(cmd, protocol.Leave) and self.state.seat_of(viewer.player) is None:
            if viewer not in self.viewers:
                raise CommandError(ErrorCode.NOT_AT_TABLE, "you are not at this table")
            self.unsubscribe(viewer)
            viewer.send(viewer.session.ok(cmd.id, protocol.LeaveResult(table=self.id)))
            return
        mutate = self._mutation(viewer, cmd)
        async with self.lock:
            prior = await self._prior_reply(viewer.player, cmd.id)
            if prior is not None:
                viewer.send(Send(protocol.encode(protocol.Ok(id=cmd.id,
                                                             result=msgspec.Raw(prior)))))
                seated = self.state.seat_of(viewer.player) is not None
                if isinstance(cmd, protocol.Join) and seated:
                    self.subscribe(viewer)   # a resent join after a reconnect: watch again
                return
            await self._execute(mutate, Origin(viewer, cmd))

    def _mutation(self, viewer: Viewer, cmd: protocol.Command) -> Mutation:
        player = viewer.player
        if isinstance(cmd, protocol.Join):
            return lambda w: mutations.join(w, player, viewer.name, cmd.seat, cmd.code,
                                            cmd.contribution, bot=viewer.bot)
        if isinstance(cmd, protocol.Leave):
            return lambda w: mutations.leave(w, player)
        if isinstance(cmd, protocol.AddBot):
            return lambda w: mutations.add_bot(w, player, cmd.seat, cmd.level)
        if isinstance(cmd, protocol.RemoveBot):
            return lambda w: mutations.remove_bot(w, player, cmd.seat)
        if isinstance(cmd, protocol.Start):
            return lambda w: mutations.start(w, player, cmd.contribution)
        if isinstance(cmd, protocol.Rematch):
            return lambda w: mutations.rematch(w, player, cmd.contribution)
        if isinstance(cmd, protocol.Chat):
            allowed = self.chat_limits.allow(player, self.clock())
            return lambda w: chat.post(w, player, viewer.name, cmd.text, allowed=allowed)
        if isinstance(cmd, protocol.Mute):
            return lambda w: chat.mute(w, player, cmd.sender, cmd.muted)
        if isinstance(cmd, protocol.Play | protocol.ChanterVote | protocol.Discard
                      | protocol.Signal):
            return lambda w: mutations.game_action(w, player, cmd)
        raise CommandError(ErrorCode.UNKNOWN_TYPE, f"{type(cmd).__name__} is not a table command")

    async def _prior_reply(self, player: str, cid: int) -> bytes | None:
        """The stored result of a command id this player already sent here, if any."""
        kept = self._replies.get(player)
        if kept is None:
            try:
                raw = await self.store.load_replies(self.id, player)
            except StorageUnavailable:
                raise ServiceError(ErrorCode.STORAGE_UNAVAILABLE,
                                   "storage is unavailable; send it again with the same id"
                                   ) from None
            kept = {}
            for item in reversed(raw):
                prior_cid, result = msgpack.unpackb(item)
                kept[prior_cid] = result
            self._replies[player] = kept
        return kept.get(cid)

    def _remember(self, player: str, cid: int, result: bytes) -> bytes:
        kept = self._replies.setdefault(player, {})
        kept[cid] = result
        while len(kept) > REPLIES_KEPT:
            del kept[next(iter(kept))]
        return msgpack.packb([cid, result])  # type: ignore[no-any-return]

    # ------------------------------------------------------------------ the one way to change

    async def _execute(self, mutate: Mutation, origin: Origin | None = None, *,
                       force: bool = False) -> Result | None:
        """Apply ``mutate`` to a copy, store it, then reply to ``origin`` and fan out.

        Must be called with the lock held. A version conflict (another process, or a write
        whose acknowledgement was lost, moved the table on) reloads the table and applies
        the command again to the fresh state, so the player never sees it.
        """
        assert self.lock.locked()
        if self.closed:
            raise CommandError(ErrorCode.NO_SUCH_TABLE, "this table has been closed")
        for attempt in range(3):
            work = Work(self.state.copy(), self.match.clone() if self.match else None,
                        spectators=self.spectators(), now=self.clock(),
                        watchers=self._watchers())
            result = mutate(work)
            if not work.events and origin is None and result is None and not force:
                return None   # nothing happened (e.g. a presence change that is not news)
            try:
                entries, counters = await self._commit(work, origin, result)
            except VersionConflict:
                log.warning("table %s: version conflict (attempt %d); catching up", self.id,
                            attempt + 1)
                await self._catch_up_locked()
                continue
            self._deliver(entries, counters, origin, result)
            return result
        raise ServiceError(ErrorCode.CONFLICT, "the table kept changing while your command was "
                           "applied; nothing was applied, send it again with the same id")

    async def _commit(self, work: Work, origin: Origin | None, result: Result | None,
                      ) -> tuple[list[Entry], tuple[int, dict[str, int]]]:
        """Number the events, store everything in one round trip, adopt the copy.

        Returns the stored entries and the counters before them (each viewer's numbering
        of this commit's events starts from those)."""
        state = work.state
        pub0, priv0 = state.pub, dict(state.priv)
        finished = work.match is not None and work.match.over and state.status == "playing"
        if finished:
            state.status = "finished"
            state.finished_at = work.now
            work.table_changed()    # docs/PROTOCOL.md: everyone hears of a status change
        entries = number_events(state, work)
        record: bytes | None = None
        if work.match is not None:
            state.match = work.match.to_dict(copy_data=False)   # never mutated once stored
            if finished:
                record = msgpack.packb({"private": state.private, "members": state.members,
                                        "record": msgspec.json.encode(work.record()),
                                        "match": state.matches_started()})
        state.last_activity = work.now
        reply = None
        if origin is not None and result is not None:
            reply = (origin.viewer.player,
                     self._remember(origin.viewer.player, origin.command.id,
                                    protocol.encode(result)))
        doc = state.to_bytes()
        info = None
        if any(isinstance(em.payload, protocol.TableChanged) for em in work.events):
            info = lobby_entry(state, self.spectators())
        message = msgpack.packb([self.cluster.process, self.version + 1, doc,
                                 [[e.gseq, list(e.recipients) if e.recipients is not None
                                   else None, e.payload] for e in entries], self.clock()])
        try:
            self.version = await self.store.commit(
                state.id, self.version, doc,
                [(e.gseq, e.pack()) for e in entries], self.settings.event_log_max,
                info=info, publish=message,
                ttl_s=self.settings.table_key_ttl_s, reply=reply, replies_kept=REPLIES_KEPT,
                replies_ttl_s=self.settings.session_ttl_s, record=record,
                record_ttl_s=self.settings.record_ttl_s,
                record_match=state.matches_started() if record is not None else None)
        except StorageUnavailable:
            # Usually nothing was written; if the write landed but its reply was lost, the
            # version check catches it on the next write, and a resend with the same id is
            # answered from the stored reply: either way, resending is safe.
            if origin is not None:
                self._replies.pop(origin.viewer.player, None)
            raise ServiceError(ErrorCode.STORAGE_UNAVAILABLE,
                               "storage did not confirm the move; send it again with the same "
                               "id (it is never applied twice)") from None
        except VersionConflict:
            self._replies.clear()
            raise
        self.state, self.match = state, work.match
        return entries, (pub0, priv0)

    def _deliver(self, entries: list[Entry], counters: tuple[int, dict[str, int]],
                 origin: Origin | None, result: Result | None) -> None:
        """After a commit: the reply first, then the subscription it changes, then events."""
        pub0, priv0 = counters
        headed: set[Viewer] = set()
        if origin is not None and result is not None:
            viewer, cmd = origin.viewer, origin.command
            viewer.send(viewer.session.ok(cmd.id, result))
            if isinstance(cmd, protocol.Join):
                self.subscribe(viewer)
                headed.add(viewer)
            elif isinstance(cmd, protocol.Leave):
                self.unsubscribe(viewer)
        for viewer in list(self.viewers):
            if viewer in headed or not viewer.open:
                continue
            player = viewer.player
            seq = pub0 + priv0.get(player, 0)
            frames = []
            try:
                for e in entries:
                    if e.visible_to(player):
                        seq += 1
                        out = viewer.session.event(self.id, seq, e.payload)
                        if out is not None:
                            frames.append(out)
            except SequenceGap as gap:
                log.error("table %s: sequence gap for %s (%s); sending a snapshot", self.id,
                          player, gap)
                frames = self.head(viewer)
            viewer.send_all(frames)
        self._note_turn()
        self._wake.set()

    # ------------------------------------------------------------------ other processes

    async def follow(self) -> None:
        """Apply the other processes' commits of this table, in order (a supervised task):
        adopt the new document and deliver the events to this process's viewers, each in
        its own numbering. A message that skips a version means one was missed: the table
        catches up from its event log instead."""
        while not self.closed:
            message = await self.inbox.get()
            try:
                async with self.lock:
                    if message is None:
                        await self._catch_up_locked()
                    else:
                        await self._remote(message)
            except StorageUnavailable as exc:
                log.warning("table %s: could not catch up (%s); will again", self.id, exc)
                self.inbox.put_nowait(None)
                await asyncio.sleep(1)

    async def _remote(self, message: bytes) -> None:
        process, version, doc, raw, sent = msgpack.unpackb(message)
        if version == -1 and process != self.cluster.process:
            self._closed_elsewhere()
            return
        if process == self.cluster.process or version <= self.version:
            return
        self.cluster.last_lag_ms = max(0.0, (self.clock() - sent) * 1000)
        if version != self.version + 1:
            self.cluster.gaps += 1
            await self._catch_up_locked()
            return
        entries = [Entry(g, tuple(r) if r is not None else None, p) for g, r, p in raw]
        self._adopt_remote(version, TableState.from_bytes(doc), entries)

    def _closed_elsewhere(self) -> None:
        """The owner swept the table: tell this process's viewers, and let it go."""
        st = self.state
        if st.status != "finished":
            st.status = "abandoned"
        for viewer in list(self.viewers):
            viewer.send_all(viewer.session.rebase(
                self.id, st.seq_for(viewer.player), [protocol.TableChanged(table=st.info(0))]))
        self.close()

    def _adopt_remote(self, version: int, fresh: TableState, entries: list[Entry]) -> None:
        counters = (self.state.pub, dict(self.state.priv))
        self.version, self.state = version, fresh
        self.match = Match.from_dict(fresh.match) if fresh.match else None
        self._replies.clear()
        self._deliver(entries, counters, None, None)

    async def catch_up(self) -> None:
        async with self.lock:
            await self._catch_up_locked()

    async def take_over(self) -> None:
        """This process has just taken the table's lease: whoever the seats' connections
        were on, a seat with no live connection anywhere is disconnected now (a restart, or
        the previous owner's process died with them); its grace period runs from now."""
        await self.catch_up()
        await self.refresh_presence()
        for seat, s in enumerate(self.state.seats):
            if s.kind == "human" and s.player and s.connected != self._connected(s.player):
                await self.presence(seat)

    async def _catch_up_locked(self) -> None:
        """Read what this process missed from the store: the document, and the log after
        the last event it delivered (or, if those were trimmed, re-base every viewer)."""
        loaded = await self.store.load_table(self.id)
        if loaded is None:
            self.closed = True
            return
        version, raw = loaded
        if version <= self.version:
            return
        fresh = TableState.from_bytes(raw)
        missed = await self.store.read_log(self.id, self.state.gseq)
        entries = None if missed is None else [unpack_entry(g, b) for g, b in missed
                                               if g <= fresh.gseq]
        if entries is None or any(e is None for e in entries):
            await self.reload()
            return
        self._adopt_remote(version, fresh, [e for e in entries if e is not None])

    async def reload(self) -> None:
        """Adopt the stored state (after a version conflict) and re-base every viewer."""
        loaded = await self.store.load_table(self.id)
        if loaded is None:
            self.closed = True
            return
        version, raw = loaded
        fresh = TableState.from_bytes(raw)
        self.version, self.state = version, fresh
        self.match = Match.from_dict(fresh.match) if fresh.match else None
        self._replies.clear()
        for viewer in list(self.viewers):
            viewer.send_all(self.head(viewer))
        self._note_turn()
        self._wake.set()

    # ------------------------------------------------------------------ watching

    def head(self, viewer: Viewer) -> list[Send]:
        """The table as this viewer may see it now, re-basing its sequence
        (:meth:`_head_payloads`)."""
        return viewer.session.rebase(self.id, self.state.seq_for(viewer.player),
                                     self._head_payloads(viewer))

    def subscribe(self, viewer: Viewer) -> None:
        """Start sending this table to ``viewer``, opening with its head."""
        self._add_viewer(viewer)
        viewer.send_all(self.head(viewer))
        self._wake.set()

    def unsubscribe(self, viewer: Viewer) -> None:
        self._remove_viewer(viewer)
        viewer.session.forget(self.id)

    def _may_watch(self, viewer: Viewer, code: str | None) -> bool:
        """A spectator needs the code of a private table (or to have been let in with it
        before), and a free spectator place. True when this admits a new guest."""
        player = viewer.player
        if self.state.seat_of(player) is not None or viewer in self.viewers:
            return False
        new_guest = False
        if self.state.private and player not in self.state.members:
            if code is None and player in self.state.guests:
                pass
            elif code != self.state.code:
                raise CommandError(ErrorCode.BAD_CODE, "wrong or missing join code")
            else:
                new_guest = player not in self.state.guests
        if self.spectators() >= self.settings.max_spectators:
            raise CommandError(ErrorCode.TOO_MANY_SPECTATORS,
                               "this table has all the spectators it can take")
        return new_guest

    async def spectate(self, viewer: Viewer, cmd: protocol.Spectate) -> None:
        """Watch the table: ok, then the head. A seated player gets their seat's view.

        A player let into a private table with its code is remembered (stored), so that
        their resume after a drop or a server restart is let in too.
        """
        if self._may_watch(viewer, cmd.code):
            player = viewer.player
            async with self.lock:
                def admit(w: Work) -> Result | None:
                    kept = [g for g in w.state.guests if g != player][-GUESTS_KEPT + 1:]
                    w.state.guests = [*kept, player]
                    return None
                await self._execute(admit, force=True)
        viewer.send(viewer.session.ok(cmd.id, SpectateResult(
            table=self.id, seq=self.state.seq_for(viewer.player))))
        self.subscribe(viewer)

    async def resume(self, viewer: Viewer, cmd: protocol.Resume) -> None:
        """Replay what ``viewer`` missed since ``last_seq`` (or a snapshot), then go live.

        The replay is read from the store without the table's lock; meanwhile the viewer's
        live events are held by its session and follow the replay, in order.
        """
        player = viewer.player
        seat = self.state.seat_of(player)
        if seat is None:
            if self.state.private and player not in self.state.members \
                    and player not in self.state.guests:
                raise CommandError(ErrorCode.NOT_AT_TABLE, "you are not at this table")
            self._may_watch(viewer, None)
        session = viewer.session
        was_watching = viewer in self.viewers
        session.begin_catchup(self.id)
        self._add_viewer(viewer)
        try:
            if seat is not None:
                # Back at its seat before it hears anything: a bot playing the seat stops
                # now, so a turn the replay shows it is really its own to play.
                await self.presence(seat)
            upto = self.state.seq_for(player)
            anchor = self.state.gseq
            replay: list[tuple[int, bytes]] | None = None
            if cmd.last_seq <= upto:
                replay = await self._replay(player, cmd.last_seq, upto, anchor)
        except BaseException as exc:
            # Keep a connection that was watching live (a fresh head re-bases it);
            # one that was not is not subscribed.
            session.forget(self.id)
            if was_watching and viewer in self.viewers:
                viewer.send_all(self.head(viewer))
            else:
                self._remove_viewer(viewer)
            if isinstance(exc, StorageUnavailable):
                raise ServiceError(ErrorCode.STORAGE_UNAVAILABLE,
                                   "storage is unavailable; resume again shortly") from None
            raise
        if viewer not in self.viewers:   # it left or dropped while we read
            session.forget(self.id)
            return
        snapshot = None
        if replay is None:
            upto = self.state.seq_for(player)
            snapshot = (upto, self._head_payloads(viewer))
        seat = self.state.seat_of(player)
        ok = session.ok(cmd.id, ResumeResult(table=self.id, seat=seat, seq=upto,
                                             snapshot=replay is None,
                                             replayed=len(replay) if replay else 0))
        frames = session.finish_resume(self.id, ok, replay, snapshot, upto)
        if session.needs_snapshot:
            frames += self.head(viewer)
        viewer.send_all(frames)

    def _head_payloads(self, viewer: Viewer) -> list[protocol.EventPayload]:
        """A head's events: ``table_changed``, a ``snapshot`` when a match exists, and the
        chat so far when this viewer may see some (``chat_history``)."""
        payloads: list[protocol.EventPayload] = [protocol.TableChanged(table=self.info())]
        if self.match is not None:
            seat = self.state.seat_of(viewer.player)
            v = view(self.match, seat) if seat is not None else spectator_view(self.match)
            payloads.append(protocol.Snapshot(view=protocol.view_from_dict(v)))
        history = chat.history(self.state, viewer.player)
        if history is not None:
            payloads.append(history)
        return payloads

    async def _replay(self, player: str, after: int, upto: int,
                      anchor: int) -> list[tuple[int, bytes]] | None:
        """``player``'s events numbered ``after+1 .. upto``, read backwards from the log
        entry ``anchor`` (the last one when ``upto`` was read); None if some were trimmed."""
        if after == upto:
            return []
        want = upto - after
        window = min(max(4 * want + 16, 64), self.settings.event_log_max)
        while True:
            first = max(0, anchor - window)
            raw = await self.store.read_log(self.id, first)
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
            if first == 0 or window >= self.settings.event_log_max:
                return None
            window = min(window * 4, self.settings.event_log_max)

    # ------------------------------------------------------------------ presence

    async def presence(self, seat: int) -> None:
        """Record whether the human in ``seat`` has a live connection here (news only).

        Decided under the table's lock, against the state as it is then: a connection
        that drops while another of the same player resumes must not leave the seat marked
        disconnected (whichever runs second sees the other's result).
        """
        async with self.lock:
            s = self.state.seats[seat]
            if s.kind != "human" or s.player is None:
                return
            if len(self.cluster.live) > 1:
                with contextlib.suppress(StorageUnavailable):
                    await self.refresh_presence()     # a connection on another process
            connected = self._connected(s.player)
            if s.connected == connected:
                return
            try:
                await self._execute(lambda w: mutations.connection_change(w, seat, connected))
            except AluetteError as exc:
                log.warning("table %s: seat %s presence not recorded: %s", self.id, seat, exc)

    async def viewer_gone(self, viewer: Viewer) -> None:
        """A connection closed: stop sending to it; a seat whose last connection it was is
        now disconnected (its grace period starts)."""
        if viewer not in self.viewers:
            return
        self.unsubscribe(viewer)
        seat = self.state.seat_of(viewer.player)
        if seat is not None:
            await self.presence(seat)
        self._wake.set()

    # ------------------------------------------------------------------ the table's clock

    def _note_turn(self) -> None:
        """Remember when the current turn began: signals and presence changes do not
        restart it (a bot that paused after each signal would tell opponents it signalled)."""
        m = self.match
        key = None if m is None or m.over else (
            m.deal_number, len(m.tricks), len(m.trick), str(m.phase), m.to_act)
        if key != self._turn_key:
            self._turn_key = key
            self._turn_started = self.clock()

    def next_due(self) -> Due | None:
        """What this table will do by itself next, from its state alone; nothing unless
        this process owns the table (holds its lease)."""
        if not self.owned:
            return None
        state, m = self.state, self.match
        if state.status == "finished":
            at = mutations.rematch_due(state)
            return Due(at, "rematch") if at is not None else None
        if m is None or m.over or state.status != "playing":
            return None
        dues: list[Due] = []
        for seat, s in enumerate(state.seats):
            if (s.kind == "human" and not s.connected and not s.takeover
                    and s.disconnected_at is not None):
                dues.append(Due(s.disconnected_at + state.options.grace_s, "grace", seat,
                                (s.player,)))
        if self.humans_watching():
            if state.options.signals != "off" and self._pending_bot_signals():
                dues.append(Due(self.clock(), "signals"))
            seat = m.to_act
            if seat is not None and self._turn_key is not None:
                if state.controlled_by_bot(seat):
                    delay = state.options.bot_delay_ms / 1000
                    dues.append(Due(self._turn_started + delay, "bot", seat, self._turn_key))
                elif state.options.turn_timer_s:
                    dues.append(Due(self._turn_started + state.options.turn_timer_s, "timer",
                                    seat, self._turn_key))
        return min(dues, key=lambda d: d.at) if dues else None

    def _bot_seed(self, seat: int, what: str) -> str:
        """A bot's randomness for this turn: the table's secret seed, the match (a rematch
        replays the same turns, and must not replay the same draws), the seat and the
        turn. Fixed for a turn, so a bot asked again after a restart decides the same."""
        key = self._turn_key or ()
        return f"{self.state.seed}:{self.state.matches_started()}:{what}:{seat}:{key}"

    def _pending_bot_signals(self) -> list[Signal]:
        m = self.match
        assert m is not None
        wanted: list[Signal] = []
        for seat in range(4):
            if self.state.controlled_by_bot(seat):
                wanted += self.bots.signals(self.state.bot_level(seat), view(m, seat),
                                            self._bot_seed(seat, "signal"))
        return wanted

    async def run(self) -> None:
        """The table's clock: act when something is due; sleep until then or a change."""
        backoff = 0
        while not self.closed:
            due = self.next_due()
            wait = None if due is None else due.at - self.clock()
            if wait is None or wait > 0:
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), wait)
                continue
            assert due is not None
            try:
                await self._act(due)
                backoff = 0
                self.stalled_since = None
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                # Nothing was applied (storage down, or a bug): try again, forever, with a
                # ceiling on the pace; /healthz reports the table as stalled meanwhile.
                if self.stalled_since is None:
                    self.stalled_since = self.clock()
                if isinstance(exc, ServiceError | StorageUnavailable):
                    log.warning("table %s: %s not applied (%s); retrying", self.id, due.kind,
                                exc)
                else:
                    log.exception("table %s: %s failed; retrying", self.id, due.kind)
                await asyncio.sleep(RETRY_BACKOFF[min(backoff, len(RETRY_BACKOFF) - 1)])
                backoff += 1

    async def _act(self, due: Due) -> None:
        if due.kind == "rematch":
            async with self.lock:
                await self._execute(mutations.start_rematch_if_agreed)
            return
        if due.kind == "grace":
            assert due.seat is not None
            player = due.key[0]
            async with self.lock:
                await self._execute(lambda w: mutations.takeover(w, due.seat, player))
            log.info("table %s: a bot now plays seat %s", self.id, due.seat)
            return
        m = self.match
        assert m is not None
        if due.kind == "signals":
            signals = self._pending_bot_signals()
            async with self.lock:
                def send_signals(w: Work) -> None:
                    for sig in signals:
                        if w.match is None or w.match.over:
                            return
                        try:
                            w.apply(sig)
                        except RuleError:
                            log.exception("table %s: bot signal %r refused", self.id, sig)
                await self._execute(send_signals)
            return
        seat = due.seat
        assert seat is not None
        level = self.state.bot_level(seat) if due.kind == "bot" else self.state.options.bot_level
        if due.kind == "timer":
            log.info("table %s: turn timer expired for seat %s", self.id, seat)
        action = await self.bots.decide(level, view(m, seat), self._bot_seed(seat, "move"),
                                        self.state.options.bot_budget)
        async with self.lock:
            if self._turn_key != due.key or self.match is None:
                return   # the table moved on while the bot thought
            if due.kind == "bot" and not self.state.controlled_by_bot(seat):
                return   # its human came back meanwhile: the turn is theirs
            if not self.owned or not self.humans_watching():
                return   # paused (nobody watches) or another process runs the table now
            await self._execute(lambda w: self._bot_move(w, seat, action))

    def _bot_move(self, work: Work, seat: int, action: Action | None) -> None:
        """The bot's move; one the engine refuses (a bot bug) is logged and replaced by the
        first legal move, so a bot never stalls its table."""
        match = work.match
        assert match is not None
        if match.to_act != seat:
            return
        if action is not None:
            try:
                mutations.bot_action(work, seat, action)
                return
            except RuleError:
                log.exception("table %s: bot move %r for seat %s refused", self.id, action, seat)
        legal = match.legal_actions(seat)
        if legal:
            mutations.bot_action(work, seat, legal[0])

    # ------------------------------------------------------------------ closing

    def close(self, reason: str = "closed") -> None:
        """The table leaves this server (swept or shutting down): stop its clock."""
        self.closed = True
        self._wake.set()
        for viewer in list(self.viewers):
            self.unsubscribe(viewer)

    def drop_viewers(self, code: CloseCode, reason: str) -> None:
        for viewer in list(self.viewers):
            viewer.drop(code, reason)
