"""The server's state with a lifecycle: tables, sessions, connections (no module globals).

The hub turns each decoded command into a table mutation (:mod:`.lobby`) or a session
step, and owns what spans tables: players' tokens, the grace periods of dropped seats,
and the sweep that cleans up finished or abandoned tables.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import secrets
import time
import uuid
from typing import Any

import msgpack
import msgspec

import protocol
from protocol import ErrorCode
from server.game.record import export_record
from server.store import StorageUnavailable, Store, VersionConflict

from . import lobby
from .config import Settings
from .errors import CommandError
from .peer import Peer, send_to
from .table import Table
from .tablestate import TableState

log = logging.getLogger(__name__)


def token_hash(token: str) -> str:
    """Tokens are secrets: Redis only ever holds their hash."""
    return hashlib.sha256(token.encode()).hexdigest()


class Hub:
    def __init__(self, store: Store, settings: Settings) -> None:
        self.store = store
        self.settings = settings
        self.tables: dict[str, Table] = {}
        self.peers: set[Peer] = set()
        self._grace: dict[tuple[str, int], asyncio.Task[None]] = {}
        self._sweeper: asyncio.Task[None] | None = None
        self.started_at = time.time()
        self.closing = False

    # ------------------------------------------------------------------ lifecycle

    async def load(self) -> None:
        """Restart recovery: every stored table resumes where its last stored command left it.

        Bots and turn timers start again; seated humans are disconnected until they resume,
        so their grace periods start now.
        """
        for tid in await self.store.table_ids():
            loaded = await self.store.load_table(tid)
            if loaded is None:
                continue
            version, raw = loaded
            try:
                state = TableState.from_bytes(raw)
            except (ValueError, TypeError, KeyError):
                log.exception("table %s: unreadable stored state; left alone", tid)
                continue
            table = self._adopt(state, version)
            if state.status == "playing":
                for seat, s in enumerate(state.seats):
                    if s.kind == "human" and not s.takeover and s.player:
                        self._start_grace(table, seat, s.player)
            table.after_change()
        log.info("loaded %d tables from storage", len(self.tables))
        self._sweeper = asyncio.get_running_loop().create_task(self._sweep_forever())

    async def close(self) -> None:
        """Graceful shutdown: stop timers, wait for in-flight commands to be stored."""
        self.closing = True
        if self._sweeper:
            self._sweeper.cancel()
        for task in self._grace.values():
            task.cancel()
        for table in self.tables.values():
            table.cancel_tasks()
        for table in list(self.tables.values()):
            async with table.lock:     # any command being stored finishes first
                pass

    def _adopt(self, state: TableState, version: int) -> Table:
        table = Table(state, version, self.store, self.settings)
        self.tables[state.id] = table
        return table

    # ------------------------------------------------------------------ sessions

    async def hello(self, peer: Peer, cmd: protocol.Hello) -> protocol.Welcome:
        version = protocol.negotiate(cmd.versions)
        if version is None:
            raise CommandError(ErrorCode.UNSUPPORTED_VERSION, "no common protocol version")
        token = secrets.token_urlsafe(24)          # 192 bits
        try:
            if cmd.token is not None:
                # Two-step rotation: the new token is bound now, the old one retired at the
                # first command on this connection, which proves the welcome arrived. A
                # crash in between leaves the client a token that still works.
                player = await self.store.player_for_token(token_hash(cmd.token))
                if player is None:
                    raise CommandError(ErrorCode.BAD_TOKEN,
                                       "unknown or expired session token; say hello without one")
                await self.store.bind_token(token_hash(token), player)
                peer.retiring = token_hash(cmd.token)
                raw = await self.store.load_player(player)
                name = msgpack.unpackb(raw)["name"] if raw else cmd.name
                # The token rotated: any other connection of this session is stale now.
                for other in list(self.peers):
                    if other is not peer and other.player == player:
                        other.close(protocol.CloseCode.SESSION_REPLACED,
                                    "session resumed elsewhere")
            else:
                player = uuid.uuid4().hex
                name = cmd.name
                await self.store.save_player(player, msgpack.packb({"name": name}))
                await self.store.bind_token(token_hash(token), player)
        except StorageUnavailable:
            raise CommandError(ErrorCode.STORAGE_UNAVAILABLE,
                               "storage is unavailable; try again shortly") from None
        peer.player, peer.name, peer.token = player, name, token
        self.peers.add(peer)
        return protocol.Welcome(id=cmd.id, version=version, session=token, player_id=player,
                                name=name)

    async def confirm_rotation(self, peer: Peer) -> None:
        """The client used its new token's connection: the old token is now dead."""
        old = peer.retiring
        if old is None or peer.token is None:
            return
        try:
            await self.store.rotate_token(old, token_hash(peer.token))
        except StorageUnavailable:
            return                      # retried at the next command
        peer.retiring = None

    def seats_of(self, player: str) -> list[dict[str, Any]]:
        return [{"table": t.id, "seat": seat} for t in self.tables.values()
                if (seat := t.state.seat_of(player)) is not None]

    # ------------------------------------------------------------------ commands

    async def handle(self, peer: Peer, cmd: Any) -> dict[str, Any]:
        """Carry out one command for ``peer``; the result goes back in an ``ok`` reply."""
        player = peer.player
        assert player is not None
        if isinstance(cmd, protocol.ListTables):
            return {"tables": [t.info() for t in self.tables.values()
                               if not t.state.private or t.state.seat_of(player) is not None],
                    "seats": self.seats_of(player)}
        if isinstance(cmd, protocol.CreateTable):
            return await self._create(peer, cmd)
        if isinstance(cmd, protocol.GetRecord):
            return await self._record(cmd.table)
        table = self.tables.get(cmd.table)
        if table is None:
            raise CommandError(ErrorCode.NO_SUCH_TABLE, f"no table {cmd.table!r}")
        if isinstance(cmd, protocol.Join):
            result = await table.execute(player, cmd.id, lobby.join(
                table, player, peer.name, cmd.seat, cmd.code))
            await self._subscribe(table, peer, spectator=False)
            return result
        if isinstance(cmd, protocol.Spectate):
            return await self._spectate(table, peer, cmd)
        if isinstance(cmd, protocol.Resume):
            return await self._resume(table, peer, cmd)
        if isinstance(cmd, protocol.Leave):
            if peer in table.spectators or table.state.seat_of(player) is None:
                self._unsubscribe(table, peer)
                return {"table": table.id}
            result = await table.execute(player, cmd.id, lobby.leave(table, player))
            self._unsubscribe(table, peer)
            return result
        if isinstance(cmd, protocol.AddBot):
            return await table.execute(player, cmd.id,
                                       lobby.add_bot(table, player, cmd.seat, cmd.level))
        if isinstance(cmd, protocol.RemoveBot):
            return await table.execute(player, cmd.id, lobby.remove_bot(table, player, cmd.seat))
        if isinstance(cmd, protocol.Start):
            return await table.execute(player, cmd.id, lobby.start(table, player))
        if isinstance(cmd, protocol.Play | protocol.ChanterVote | protocol.Discard
                      | protocol.Signal):
            return await table.execute(player, cmd.id, lobby.game_action(player, cmd))
        raise CommandError(ErrorCode.UNKNOWN_TYPE, f"{type(cmd).__name__} is not a table command")

    async def _create(self, peer: Peer, cmd: protocol.CreateTable) -> dict[str, Any]:
        player = peer.player
        assert player is not None
        tid = lobby.table_id_for(player, cmd.id)
        existing = self.tables.get(tid)
        if existing is not None and (prior := existing.state.reply_for(player, cmd.id)):
            return prior
        if len(self.tables) >= self.settings.max_tables:
            raise CommandError(ErrorCode.TOO_MANY_TABLES, "the server has as many tables as it "
                               "can hold; join one or try later")
        state = lobby.new_table_state(tid, player, peer.name, cmd)
        result = {"table": tid, "seat": 0, "code": state.code}
        state.remember(player, cmd.id, result)
        try:
            version = await self.store.create_table(tid, state.to_bytes())
        except StorageUnavailable:
            raise CommandError(ErrorCode.STORAGE_UNAVAILABLE,
                               "storage is unavailable; nothing was created") from None
        except VersionConflict:
            # Created before a lost acknowledgement: adopt the stored table and its reply.
            loaded = await self.store.load_table(tid)
            assert loaded is not None
            version, raw = loaded
            state = TableState.from_bytes(raw)
            result = state.reply_for(player, cmd.id) or result
        table = self.tables.get(tid) or self._adopt(state, version)
        await self._subscribe(table, peer, spectator=False)
        return result

    async def _record(self, tid: str) -> dict[str, Any]:
        table = self.tables.get(tid)
        if table is not None and table.match is not None and table.match.over:
            record = export_record(table.match, [s.name or f"Seat {i}"
                                                 for i, s in enumerate(table.state.seats)])
            return {"table": tid, "record": record}
        if table is not None:
            raise CommandError(ErrorCode.WRONG_PHASE,
                               "the match is not over: its record is private until it ends")
        try:
            raw = await self.store.load_record(tid)
        except StorageUnavailable:
            raise CommandError(ErrorCode.STORAGE_UNAVAILABLE, "storage is unavailable") from None
        if raw is None:
            raise CommandError(ErrorCode.NO_SUCH_TABLE, f"no table or record {tid!r}")
        return {"table": tid, "record": msgspec.json.decode(raw)}

    async def _spectate(self, table: Table, peer: Peer, cmd: protocol.Spectate
                        ) -> dict[str, Any]:
        if table.state.private and cmd.code != table.state.code:
            raise CommandError(ErrorCode.BAD_CODE, "wrong or missing join code")
        if peer not in table.spectators and len(table.spectators) >= self.settings.max_spectators:
            raise CommandError(ErrorCode.TOO_MANY_SPECTATORS, "this table has all the "
                               "spectators it can take")
        await self._subscribe(table, peer, spectator=True)
        return {"table": table.id, "seq": table.state.seq}

    async def _subscribe(self, table: Table, peer: Peer, spectator: bool) -> None:
        """Add a viewer and send it the table as it may see it, in step with the table."""
        async with table.lock:
            table.viewers[peer] = peer.player
            if spectator:
                table.spectators.add(peer)
            else:
                table.spectators.discard(peer)
            peer.tables.add(table.id)
            for frame in table.snapshot_frames(peer):
                send_to([peer], frame)

    def _unsubscribe(self, table: Table, peer: Peer) -> None:
        table.viewers.pop(peer, None)
        table.spectators.discard(peer)
        peer.tables.discard(table.id)

    async def _resume(self, table: Table, peer: Peer, cmd: protocol.Resume) -> dict[str, Any]:
        """Give a seat back after a reconnect, with exactly the events it missed."""
        player = peer.player
        assert player is not None
        if cmd.token != peer.token:
            raise CommandError(ErrorCode.BAD_TOKEN, "that is not this session's current token")
        seat = table.state.seat_of(player)
        if seat is None and table.state.private:
            raise CommandError(ErrorCode.NOT_AT_TABLE, "you are not at this table")
        async with table.lock:
            last = cmd.last_seq
            entries = None
            if last <= table.state.seq:
                try:
                    entries = await self.store.read_log(table.id, last)
                except StorageUnavailable:
                    raise CommandError(ErrorCode.STORAGE_UNAVAILABLE,
                                       "storage is unavailable; resume again shortly") from None
            table.viewers[peer] = player
            if seat is None:
                table.spectators.add(peer)
            peer.tables.add(table.id)
            if entries is None:
                frames = table.snapshot_frames(peer)
            else:
                frames = table.frames_for(peer, [e for e in entries if e[0] <= table.state.seq])
            for frame in frames:
                send_to([peer], frame)
            seq = table.state.seq
        if seat is not None:
            self._cancel_grace(table.id, seat)
            try:
                await table.execute(None, None, lobby.connection_change(table, seat, True))
            except CommandError:
                log.warning("table %s: could not record seat %s reconnecting", table.id, seat)
        return {"table": table.id, "seat": seat, "seq": seq,
                "snapshot": entries is None, "replayed": 0 if entries is None else len(frames)}

    # ------------------------------------------------------------------ disconnects, grace

    async def disconnected(self, peer: Peer) -> None:
        self.peers.discard(peer)
        for tid in list(peer.tables):
            table = self.tables.get(tid)
            if table is None:
                continue
            self._unsubscribe(table, peer)
            if peer.player is None:
                continue
            seat = table.state.seat_of(peer.player)
            if seat is None or any(p.player == peer.player and p.open for p in table.viewers):
                continue
            try:
                await table.execute(None, None, lobby.connection_change(table, seat, False))
            except CommandError:
                log.warning("table %s: could not record seat %s disconnecting", tid, seat)
            if table.state.status == "playing":
                self._start_grace(table, seat, peer.player)

    def _start_grace(self, table: Table, seat: int, player: str) -> None:
        """The seat is held for the table's grace period, then a bot plays it (issue 6)."""
        self._cancel_grace(table.id, seat)
        grace = float(table.state.options.get("grace_s", 120))

        async def expire() -> None:
            await asyncio.sleep(grace)
            for _attempt in range(100):
                try:
                    await table.execute(None, None, lobby.takeover(table, seat, player))
                    return
                except CommandError as exc:
                    if exc.code != ErrorCode.STORAGE_UNAVAILABLE:
                        return
                await asyncio.sleep(1)

        self._grace[(table.id, seat)] = asyncio.get_running_loop().create_task(expire())

    def _cancel_grace(self, tid: str, seat: int) -> None:
        task = self._grace.pop((tid, seat), None)
        if task is not None:
            task.cancel()

    # ------------------------------------------------------------------ clean-up

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(self.settings.sweep_interval_s)
            try:
                await self.sweep()
            except Exception:
                log.exception("sweep failed")

    async def sweep(self, now: float | None = None) -> list[str]:
        """Remove finished tables, and tables nobody has touched, after the table TTL.

        Their live keys go; a finished match's record stays in storage for get_record.
        """
        now = time.time() if now is None else now
        ttl = self.settings.table_ttl_s
        removed = []
        for tid, table in list(self.tables.items()):
            st = table.state
            finished = st.status == "finished" and (st.finished_at or 0) + ttl <= now
            idle = (st.status in ("waiting", "playing") and not table.connected_seats()
                    and not table.spectators and table.last_activity + ttl <= now
                    and not (st.status == "playing" and self._bots_only(table)))
            if not (finished or idle):
                continue
            async with table.lock:
                try:
                    await self.store.delete_table(tid)
                except StorageUnavailable:
                    continue
                table.cancel_tasks()
                self.tables.pop(tid, None)
            removed.append(tid)
            log.info("table %s cleaned up (%s)", tid, "finished" if finished else "abandoned")
        return removed

    @staticmethod
    def _bots_only(table: Table) -> bool:
        return all(s.kind == "bot" for s in table.state.seats)

    # ------------------------------------------------------------------ health

    async def health(self) -> dict[str, Any]:
        storage = await self.store.ping()
        return {"status": "ok" if storage else "storage_unavailable", "storage": storage,
                "tables": len(self.tables), "connections": len(self.peers),
                "uptime_s": round(time.time() - self.started_at, 1)}
