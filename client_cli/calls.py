"""The client connection's commands (:class:`client_cli.connection.Connection` is the
whole): each sent with a session-unique id (reserved in blocks in the session file, so ids
stay unique across restarts), its reply awaited by id, resent after a reconnect."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import msgspec

import protocol
from protocol.session import Send

from .link import ConnectionFailed, Link
from .sessions import ID_BLOCK


class ServerError(Exception):
    """An ``error`` reply to a command."""

    def __init__(self, code: str, message: str = "",
                 details: protocol.ErrorDetails | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.details = details or {}



class Calls(Link):
    """Commands and their replies; an idle connection's keepalive."""

    def _remember(self) -> None:
        if self.sessions is not None:
            self.sessions.save(self.url, self.name, self.session.token, self._id_limit)

    async def request(self, cls: type[msgspec.Struct], *, resend: bool | None = None,
                      **fields: Any) -> Any:
        """Send one command; return its reply (Ok, Error, Pong). Survives reconnects:
        a ``resend`` command is sent again, with its id, after the next welcome (by default
        all but ``protocol.session.NOT_RESENT``)."""
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
            reply = await self._reply(cid, future)
        finally:
            self._futures.pop(cid, None)
        if reply is None:
            raise ConnectionFailed("connection lost before the reply")
        return reply

    async def end_session(self, *, everywhere: bool = False) -> int:
        """``logout`` (or ``logout_all``): the session ends, and the next hello, said at
        once on a new socket (:meth:`renew`), is a guest's. Returns how many sessions the
        server ended (``revoked``)."""
        result = await self.call(protocol.LogoutAll if everywhere else protocol.Logout,
                                 resend=False)
        self.session.token = None
        self.session.tables.clear()
        self.tables.clear()
        self.session.name = self.name
        self._remember()
        await self.renew()
        return int(result.get("revoked", 0))

    async def _reply(self, cid: int, future: asyncio.Future[Any]) -> Any:
        """The reply to command ``cid``. No reply within ``reply_timeout``: a command the
        session would resend after a reconnect is sent again now, with the same id, up to
        ``reply_retries`` times (docs/PROTOCOL.md: a repeated id gets the first reply and
        is never applied twice; one still queued behind the table's work is answered when
        its turn comes); then ``TimeoutError``."""
        for attempt in range(self.reply_retries + 1):
            try:
                return await asyncio.wait_for(asyncio.shield(future), self.reply_timeout)
            except TimeoutError:
                if future.done():      # the reply came in the turn the wait timed out
                    return future.result()
                pending = self.session.pending.get(cid)
                if attempt == self.reply_retries or pending is None or not pending.resend:
                    raise
                if self.online:        # offline: the reconnect resends it by itself
                    await self._carry_out([Send(pending.frame)])
        raise AssertionError("unreachable")  # pragma: no cover

    async def call(self, cls: type[msgspec.Struct], *, resend: bool | None = None,
                   **fields: Any) -> dict[str, Any]:
        """Send one command and return its ``ok`` result; raise ServerError on ``error``."""
        reply = await self.request(cls, resend=resend, **fields)
        if isinstance(reply, protocol.Error):
            raise ServerError(reply.code, reply.message, reply.details)
        if isinstance(reply, protocol.Ok):
            result = reply.result if isinstance(reply.result, dict) else {}
            return dict(result)
        return {}

    async def _keepalive(self, interval: float = protocol.PING_INTERVAL_S) -> None:
        """docs/PROTOCOL.md: an idle client sends ``ping`` every 20 s (proxies drop silence)."""
        loop = asyncio.get_running_loop()
        while not self._closing:
            await asyncio.sleep(interval)
            if self.online and loop.time() - self._last_sent >= interval:
                with contextlib.suppress(Exception):
                    await self.request(protocol.Ping, resend=False)
