"""The client connection's socket (:class:`client_cli.connection.Connection` is the whole):
open it and say hello, feed every frame to the protocol's ``ClientSession``, and when it
drops, reconnect with backoff until the session says reconnecting would not help."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import websockets
from websockets.asyncio.client import ClientConnection, connect

import protocol
from protocol.session import ClientOutput, ClientSession, ClientState

from .model import TableModel
from .sessions import SessionFile

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
#: The link moves to its table's home (``home``, protocol 1.6) at most this often: a
#: deployment whose addresses lead back and forth costs a reconnect per this, no more.
HOME_EVERY_S = 30.0


class ConnectionFailed(Exception):
    """The connection cannot be (re)established: bad URL, refused, or a fatal close."""



class Link:
    """The socket's life. The state is the connection's (set in ``Connection.__init__``);
    what the session says is carried out by :meth:`_carry_out` (``client_cli.tables``)."""

    url: str
    name: str
    on_event: EventCallback
    on_status: StatusCallback
    reply_timeout: float
    reply_retries: int
    tables: dict[str, TableModel]
    #: With a session file, the session (token and command ids) survives a restart.
    sessions: SessionFile | None
    session: ClientSession
    restored: bool
    _id_limit: int
    _futures: dict[int, asyncio.Future[Any]]
    _ws: ClientConnection | None
    _welcomed: asyncio.Event
    _runner: asyncio.Task[None] | None
    _closing: bool
    _tasks: set[asyncio.Task[Any]]
    _resuming: dict[int, str]       # resume ids sent after a reconnect -> table
    _replaying: dict[str, int]      # table -> replayed events still to come
    _resumed: list[str] | None
    dead: str | None                # why the connection gave up for good
    reconnects: int
    _last_sent: float
    #: Set once the socket :meth:`renew` asked for is welcomed (None: no renewal going on).
    _renewal: asyncio.Event | None
    #: The address the server named as our table's home (``home``, 1.6): the link
    #: connects there instead of ``url`` until it cannot.
    home: str | None
    #: Homes that could not be reached: never tried again.
    _unreachable: set[str]
    #: Loop time of the last move home.
    _moved_at: float

    async def _carry_out(self, outputs: Iterable[ClientOutput]) -> None:
        raise NotImplementedError   # client_cli.tables.Tables

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

    async def _open(self) -> asyncio.Task[int | None]:
        """A socket, a hello, and the welcome (the session then resumes our tables and
        resends what got no answer by itself). Returns the socket's reader task."""
        ws = await connect(self.home or self.url, compression=None, open_timeout=5,
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

    async def renew(self) -> None:
        """Leave this socket and say hello on a new one now; return once it is welcomed
        (or, if the server cannot be reached, once a hello has had its time: the link goes
        on reconnecting as after any drop).

        After a logout the server closes the socket (4002) a moment after its ``ok``: a
        command sent in that moment (the next ``login``, which carries a password and is
        never resent) would go out on it and get no answer. If the server's close came
        first, the link is reconnecting already: this waits for that welcome."""
        if self.dead or self._closing:
            return
        renewed = self._renewal = asyncio.Event()
        try:
            if (ws := self._ws) is not None:
                with contextlib.suppress(Exception):
                    await ws.close()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(HELLO_TIMEOUT_S):
                    await renewed.wait()
        finally:
            self._renewal = None

    def go_home(self, url: str) -> bool:
        """The server says our table is run by the process at ``url`` (issue 32): leave
        this socket and say hello there, as :meth:`renew` does (the session then resumes
        the table there). Not to a URL that is not a websocket's, that could not be
        reached before, where we are already, from ``wss://`` to plain ``ws://`` (the token
        would travel in clear), or more often than every ``HOME_EVERY_S``. True if the
        move was begun."""
        now = asyncio.get_running_loop().time()
        downgrade = self.url.startswith("wss://") and not url.startswith("wss://")
        if (self.dead or self._closing or url in self._unreachable or downgrade
                or url == (self.home or self.url) or not url.startswith(("ws://", "wss://"))
                or (self._moved_at and now - self._moved_at < HOME_EVERY_S)):
            return False
        self._moved_at = now
        self.home = url
        self._spawn(self.renew())
        return True

    async def _run(self, reader: asyncio.Task[int | None]) -> None:
        """Wait for the socket to drop; then reconnect (with backoff) until told to stop."""
        try:
            while not self._closing:
                await reader
                if self._closing or self.dead:
                    return
                if self._renewal is None:
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
            if attempt or self._renewal is None:    # a renewal's first hello goes at once
                await asyncio.sleep(BACKOFF[min(attempt, len(BACKOFF) - 1)])
            try:
                reader = await self._open()
            except ConnectionFailed as exc:
                self._give_up(str(exc))
                return None
            except (OSError, websockets.WebSocketException, TimeoutError):
                if self.home is not None:      # back through the address we were given
                    self._unreachable.add(self.home)
                    self.home = None
                continue
            self.reconnects += 1
            return reader
        return None

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

    def _fail_all(self, exc: Exception) -> None:
        for cid, future in list(self._futures.items()):
            if not future.done():
                future.set_exception(exc)
            self._futures.pop(cid, None)

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
