"""The client's connection: a thin asyncio shell around the protocol's ClientSession.

Every session rule (hello and welcome, command ids, replies by id, per-table sequence
numbers, gaps, resume, token rotation, resending unanswered commands after a reconnect)
lives in :class:`protocol.session.ClientSession`, the same state machine the tests and the
network bot use. This module only moves bytes and time: it opens the socket, feeds every
frame to the session, carries out what the session says (send a frame, a reply arrived,
an event to show), reconnects with backoff when the socket drops, and turns replies into
awaitable results for the user interface.

The user interface plugs in through two callbacks: ``on_event(model, seq, event, before)``
after each event is applied to its :class:`TableModel`, and ``on_status(kind, text)`` for
connection news (``lost``, ``reconnected``, ``resumed``, ``warning``, ``error``, ``fatal``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import msgspec
import websockets
from websockets.asyncio.client import ClientConnection, connect

import protocol
from protocol.session import (
    ClientOutput,
    ClientSession,
    ClientState,
    Close,
    Fatal,
    Replied,
    Send,
    SessionLost,
    TableEvent,
    TableLost,
    Welcomed,
)

from .model import TableModel
from .sessions import ID_BLOCK, SessionFile

log = logging.getLogger(__name__)

#: ``on_event(model, seq, event, before)``: ``before`` is the table's lobby info before the
#: event (a ``table_changed`` replaces it).
EventCallback = Callable[[TableModel, int, protocol.EventPayload, protocol.TableInfo | None],
                         None]
StatusCallback = Callable[[str, str], None]

#: Seconds between reconnection attempts (then the last value, forever).
BACKOFF = (0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0)
#: How long a hello may wait for its welcome.
HELLO_TIMEOUT_S = 10.0


class ServerError(Exception):
    """An ``error`` reply to a command."""

    def __init__(self, code: str, message: str = "",
                 details: dict[str, Any] | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.details = details or {}


class ConnectionFailed(Exception):
    """The connection cannot be (re)established: bad URL, refused, or a fatal close."""


class Connection:
    def __init__(self, url: str, name: str, *,
                 on_event: EventCallback | None = None,
                 on_status: StatusCallback | None = None,
                 reply_timeout: float = 30.0,
                 sessions: SessionFile | None = None) -> None:
        self.url = url
        self.name = protocol.clean_text(name)[: protocol.MAX_NAME_LEN] or "player"
        self.on_event = on_event or (lambda *a: None)
        self.on_status = on_status or (lambda kind, text: None)
        self.reply_timeout = reply_timeout
        self.tables: dict[str, TableModel] = {}
        # With a session file, the session (token and command ids) survives a restart.
        self.sessions = sessions
        token, first_id = (None, 1) if sessions is None else sessions.load(url, self.name)
        self.session = ClientSession(self.name, token=token, first_id=first_id)
        self.restored = token is not None
        self._id_limit = first_id
        self._futures: dict[int, asyncio.Future[Any]] = {}
        self._ws: ClientConnection | None = None
        self._welcomed = asyncio.Event()
        self._runner: asyncio.Task[None] | None = None
        self._closing = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self._resuming: dict[int, str] = {}     # resume ids sent after a reconnect -> table
        self._replaying: dict[str, int] = {}    # table -> replayed events still to come
        self._resumed: list[str] | None = None
        self.dead: str | None = None     # why the connection gave up for good
        self.reconnects = 0
        self._last_sent = 0.0

    # ------------------------------------------------------------------ properties

    @property
    def token(self) -> str | None:
        return self.session.token

    @property
    def player_id(self) -> str | None:
        return self.session.player_id

    @property
    def server_name(self) -> str:
        return self.session.name

    @property
    def online(self) -> bool:
        return self.session.state is ClientState.OPEN and self._ws is not None

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Connect and say hello; raises ConnectionFailed if the server is not there or
        refuses us."""
        try:
            reader = await self._open()
        except (OSError, websockets.WebSocketException, TimeoutError) as exc:
            raise ConnectionFailed(f"cannot connect to {self.url}: {exc}") from None
        self._runner = asyncio.get_running_loop().create_task(self._run(reader))
        self._spawn(self._keepalive())

    async def close(self) -> None:
        self._closing = True
        if self._ws is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._ws.close(), 2)
        if self._runner is not None:
            self._runner.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._runner
        for task in list(self._tasks):
            task.cancel()
        self._fail_all(ConnectionFailed("closed"))

    async def _open(self) -> asyncio.Task[int | None]:
        """A socket, a hello, and the welcome (the session then resumes our tables and
        resends what got no answer by itself). Returns the socket's reader task."""
        ws = await connect(self.url, compression=None, open_timeout=5,
                           max_size=protocol.MAX_SERVER_FRAME_BYTES,
                           ping_interval=protocol.PING_INTERVAL_S, ping_timeout=20,
                           close_timeout=2)
        self._ws = ws
        self._welcomed.clear()
        reader = asyncio.get_running_loop().create_task(self._read(ws))
        await self._carry_out(self.session.connect())
        waiter = asyncio.ensure_future(self._welcomed.wait())
        try:
            await asyncio.wait({waiter, reader}, timeout=HELLO_TIMEOUT_S,
                                         return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
        if self._welcomed.is_set():
            return reader
        reader.cancel()
        with contextlib.suppress(Exception):
            await ws.close()
        if self.dead:
            raise ConnectionFailed(self.dead)
        raise TimeoutError("no welcome from the server")

    async def _run(self, reader: asyncio.Task[int | None]) -> None:
        """Wait for the socket to drop; then reconnect (with backoff) until told to stop."""
        try:
            while not self._closing:
                await reader
                if self._closing or self.dead:
                    return
                self.on_status("lost", "Connection to the server lost; reconnecting…")
                new = await self._reconnect()
                if new is None:
                    return
                reader = new
        except Exception as exc:   # a client bug must not leave the user silently offline
            log.exception("connection loop failed")
            self._give_up(f"the client's connection failed: {exc}")

    async def _reconnect(self) -> asyncio.Task[int | None] | None:
        for attempt in itertools.count():
            if self._closing or self.dead:
                return None
            await asyncio.sleep(BACKOFF[min(attempt, len(BACKOFF) - 1)])
            try:
                reader = await self._open()
            except ConnectionFailed as exc:
                self._give_up(str(exc))
                return None
            except (OSError, websockets.WebSocketException, TimeoutError):
                continue
            self.reconnects += 1
            return reader
        return None

    async def _keepalive(self, interval: float = protocol.PING_INTERVAL_S) -> None:
        """docs/PROTOCOL.md: an idle client sends ``ping`` every 20 s (proxies drop silence)."""
        loop = asyncio.get_running_loop()
        while not self._closing:
            await asyncio.sleep(interval)
            if self.online and loop.time() - self._last_sent >= interval:
                with contextlib.suppress(Exception):
                    await self.request(protocol.Ping, resend=False)

    def _give_up(self, why: str) -> None:
        if self.dead:
            return
        self.dead = why
        self._closing = True
        self._fail_all(ConnectionFailed(why))
        self.on_status("fatal", why)

    async def _read(self, ws: ClientConnection) -> int | None:
        """Feed every frame of one socket to the session; return its close code."""
        try:
            async for frame in ws:
                if isinstance(frame, bytes):
                    await self._carry_out(self.session.receive(frame))
        except websockets.ConnectionClosed:
            pass
        except Exception:
            log.exception("reader failed")
        finally:
            if self._ws is ws:
                self._ws = None
            if not self._closing:
                await self._carry_out(self.session.connection_lost(ws.close_code))
        return ws.close_code

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
                case Fatal(reason=reason):
                    self._give_up(reason)
                case Close():   # pragma: no cover - a client never closes this way
                    pass

    def _welcomed_now(self, out: Welcomed) -> None:
        self._remember()
        self._welcomed.set()
        if not out.reconnected:
            return
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

    # ------------------------------------------------------------------ commands

    def _remember(self) -> None:
        if self.sessions is not None:
            self.sessions.save(self.url, self.name, self.session.token, self._id_limit)

    async def request(self, cls: type[msgspec.Struct], *, resend: bool = True,
                      **fields: Any) -> Any:
        """Send one command; return its reply (Ok, Error, Pong). Survives reconnects:
        a ``resend`` command is sent again, with its id, after the next welcome."""
        if self.dead:
            raise ConnectionFailed(self.dead)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        cid = self.session.next_id
        self._futures[cid] = future
        made, outputs = self.session.command(cls, resend=resend, **fields)  # type: ignore[arg-type]
        assert made == cid
        if self.sessions is not None and self.session.next_id > self._id_limit:
            # Ids are unique for the whole session, across restarts: reserve a block.
            self._id_limit = self.session.next_id + ID_BLOCK
            self._remember()
        try:
            await self._carry_out(outputs)
            reply = await asyncio.wait_for(future, self.reply_timeout)
        finally:
            self._futures.pop(cid, None)
        if reply is None:
            raise ConnectionFailed("connection lost before the reply")
        return reply

    async def call(self, cls: type[msgspec.Struct], *, resend: bool = True,
                   **fields: Any) -> dict[str, Any]:
        """Send one command and return its ``ok`` result; raise ServerError on ``error``."""
        reply = await self.request(cls, resend=resend, **fields)
        if isinstance(reply, protocol.Error):
            raise ServerError(reply.code, reply.message, reply.details)
        if isinstance(reply, protocol.Ok):
            result = reply.result if isinstance(reply.result, dict) else {}
            return dict(result)
        return {}

    def _fail_all(self, exc: Exception) -> None:
        for cid, future in list(self._futures.items()):
            if not future.done():
                future.set_exception(exc)
            self._futures.pop(cid, None)

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

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
