"""The client's connection: hello, commands and replies by id, table models, reconnects.

It owns what survives a dropped connection: the newest session token (it rotates on every
hello), the command counter, the commands still waiting for a reply, and one
:class:`TableModel` per table we sit at or watch (with its last sequence number). When the
socket drops it reconnects by itself with backoff, says hello with the newest token,
resumes every table from its last seq (docs/PROTOCOL.md, "Reconnecting") and resends the
commands that got no reply, with the same ids (the server answers a repeated id with the
original reply and never applies it twice).

The user interface plugs in through two callbacks: ``on_event(model, seq, event, before)``
after each frame is applied, and ``on_status(kind, text)`` for connection news.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import msgspec
import websockets
from websockets.asyncio.client import ClientConnection, connect

import protocol
from protocol import CloseCode

from .model import Feed, TableModel
from .sessions import ID_BLOCK, SessionFile

log = logging.getLogger(__name__)

EventCallback = Callable[[TableModel, int, "dict[str, Any] | None", "dict[str, Any] | None"],
                         None]
StatusCallback = Callable[[str, str], None]

#: Close codes after which reconnecting would not help (docs/PROTOCOL.md, "Close codes").
FATAL_CLOSES = {
    CloseCode.PROTOCOL_ERROR: "the server closed the connection: protocol error",
    CloseCode.UNSUPPORTED_VERSION: "the server does not speak this client's protocol version",
    CloseCode.SESSION_REPLACED: "this session was opened from somewhere else",
    CloseCode.MESSAGE_TOO_BIG: "the server refused a message that was too large",
}

#: Seconds between reconnection attempts (then the last value, forever).
BACKOFF = (0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0)


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


@dataclass
class _Pending:
    frame: bytes
    future: asyncio.Future[Any]
    resend: bool  # resent after a reconnect (resume/hello are redone instead)


def _dict(payload: Any) -> dict[str, Any] | None:
    if payload is None or isinstance(payload, protocol.UnknownEvent):
        return None
    result: dict[str, Any] = protocol.to_dict(payload)
    return result


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
        self.token: str | None = None
        self.player_id: str | None = None
        self.server_name: str = self.name
        self.tables: dict[str, TableModel] = {}
        # With a session file, the session (token and command ids) survives a restart.
        self.sessions = sessions
        first_id = 1
        if sessions is not None:
            self.token, first_id = sessions.load(url, self.name)
        self.restored = self.token is not None
        self._ids = itertools.count(first_id)
        self._id_limit = first_id
        self._pending: dict[int, _Pending] = {}
        self._ws: ClientConnection | None = None
        self._online = asyncio.Event()
        self._runner: asyncio.Task[None] | None = None
        self._closing = False
        self._resuming: set[str] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self.dead: str | None = None     # why the connection gave up for good
        self.reconnects = 0
        self._last_sent = 0.0

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Connect and say hello; raises ConnectionFailed if the server is not there."""
        try:
            await self._open()
        except (OSError, websockets.WebSocketException, TimeoutError) as exc:
            raise ConnectionFailed(f"cannot connect to {self.url}: {exc}") from None
        self._runner = asyncio.get_running_loop().create_task(self._run())
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
        self._fail_pending(ConnectionFailed("closed"), everything=True)

    @property
    def online(self) -> bool:
        return self._online.is_set()

    async def _open(self) -> None:
        ws = await connect(self.url, compression=None, open_timeout=5,
                           max_size=protocol.MAX_SERVER_FRAME_BYTES,
                           ping_interval=protocol.PING_INTERVAL_S, ping_timeout=20,
                           close_timeout=2)
        try:
            cid = self._next_id()
            await ws.send(protocol.encode(protocol.Hello(
                id=cid, versions=list(protocol.SUPPORTED_VERSIONS), name=self.name,
                token=self.token)))
            frame = await asyncio.wait_for(ws.recv(), 10)
            reply = protocol.decode_server(frame)  # type: ignore[arg-type]
        except protocol.ProtocolError as exc:
            await ws.close()
            raise ConnectionFailed(f"the server's answer to hello is not valid: {exc}") from None
        except BaseException:
            await ws.close()
            raise
        if isinstance(reply, protocol.Error):
            await ws.close()
            if reply.code == "bad_token" and self.token is not None:
                # The session is gone (expired, or the server lost it): start a new one.
                self.token = None
                self.on_status("warning", "The server no longer knew this session; "
                               "started a new one (seats of the old one are lost).")
                self.tables.clear()
                await self._open()
                return
            raise ConnectionFailed(f"the server refused hello: {reply.code}: "
                                   f"{protocol.clean_text(reply.message)}")
        if not isinstance(reply, protocol.Welcome):
            await ws.close()
            raise ConnectionFailed("the server did not answer hello with welcome")
        self.token = reply.session
        self._remember()
        self.player_id = reply.player_id
        self.server_name = reply.name
        self._ws = ws
        self._online.set()

    def _next_id(self) -> int:
        """Command ids are unique for the whole session, across reconnects and restarts."""
        cid = next(self._ids)
        if self.sessions is not None and cid >= self._id_limit:
            self._id_limit = cid + ID_BLOCK
            self._remember()
        return cid

    def _remember(self) -> None:
        if self.sessions is not None:
            self.sessions.save(self.url, self.name, self.token, self._id_limit)

    async def take_back_seats(self) -> list[str]:
        """After a restart with a remembered session: resume every table we sit at, each
        from a fresh snapshot (a ``last_seq`` past the table's sequence asks for one)."""
        result = await self.call(protocol.ListTables)
        taken = []
        for entry in result.get("seats", []):
            table = str(entry["table"])
            model = self.model(table)
            model.seat = entry.get("seat")
            try:
                await self.call(protocol.Resume, token=self.token, table=table,
                                last_seq=protocol.MAX_COMMAND_ID, resend=False)
            except ServerError:
                self.forget(table)
                continue
            taken.append(table)
        return taken

    async def _run(self) -> None:
        """Read frames; when the socket drops, reconnect and resume until told to stop."""
        assert self._ws is not None
        reader: asyncio.Task[int | None] | None = asyncio.get_running_loop().create_task(
            self._read(self._ws))
        try:
            while reader is not None and not self._closing:
                reason = await reader
                if self._closing:
                    return
                fatal = FATAL_CLOSES.get(reason) if reason is not None else None
                if fatal is not None:
                    self._give_up(fatal)
                    return
                self.on_status("lost", "Connection to the server lost; reconnecting…")
                reader = await self._reconnect()
        except Exception as exc:   # a client bug must not leave the user silently offline
            log.exception("connection loop failed")
            self._give_up(f"the client's connection failed: {exc}")

    async def _keepalive(self, interval: float = protocol.PING_INTERVAL_S) -> None:
        """docs/PROTOCOL.md: an idle client sends ``ping`` every 20 s (proxies drop silence)."""
        loop = asyncio.get_running_loop()
        while not self._closing:
            await asyncio.sleep(interval)
            if self._online.is_set() and loop.time() - self._last_sent >= interval:
                with contextlib.suppress(Exception):
                    await self.request(protocol.Ping, resend=False)

    def _give_up(self, why: str) -> None:
        self.dead = why
        self._closing = True
        self._fail_pending(ConnectionFailed(why), everything=True)
        self.on_status("fatal", why)

    async def _read(self, ws: ClientConnection) -> int | None:
        """Dispatch every frame of one socket; return its close code when it ends."""
        try:
            async for frame in ws:
                if isinstance(frame, str):
                    continue
                try:
                    msg = protocol.decode_server(frame)
                except protocol.ProtocolError:
                    log.warning("ignoring a server frame that does not decode")
                    continue
                self._dispatch(msg)
        except websockets.ConnectionClosed:
            pass
        except Exception:
            log.exception("reader failed")
        finally:
            if self._ws is ws:
                self._online.clear()
                self._ws = None
            # Replies to resumes on this socket will never come; commands will be resent.
            self._fail_pending(ConnectionFailed("connection lost"), everything=False)
        return ws.close_code

    async def _reconnect(self) -> asyncio.Task[int | None] | None:
        """Reconnect with backoff, resume every table, resend unanswered commands."""
        for attempt in itertools.count():
            if self._closing:
                return None
            await asyncio.sleep(BACKOFF[min(attempt, len(BACKOFF) - 1)])
            try:
                await self._open()
            except ConnectionFailed as exc:
                self._give_up(str(exc))
                return None
            except (OSError, websockets.WebSocketException, TimeoutError):
                continue
            ws = self._ws
            assert ws is not None
            self.on_status("reconnected", "Reconnected to the server"
                           + ("; resuming your tables…" if self.tables else "."))
            reader = asyncio.get_running_loop().create_task(self._read(ws))
            try:
                resumed = await self._resume_all()
            except (ConnectionFailed, TimeoutError):
                reader.cancel()
                continue
            # Commands that got no reply before the drop: same id, same frame.
            for pending in list(self._pending.values()):
                if pending.resend:
                    with contextlib.suppress(websockets.ConnectionClosed):
                        await ws.send(pending.frame)
            self.reconnects += 1
            if resumed:
                self.on_status("resumed", f"Resumed {resumed}.")
            return reader
        return None

    async def _resume_all(self) -> str:
        done = []
        for tid, model in list(self.tables.items()):
            try:
                result = await self.call(protocol.Resume, token=self.token, table=tid,
                                         last_seq=model.seq, resend=False)
            except ServerError as exc:
                self.tables.pop(tid, None)
                self.on_status("warning", f"Could not resume table {protocol.clean_text(tid)}"
                               f": {exc.code}")
                continue
            if result.get("seat") is not None:
                model.seat = result["seat"]
            how = ("from a fresh snapshot" if result.get("snapshot")
                   else f"{result.get('replayed', 0)} missed events replayed")
            done.append(f"table {protocol.clean_text(tid)} ({how})")
        return ", ".join(done)

    # ------------------------------------------------------------------ commands

    async def request(self, cls: type[msgspec.Struct], *, resend: bool = True,
                      **fields: Any) -> Any:
        """Send one command; return its reply (Ok, Error, Pong). Survives reconnects."""
        if self.dead:
            raise ConnectionFailed(self.dead)
        cid = self._next_id()
        frame = protocol.encode(cls(id=cid, **fields))
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[cid] = _Pending(frame, future, resend)
        ws = self._ws
        self._last_sent = asyncio.get_running_loop().time()
        try:
            if ws is not None and self._online.is_set():
                with contextlib.suppress(websockets.ConnectionClosed):
                    await ws.send(frame)
            elif not resend:
                raise ConnectionFailed("not connected")
            return await asyncio.wait_for(future, self.reply_timeout)
        finally:
            self._pending.pop(cid, None)

    async def call(self, cls: type[msgspec.Struct], *, resend: bool = True,
                   **fields: Any) -> dict[str, Any]:
        """Send one command and return its ``ok`` result; raise ServerError on ``error``."""
        reply = await self.request(cls, resend=resend, **fields)
        if isinstance(reply, protocol.Error):
            raise ServerError(reply.code, reply.message, reply.details)
        if isinstance(reply, protocol.Ok):
            result = dict(reply.result)
            self._note_seat(cls, fields, result)
            return result
        return {}

    def _note_seat(self, cls: type[msgspec.Struct], fields: dict[str, Any],
                   result: dict[str, Any]) -> None:
        """Where we sit after create/join (a seat) or spectate (none): the model needs it."""
        if cls in (protocol.CreateTable, protocol.Join) and isinstance(result.get("table"), str):
            seat = result.get("seat")
            if isinstance(seat, int):
                self.model(result["table"]).seat = seat
        elif cls is protocol.Spectate and isinstance(fields.get("table"), str):
            self.model(fields["table"]).seat = None

    def _fail_pending(self, exc: Exception, everything: bool) -> None:
        for cid, pending in list(self._pending.items()):
            if (everything or not pending.resend) and not pending.future.done():
                pending.future.set_exception(exc)
                self._pending.pop(cid, None)

    def _dispatch(self, msg: Any) -> None:
        if isinstance(msg, protocol.Event):
            self._on_event_frame(msg)
            return
        cid = getattr(msg, "id", None)
        pending = self._pending.get(cid) if cid is not None else None
        if (pending is not None and pending.resend and isinstance(msg, protocol.Error)
                and msg.code == "shutting_down"):
            # Not applied; the server is going away: resend it (same id) after the reconnect.
            return
        if pending is not None and not pending.future.done():
            pending.future.set_result(msg)
        elif isinstance(msg, protocol.Error):
            self.on_status("error", f"{msg.code}: {protocol.clean_text(msg.message)}")

    # ------------------------------------------------------------------ tables

    def model(self, table: str) -> TableModel:
        model = self.tables.get(table)
        if model is None:
            model = self.tables[table] = TableModel(table)
        return model

    def forget(self, table: str) -> None:
        self.tables.pop(table, None)

    def _on_event_frame(self, msg: protocol.Event) -> None:
        model = self.model(msg.table)
        event = _dict(msg.event)
        before = model.info
        feed = model.feed(msg.seq, event)
        if feed is Feed.GAP:
            self._spawn(self._fill_gap(model))
            return
        if feed is Feed.APPLIED:
            try:
                self.on_event(model, msg.seq, event, before)
            except Exception:
                log.exception("event display failed")

    async def _fill_gap(self, model: TableModel) -> None:
        """A jump in seq on a live connection: ask the server for what we missed."""
        if model.table in self._resuming or self.token is None:
            return
        self._resuming.add(model.table)
        try:
            await self.call(protocol.Resume, token=self.token, table=model.table,
                            last_seq=model.seq, resend=False)
        except (ServerError, ConnectionFailed, TimeoutError):
            pass
        finally:
            self._resuming.discard(model.table)

    async def resync(self, table: str) -> None:
        """Ask for a fresh snapshot of ``table`` (a resume from beyond the table's seq)."""
        if self.token is None:
            return
        with contextlib.suppress(ServerError, ConnectionFailed, TimeoutError):
            await self.call(protocol.Resume, token=self.token, table=table,
                            last_seq=2**53, resend=False)

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
