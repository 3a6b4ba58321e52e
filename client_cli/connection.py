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
from typing import Any

import websockets
from websockets.asyncio.client import ClientConnection

import protocol
from protocol.session import ClientSession

from .calls import ServerError
from .link import BACKOFF, HELLO_TIMEOUT_S, ConnectionFailed, EventCallback, StatusCallback
from .model import TableModel
from .sessions import SessionFile
from .tables import Tables

__all__ = ["BACKOFF", "HELLO_TIMEOUT_S", "Connection", "ConnectionFailed", "EventCallback",
           "ServerError", "StatusCallback"]


class Connection(Tables):
    """One server, one session, across reconnects: the socket (``link.py``), commands by id
    (``calls.py``) and the tables we follow (``tables.py``), put together here."""

    def __init__(self, url: str, name: str, *,
                 on_event: EventCallback | None = None,
                 on_status: StatusCallback | None = None,
                 reply_timeout: float = 30.0,
                 reply_retries: int = 0,
                 sessions: SessionFile | None = None,
                 bot: bool = False) -> None:
        self.url = url
        self.name = protocol.clean_text(name)[: protocol.MAX_NAME_LEN] or "player"
        self.on_event = on_event or (lambda *a: None)
        self.on_status = on_status or (lambda kind, text: None)
        self.reply_timeout = reply_timeout
        #: Times an unanswered command is sent again (same id) after ``reply_timeout``
        #: before the call gives up with TimeoutError (client_cli.calls).
        self.reply_retries = reply_retries
        self.tables: dict[str, TableModel] = {}
        # With a session file, the session (token and command ids) survives a restart.
        self.sessions = sessions
        token, first_id = (None, 1) if sessions is None else sessions.load(url, self.name)
        self.session = ClientSession(self.name, token=token, first_id=first_id, bot=bot)
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
        self._renewal: asyncio.Event | None = None
        self.home: str | None = None
        self._unreachable: set[str] = set()
        self._moved_at = 0.0

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
