"""The commits' line: one connection on which the tables' commits are pipelined (issue 32).

A table's commit is one Lua script call, and a process at full pace makes one per play.
Through redis-py each call took a connection from the pool (a lock, a condition, a
timeout), a retry wrapper, and a task wake-up per reply: at full pace the commit's store
call was a quarter of the process's CPU, of which the network itself was a third
(``py-spy``, 2026-12-04).

:class:`Line` sends every commit on one connection as soon as it is made, without waiting
for the replies before it (Redis answers in order, so the n-th reply is the n-th call's),
writes the calls of one turn of the event loop in one system call, and parses the replies
with hiredis (the parser redis-py itself uses) as they arrive, handing each to its caller's
future: no pool, no task between the socket and the caller.

The connection is one of the client's pool's, taken for good: it is made like every other
(AUTH, TLS, the store's identity check), and the client's ``aclose`` (the storage's
lifecycle, or ``rebind`` after the embedded store restarted) closes it with the rest. A
call that gets no answer within the connection's socket timeout closes the line, and every
call waiting on it fails as a connection error: the store calls that use it are safe to
send again (``StoreBase._proven``; the commit's nonce), and the next call opens it again.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Iterator
from typing import Any

import hiredis
import redis.asyncio as aioredis
from redis._parsers.base import BaseParser
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

log = logging.getLogger(__name__)


def replies_in(parser: hiredis.Reader, data: bytes) -> Iterator[Any]:
    """Each whole reply ``data`` completes, in order (what is left waits in ``parser``);
    raises ``hiredis.ProtocolError`` on bytes that are not RESP. The channels'
    connection reads its bytes this way too."""
    parser.feed(data)
    while (reply := parser.gets()) is not False:
        yield reply


class _Replies(asyncio.Protocol):
    """The taken-over connection: what is written, in order, and whose reply comes next."""

    def __init__(self, connection: Any, transport: asyncio.Transport,
                 stream: asyncio.BaseProtocol) -> None:
        #: The pool's connection this line took (given back once the line is lost).
        self.connection = connection
        self.timeout: float | None = connection.socket_timeout
        self.transport = transport
        #: The connection's own protocol (redis-py's stream), told when the connection is
        #: lost, so that the pool's disconnect, which waits for that, returns.
        self.stream = stream
        self.parser = hiredis.Reader()
        #: The calls waiting for their replies, in order, each with when it was sent.
        self.waiting: deque[tuple[asyncio.Future[Any], float]] = deque()
        self.out: list[bytes] = []
        self.closed = False
        self.loop = asyncio.get_running_loop()
        #: One timer for the whole line, not one per call (each ``asyncio.timeout`` made
        #: and cancelled a timer: 2.7% of a process at full pace, issue 32).
        self._watch: asyncio.TimerHandle | None = None

    def send(self, command: bytes) -> asyncio.Future[Any]:
        """Queue ``command``: written at the end of this turn of the loop, with the others
        queued in it; its reply comes in the future returned, or a ``TimeoutError`` if none
        comes within the timeout (the line is closed then)."""
        loop = self.loop
        reply: asyncio.Future[Any] = loop.create_future()
        if not self.out:
            loop.call_soon(self.flush)
        self.out.append(command)
        self.waiting.append((reply, loop.time()))
        if self._watch is None and self.timeout is not None:
            self._watch = loop.call_later(self.timeout, self._check)
        return reply

    def _check(self) -> None:
        """The oldest call waiting got no reply within the timeout: close the line. Else
        look again when the oldest one's time is up."""
        self._watch = None
        if self.closed or not self.waiting or self.timeout is None:
            return
        due = self.waiting[0][1] + self.timeout
        if self.loop.time() >= due:
            self.lose(RedisTimeoutError(f"no answer on the commits' line within "
                                        f"{self.timeout} s"))
        else:
            self._watch = self.loop.call_at(due, self._check)

    def flush(self) -> None:
        out, self.out = self.out, []
        if out and not self.closed:
            self.transport.write(b"".join(out))

    def data_received(self, data: bytes) -> None:
        try:
            for reply in replies_in(self.parser, data):
                if not self.waiting:
                    self.lose(RedisConnectionError("a reply nobody asked for on the "
                                                   "commits' line"))
                    return
                waiter, _ = self.waiting.popleft()
                if not waiter.done():          # its caller may have given up (cancelled)
                    waiter.set_result(reply)
        except hiredis.ProtocolError as exc:
            self.lose(RedisConnectionError(f"unreadable reply on the commits' line: {exc}"))

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._fail(RedisConnectionError(f"commits' line lost: {exc or 'closed'}"))
        self.stream.connection_lost(exc)

    def lose(self, exc: Exception) -> None:
        """Close the line: every call waiting on it fails with ``exc``."""
        self.closed = True
        self._fail(exc)
        self.transport.close()

    def _fail(self, exc: Exception) -> None:
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None
        while self.waiting:
            waiter, _ = self.waiting.popleft()
            if not waiter.done():
                waiter.set_exception(exc)
                waiter.exception()          # retrieved: a caller that left never logs it


class Line:
    """Pipelined calls on one connection of ``redis``'s pool (see the module's docstring).
    Opened by the first call; ``redis``'s ``aclose`` closes it."""

    def __init__(self, redis: aioredis.Redis) -> None:
        self.redis = redis
        self._replies: _Replies | None = None
        self._opening = asyncio.Lock()

    async def call(self, *args: bytes | str | int | float) -> Any:
        """One command, pipelined behind those sent before it; its reply. Raises redis-py's
        ``ConnectionError``/``TimeoutError`` when it got no answer, the error redis-py would
        raise (``NoScriptError``, ``ResponseError``...) when the store answered one."""
        replies = await self._open()
        # (hiredis's stub declares a tuple of one item; any number is packed)
        reply = await replies.send(hiredis.pack_command(args))  # type: ignore[arg-type]
        if isinstance(reply, hiredis.ReplyError):
            # redis-py's own reading of an error reply: LOADING is a connection error (no
            # answer yet: sent again once the store answers a PING), NOSCRIPT, READONLY
            # and OOM each their own, anything else a ResponseError.
            raise BaseParser.parse_error(str(reply))  # type: ignore[no-untyped-call, unused-ignore]
        return reply

    async def _open(self) -> _Replies:
        replies = self._replies
        if replies is not None and not replies.closed:
            return replies
        async with self._opening:
            replies = self._replies
            if replies is None or replies.closed:
                self._replies = None
                if replies is not None:      # lost: its connection goes back, closed
                    await self._give_back(replies.connection)
                replies = self._replies = await self._take()
            return replies

    async def _take(self) -> _Replies:
        pool: Any = self.redis.connection_pool
        connection: Any = await pool.get_connection()
        try:
            await connection.connect()
            transport = connection._writer.transport
            # redis-py's streams are done with: nothing waits in them after the
            # connection's handshake, and from now on the bytes come here.
            replies = _Replies(connection, transport, transport.get_protocol())
            transport.set_protocol(replies)
        except BaseException:
            await self._give_back(connection)
            raise
        return replies

    async def _give_back(self, connection: Any) -> None:
        try:
            await connection.disconnect()
        except Exception as exc:  # closing a lost connection: nothing left to lose
            log.debug("closing the commits' line: %s", exc)
        await self.redis.connection_pool.release(connection)
