"""Session news between the server processes on one store: a session taken over by a
``hello`` elsewhere, sessions revoked elsewhere.

Why: a connection lives on one process, its session in the store. When a ``hello`` with the
session's token rotates it on process B, the connection that held the session on process
A used to stay open until its first command there (then 4009); and a ``logout_all`` or a
change of password on B closed A's connections only when A next polled the store (every
``revoke_check_s``). Now the process that changes a session says so on one channel, and
every other process closes its own connections of that session at once: 4009 for a
session taken over (of an older rotation than the news), 4002 for a revoked one. The poll
stays, for news missed while a process was resubscribing.

A process alone on its store publishes nothing (nobody to tell).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Literal

import msgspec

from server.store import StorageUnavailable, Store
from server.store.client import unavailable_on_error
from server.store.news import listen

from .sessions import Sessions

log = logging.getLogger(__name__)


class SessionNews(msgspec.Struct, array_like=True):
    """``replaced``: ``sessions[0]`` was rotated to ``generation`` by ``process``;
    ``revoked``: these sessions' tokens are dead."""

    kind: Literal["replaced", "revoked"]
    sessions: list[str]
    generation: int
    process: str


class SessionNewsBus:
    """Tells the other processes of this one's session changes, and acts on theirs."""

    def __init__(self, store: Store, sessions: Sessions, process: str,
                 others_alive: Callable[[], bool]) -> None:
        self.store = store
        self.sessions = sessions
        self.process = process
        self.others_alive = others_alive
        self.channel = f"{store.prefix}:session-news"
        self.heard = 0

    async def replaced(self, session: str, generation: int) -> None:
        await self._tell(SessionNews("replaced", [session], generation, self.process))

    async def revoked(self, sessions: list[str]) -> None:
        if sessions:
            await self._tell(SessionNews("revoked", sessions, 0, self.process))

    async def _tell(self, news: SessionNews) -> None:
        if not self.others_alive():
            return
        try:
            with unavailable_on_error("session news"):
                await self.store.redis.publish(self.channel, msgspec.msgpack.encode(news))
        except StorageUnavailable as exc:
            log.warning("session news not sent (the poll will catch up): %s", exc)

    def act(self, news: SessionNews) -> int:
        """Another process's news: this process's connections it ends (how many)."""
        if news.process == self.process:
            return 0
        self.heard += 1
        if news.kind == "revoked":
            return self.sessions.revoked(news.sessions)
        return self.sessions.replaced(news.sessions[0], news.generation)

    async def listen(self) -> None:
        """The other processes' news, for as long as the process runs."""
        async def heard(data: bytes) -> None:
            try:
                news = msgspec.msgpack.decode(data, type=SessionNews)
            except (msgspec.DecodeError, msgspec.ValidationError):
                log.warning("session news unreadable; ignored")
                return
            self.act(news)
        await listen(self.store.redis, self.channel, heard, "session news")
