"""The client connection's tables (:class:`client_cli.connection.Connection` is the
whole): what the session reports (a welcome, a reply, an event, a table or the session
lost) carried out, each table's :class:`TableModel` kept in step with its events, and the
news of a reconnection's resumes."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable

import websockets

import protocol
from protocol.session import (
    ClientOutput,
    Close,
    Fatal,
    GoHome,
    Replied,
    Seated,
    Send,
    SessionLost,
    TableEvent,
    TableLost,
    Welcomed,
)

from .calls import Calls, ServerError
from .link import ConnectionFailed
from .model import TableModel

log = logging.getLogger(__name__)


class Tables(Calls):
    """The session's outputs, and the tables we follow."""

    #: The matchmaker's latest ``matched`` (issue 27).
    last_matched: protocol.Matched | None = None

    # ------------------------------------------------------------------ session outputs

    async def _carry_out(self, outputs: Iterable[ClientOutput]) -> None:
        for out in outputs:
            match out:
                case Send(frame=frame):
                    ws = self._ws
                    if ws is not None:
                        self._last_sent = asyncio.get_running_loop().time()
                        with contextlib.suppress(websockets.ConnectionClosed):
                            await ws.send(frame)
                case Welcomed():
                    self._welcomed_now(out)
                case Replied():
                    self._replied(out)
                case TableEvent():
                    self._table_event(out)
                case TableLost(table=table, code=code):
                    self.tables.pop(table, None)
                    self.on_status("warning", f"Could not resume table "
                                   f"{protocol.clean_text(table)}: {code}")
                case SessionLost():
                    self.tables.clear()
                    self.on_status("warning", "The server no longer knew this session; started "
                                   "a new one (seats of the old one are lost).")
                case Seated(matched=m):          # play now (issue 27)
                    self.last_matched = m
                    self.model(m.table).seat = m.seat
                    self.on_status("matched", f"Seated at table {protocol.clean_text(m.table)}, "
                                   f"seat {m.seat}" + (" (rated)" if m.rated else "")
                                   + ": the match starts now.")
                case GoHome(url=url):            # issue 32: one process serves the table
                    self.go_home(url)
                case Fatal(reason=reason):
                    self._give_up(reason)
                case Close():   # pragma: no cover - a client never closes this way
                    pass

    def _welcomed_now(self, out: Welcomed) -> None:
        self._remember()
        self._welcomed.set()
        renewal = self._renewal
        renewed = renewal is not None
        if renewal is not None:
            renewal.set()            # the socket renew() asked for: no news to tell
        if not out.reconnected:
            return
        if not renewed:
            self.on_status("reconnected", "Reconnected to the server"
                           + ("; resuming your tables…" if self.tables else "."))
        self._resuming = {p.id: p.table for p in self.session.pending.values()
                          if p.type == "resume" and p.table is not None}
        self._replaying = {}
        self._resumed = []
        self._maybe_resumed()

    def _replied(self, out: Replied) -> None:
        future = self._futures.pop(out.id, None)
        if future is not None and not future.done():
            future.set_result(out.reply)
        elif isinstance(out.reply, protocol.Error) and out.reply.id is None:
            self.on_status("error", f"{out.reply.code}: "
                           f"{protocol.clean_text(out.reply.message)}")
        table = self._resuming.pop(out.id, None)
        if table is not None:
            if isinstance(out.reply, protocol.Ok):
                result = out.reply.result if isinstance(out.reply.result, dict) else {}
                how = ("from a fresh snapshot" if result.get("snapshot")
                       else f"{result.get('replayed', 0)} missed events replayed")
                if self._resumed is not None:
                    self._resumed.append(f"table {protocol.clean_text(table)} ({how})")
                # The ok comes first; "resumed" is news once its replay (or head) is in.
                count = 2 if result.get("snapshot") else int(result.get("replayed", 0))
                if count:
                    self._replaying[table] = count
            self._maybe_resumed()
        if isinstance(out.reply, protocol.Ok):
            self._note_seat(out)

    def _maybe_resumed(self) -> None:
        if not self._resuming and not self._replaying and self._resumed is not None:
            self.on_status("resumed", "Resumed " + (", ".join(self._resumed) or "") + ".")
            self._resumed = None

    def _note_seat(self, out: Replied) -> None:
        """Where we sit after create/join (a seat) or spectate (none): the model needs it."""
        assert isinstance(out.reply, protocol.Ok)
        result = out.reply.result if isinstance(out.reply.result, dict) else {}
        table = result.get("table")
        if not isinstance(table, str):
            return
        match out.command:
            case "create_table" | "join" | "resume" if isinstance(result.get("seat"), int):
                self.model(table).seat = result["seat"]
            case "spectate":
                self.model(table).seat = None
            case "leave":
                self.tables.pop(table, None)
            case _:
                pass

    def _table_event(self, out: TableEvent) -> None:
        model = self.model(out.table)
        event = out.event
        before = model.info
        model.seq = out.seq
        left = self._replaying.get(out.table)
        if left is not None:
            if left <= 1 or isinstance(event, protocol.Snapshot):
                del self._replaying[out.table]
            else:
                self._replaying[out.table] = left - 1
        try:
            self._apply(model, out, event, before)
        finally:
            if left is not None and out.table not in self._replaying:
                self._maybe_resumed()

    def _apply(self, model: TableModel, out: TableEvent, event: protocol.EventPayload | None,
               before: protocol.TableInfo | None) -> None:
        if event is None:
            return
        try:
            model.apply(event)
        except Exception:
            log.exception("could not apply %s to table %s", type(event).__name__, out.table)
            self._spawn(self.resync(out.table))
            return
        if model.stale:       # e.g. our discard made for us: which six cards is not said
            model.stale = False
            self._spawn(self.resync(out.table))
        try:
            self.on_event(model, out.seq, event, before)
        except Exception:
            log.exception("event display failed")

    # ------------------------------------------------------------------ tables

    def model(self, table: str) -> TableModel:
        model = self.tables.get(table)
        if model is None:
            model = self.tables[table] = TableModel(table)
        return model

    def forget(self, table: str) -> None:
        self.tables.pop(table, None)
        self.session.forget(table)

    async def take_back_seats(self) -> list[str]:
        """After a restart with a remembered session: resume every live table we sit at,
        each from a fresh snapshot (a ``last_seq`` past our sequence asks for one)."""
        result = await self.call(protocol.ListTables)
        taken = []
        for entry in result.get("seats", []):
            if entry.get("status") in ("finished", "abandoned"):
                continue            # a match that is over needs no seat taken back
            table = str(entry["table"])
            self.model(table).seat = entry.get("seat")
            try:
                await self.call(protocol.Resume, token=self.token, table=table,
                                last_seq=protocol.MAX_COMMAND_ID, resend=False)
            except ServerError:
                self.forget(table)
                continue
            taken.append(table)
        return taken

    async def resync(self, table: str) -> None:
        """Ask for a fresh snapshot of ``table`` (a resume from beyond our sequence)."""
        if self.token is None:
            return
        with contextlib.suppress(ServerError, ConnectionFailed, TimeoutError):
            await self.call(protocol.Resume, token=self.token, table=table,
                            last_seq=protocol.MAX_COMMAND_ID, resend=False)
