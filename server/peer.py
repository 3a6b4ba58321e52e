"""A websocket connection as tables and the lobby see it: a player and a bounded outbox.

Fan-out uses websockets' ``broadcast()``: it writes without waiting, so one slow reader can
never stall a table. The price is an unbounded write buffer, so every send first checks the
buffer and drops a reader that has fallen too far behind (close 4008). The client then
reconnects and resumes from its last sequence number, which makes it whole again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable

from websockets.asyncio.server import ServerConnection, broadcast
from websockets.protocol import State

from protocol import CloseCode

log = logging.getLogger(__name__)


class Peer:
    """One connection; ``player`` is set once its hello has been accepted."""

    def __init__(self, ws: ServerConnection, max_send_buffer: int) -> None:
        self.ws = ws
        self.max_send_buffer = max_send_buffer
        self.player: str | None = None
        self.name: str = ""
        self.token: str | None = None
        #: Digest of the token this connection's hello presented, until it is retired.
        self.retiring: str | None = None
        self.tables: set[str] = set()
        self.dropped = False
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def open(self) -> bool:
        return not self.dropped and self.ws.state is State.OPEN

    def writable(self) -> bool:
        """False (and the peer is being dropped) once its unsent bytes pass the bound."""
        if not self.open:
            return False
        transport = self.ws.transport
        if transport is not None and transport.get_write_buffer_size() > self.max_send_buffer:
            self.close(CloseCode.SLOW_READER, "too far behind; reconnect and resume")
            return False
        return True

    def close(self, code: int, reason: str) -> None:
        """Close without waiting (the caller may be fanning out to many peers)."""
        if self.dropped:
            return
        self.dropped = True
        log.info("closing connection of %s: %s %s", self.player, code, reason)
        task = asyncio.get_running_loop().create_task(self.ws.close(code, reason))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def send_to(peers: Iterable[Peer], frame: bytes) -> None:
    """Send one frame to many peers without waiting for any of them."""
    broadcast([p.ws for p in peers if p.writable()], frame)
