"""Connections: bytes in, bytes out, and nothing ever waits on a peer that does not read.

websockets writes without limit in two places we do not control: its automatic PONG
replies (a client that sends PINGs and never reads grows our write buffer forever) and
``broadcast()``. And its ``close()`` and keepalive wait on a drain that has no timeout, so a
peer that stops reading can never be closed. :class:`GuardedConnection` bounds all three:
every drain the library waits on times out (then the connection is aborted), a write
buffer past ``max_send_buffer`` aborts the connection, and PINGs are rate-limited.

:class:`Client` is one connection as the rest of the server sees it: a player, a sans-I/O
:class:`~protocol.session.ServerSession` that decides every reply, and ``send``/``drop``
that never block. ``serve_connection`` is its whole life: hello within the timeout, then
one frame at a time through the session and the dispatcher.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from collections.abc import Callable, Coroutine, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.frames import CloseCode as WsCloseCode
from websockets.frames import Frame, Opcode
from websockets.protocol import State

import protocol
from protocol import AluetteError, CloseCode, EventPayload
from protocol.results import Result
from protocol.session import RateLimiter, Send, SequenceGap, ServerSession

from .looplag import ReplayBudget
from .viewer import hold_write

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class WireLimits:
    max_send_buffer: int
    drain_timeout_s: float
    close_timeout_s: float
    max_pings_per_second: float


class ConnectionCount:
    """Every open TCP connection, from the accept (before any handshake or hello), and
    what the wire counts for ``/metrics`` (plain ints, read when scraped)."""

    def __init__(self) -> None:
        self.total = 0
        self.by_address: Counter[str] = Counter()
        #: Connections, sessions and tables refused by a limit or by admission control.
        self.refusals: Counter[str] = Counter()
        self.resumes_replayed = 0
        self.resumes_snapshot = 0
        self.replayed_events = 0


class GuardedConnection(ServerConnection):
    """websockets' server connection with every wait on the peer bounded."""

    limits: WireLimits
    count: ConnectionCount

    def __init__(self, *args: Any, limits: WireLimits, count: ConnectionCount,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.limits = limits
        self.count = count
        self.client_address = ""     # set by the handshake (after X-Forwarded-For)
        #: Set by the handshake when a limit refuses this connection (closed at once).
        self.refusal: tuple[CloseCode, str] | None = None
        #: When the peer last sent anything (keepalive pings only a silent peer).
        self.heard_at = time.monotonic()
        self._pings = RateLimiter(limits.max_pings_per_second,
                                  max(1, int(limits.max_pings_per_second * 4)), 2,
                                  time.monotonic())

    # -- accounting from the TCP accept
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self.count.total += 1

    def connection_lost(self, exc: Exception | None) -> None:
        self.count.total -= 1
        if self.client_address:
            self.count.by_address[self.client_address] -= 1
            if self.count.by_address[self.client_address] <= 0:
                del self.count.by_address[self.client_address]
        super().connection_lost(exc)

    # -- bounded waits
    async def drain(self) -> None:
        """A drain that waits longer than ``drain_timeout_s`` fails, and the library then
        aborts the connection (keepalive pings and close() both drain)."""
        async with asyncio.timeout(self.limits.drain_timeout_s):
            await super().drain()

    def send_data(self) -> None:
        """Everything queued goes out in one write (a viewer's frames of one commit in one
        system call, not one each); an end-of-stream marker keeps the library's meaning."""
        pending: list[bytes] = []
        for data in self.protocol.data_to_send():
            if data:
                pending.append(data)
                continue
            if pending:                      # end of stream: what came before, then EOF
                self.transport.write(b"".join(pending))
                pending = []
            if self.transport.can_write_eof():
                with contextlib.suppress(Exception):
                    self.transport.write_eof()
            else:
                self.transport.close()
        if pending:
            self.transport.write(b"".join(pending))

    def data_received(self, data: bytes) -> None:
        self.heard_at = time.monotonic()
        super().data_received(data)
        self.check_buffer()

    async def keepalive(self) -> None:
        """websockets' keepalive, except that a peer heard from within the interval is not
        pinged: what it sent proves it is there. At human pace every player sends every
        few seconds, and 4,000 connections' pings cost 4% of a process (issue 32). A peer
        silent for a whole interval is pinged, and aborted if no pong comes within the
        timeout, as the library does."""
        interval = self.ping_interval
        assert interval is not None
        try:
            while True:
                await asyncio.sleep(self.heard_at + interval - time.monotonic())
                if time.monotonic() - self.heard_at < interval:
                    continue
                pong = await self.ping()
                if self.ping_timeout is None:
                    continue
                try:
                    async with asyncio.timeout(self.ping_timeout):
                        await pong
                except TimeoutError:
                    async with self.send_context():
                        self.protocol.fail(WsCloseCode.INTERNAL_ERROR, "keepalive ping timeout")
                    raise AssertionError("send_context() waits for connection_lost(), which "
                                         "cancels keepalive()") from None
        except ConnectionClosed:
            pass
        except Exception:
            log.warning("%s: keepalive ping failed", self.client_address, exc_info=True)

    def process_event(self, event: Any) -> None:
        if isinstance(event, Frame) and event.opcode is Opcode.PING:
            self._pings.allow(time.monotonic())
            if self._pings.over_hard_limit:
                log.warning("%s: ping flood; aborting the connection", self.client_address)
                self.transport.abort()
                return
        super().process_event(event)

    def buffered(self) -> int:
        transport = self.transport
        return transport.get_write_buffer_size() if transport is not None else 0

    def check_buffer(self) -> bool:
        """False, and the connection aborted, once unsent bytes pass the bound."""
        if self.buffered() > self.limits.max_send_buffer:
            log.info("%s: %d bytes unsent; aborting", self.client_address, self.buffered())
            self.transport.abort()
            return False
        return True


class Client:
    """One connection as tables and sessions see it (a :class:`~server.viewer.Viewer`)."""

    def __init__(self, ws: GuardedConnection, session: ServerSession,
                 spawn: Callable[[str, Coroutine[Any, Any, Any]], Any],
                 replays: ReplayBudget | None = None) -> None:
        self.ws = ws
        self.replays = replays
        self.session = session
        self.address = ws.client_address
        self.player_id: str | None = None
        self.token: str | None = None
        #: The account this connection's session speaks for (its key), None for a guest.
        self.account: str | None = None
        self.name = ""
        #: The client said it is a program (``hello {bot: true}``): its seats show it.
        self.bot = False
        self.retiring = False
        self.generation = 0
        self.tables: set[str] = set()
        self.dropped = False
        self._spawn = spawn
        self._closing: Any = None
        #: Frames queued while writes are held (:func:`~server.viewer.writes_held`) wait
        #: for one write at the hold's end (issue 32).
        self._flush_due = False

    @property
    def player(self) -> str:
        assert self.player_id is not None
        return self.player_id

    @property
    def open(self) -> bool:
        return not self.dropped and self.ws.protocol.state is State.OPEN

    def send(self, out: Send | None) -> None:
        if out is not None:
            self.send_all((out,))

    def send_all(self, outs: Iterable[Send]) -> None:
        """Write frames now, in order, without waiting, in one write; while writes are
        held (:func:`~server.viewer.writes_held`: a command's reply and its commit's
        events), at the hold's end, all of them in one write (:meth:`_flush`)."""
        if not self.open:
            return
        protocol_ = self.ws.protocol
        queued = False
        for out in outs:
            if protocol_.state is not State.OPEN:
                break
            protocol_.send_binary(out.frame)
            queued = True
        if queued and not self._flush_due:
            if hold_write(self._flush):
                self._flush_due = True
            else:
                self._flush()

    def _flush(self) -> None:
        """Write what was queued; a peer too far behind is closed (4008) and resumes
        later. (A close, keepalive or pong sends what is queued before itself.)"""
        self._flush_due = False
        ws = self.ws
        try:
            ws.send_data()
        except Exception as exc:   # a transport already closing: the reader sees it
            log.debug("write to %s failed: %s", self.address, exc)
            return
        if ws.buffered() > ws.limits.max_send_buffer:
            self.drop(CloseCode.SLOW_READER, "too far behind; reconnect and resume")

    # -- what tables tell a viewer (server/viewer.py); the session makes the frames

    def reply(self, cid: int, result: Result) -> None:
        self.send(self.session.ok(cid, result))

    def reply_stored(self, cid: int, result: bytes) -> None:
        self.send(Send(protocol.encode(protocol.Ok(id=cid, result=msgspec.Raw(result)))))

    def refuse(self, cid: int | None, exc: AluetteError) -> None:
        self.send(self.session.error(cid, exc))

    def events(self, table: str, first_seq: int, payloads: Sequence[bytes]) -> bool:
        frames = []
        try:
            for seq, payload in enumerate(payloads, first_seq):
                out = self.session.event(table, seq, payload)
                if out is not None:
                    frames.append(out)
        except SequenceGap as gap:
            log.error("table %s: sequence gap for %s (%s)", table, self.player_id, gap)
            return False
        self.send_all(frames)
        return True

    def rebase(self, table: str, seq: int, payloads: Sequence[EventPayload]) -> None:
        self.send_all(self.session.rebase(table, seq, payloads))

    def may_replay(self, events: int) -> bool:
        return self.replays is None or self.replays.take(self.address, events)

    def begin_resume(self, table: str) -> None:
        self.session.begin_catchup(table)

    def end_resume(self, table: str, cid: int, result: Result,
                   replay: list[tuple[int, bytes]] | None,
                   head: tuple[int, Sequence[EventPayload]] | None, upto: int) -> bool:
        snapshot = (head[0], list(head[1])) if head is not None else None
        count = self.ws.count
        if replay is None:
            count.resumes_snapshot += 1
        else:
            count.resumes_replayed += 1
            count.replayed_events += len(replay)
        self.send_all(self.session.finish_resume(table, self.session.ok(cid, result), replay,
                                                 snapshot, upto))
        return not self.session.needs_snapshot

    def forget(self, table: str) -> None:
        self.session.forget(table)

    def drop(self, code: CloseCode, reason: str) -> None:
        """Close soon: a close handshake bounded by ``close_timeout_s``, else an abort. A
        peer whose buffer is already full is aborted at once (it could not read the close
        frame anyway)."""
        if self.dropped:
            return
        self.dropped = True
        log.info("closing %s (%s): %s %s", self.player_id, self.address, int(code), reason)
        if not self.ws.check_buffer():
            return
        self._closing = self._spawn(f"close {self.address}", self._close(code, reason))

    async def _close(self, code: CloseCode, reason: str) -> None:
        try:
            async with asyncio.timeout(self.ws.limits.close_timeout_s):
                await self.ws.close(int(code), reason)
        except (TimeoutError, ConnectionClosed, OSError):
            pass
        finally:
            if self.ws.transport is not None and not self.ws.transport.is_closing():
                self.ws.transport.abort()

    async def finish(self) -> None:
        """The handler is returning: let a close this side started end first (else the
        library would close with 1000 and the peer never learn why)."""
        if self._closing is not None:
            with contextlib.suppress(BaseException):
                await asyncio.shield(self._closing)
