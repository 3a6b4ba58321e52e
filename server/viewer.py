"""What a table needs from a connection that watches it: a player, a session, a way to send.

Tables never see sockets. A connection (:mod:`.wire`) is handed to a table as a
:class:`Viewer`: the player it speaks for, its sans-I/O :class:`~protocol.session.ServerSession`
(which numbers and orders every frame), and non-blocking ``send``/``drop``. A test can
implement it without a network.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from protocol import CloseCode
from protocol.session import Send, ServerSession


class Viewer(Protocol):
    @property
    def player(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def bot(self) -> bool:
        """The client said it is a program (``hello {bot: true}``, 1.5)."""

    @property
    def session(self) -> ServerSession: ...

    @property
    def open(self) -> bool: ...

    def send(self, out: Send | None) -> None:
        """Queue one frame without waiting (a peer that does not read is dropped, never
        waited on)."""

    def send_all(self, outs: Iterable[Send]) -> None: ...

    def drop(self, code: CloseCode, reason: str) -> None:
        """Close the connection soon, without waiting for the peer."""
