"""What a table needs from a connection that watches it: a player, and ways to be told things.

Tables never see sockets, and never drive a session object: a connection (:mod:`.wire`) is
handed to a table as a :class:`Viewer`, and the table only says *what* the viewer is to get
(a reply, a table's events numbered from some point, a head that re-bases its sequence, the
frames of a resume). How that becomes frames (numbering checks, holding live events while a
resume's replay is read, encoding) is the viewer's own business, done by its sans-I/O
:class:`~protocol.session.ServerSession`. Nothing here waits: a viewer that does not read is
dropped by its connection, never waited on. A test can implement it without a network.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from protocol import AluetteError, CloseCode, EventPayload
from protocol.results import Result


class Viewer(Protocol):
    @property
    def player(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def bot(self) -> bool:
        """The client said it is a program (``hello {bot: true}``, 1.5)."""

    @property
    def open(self) -> bool: ...

    def reply(self, cid: int, result: Result) -> None:
        """The ``ok`` of this viewer's command ``cid``."""

    def reply_stored(self, cid: int, result: bytes) -> None:
        """The ``ok`` of a command answered before (its result as stored, encoded)."""

    def refuse(self, cid: int | None, exc: AluetteError) -> None:
        """The ``error`` answering this viewer's command ``cid``."""

    def events(self, table: str, first_seq: int, payloads: Sequence[bytes]) -> bool:
        """Live events of ``table`` (encoded), numbered ``first_seq``, ``first_seq + 1``...
        in this viewer's own sequence. False if they would leave a gap (a server bug): the
        table then re-bases the viewer with a head."""

    def rebase(self, table: str, seq: int, payloads: Sequence[EventPayload]) -> None:
        """A head: events that set this viewer's sequence at ``table`` to ``seq`` (the
        ``table_changed`` and ``snapshot`` that open a subscription)."""

    def may_replay(self, events: int) -> bool:
        """Whether a resume may replay ``events`` events to this viewer (its address's and
        the process's budget pay for them now); False: it gets a head instead."""

    def begin_resume(self, table: str) -> None:
        """A resume of ``table`` started: hold its live events until :meth:`end_resume`."""

    def end_resume(self, table: str, cid: int, result: Result,
                   replay: list[tuple[int, bytes]] | None,
                   head: tuple[int, Sequence[EventPayload]] | None, upto: int) -> bool:
        """The resume's ``ok``, then its replay (``[(seq, payload)]`` up to ``upto``) or
        its head, then the live events held meanwhile. False if the held events could not
        all follow in order: the table then sends a fresh head."""

    def forget(self, table: str) -> None:
        """This viewer no longer watches ``table``."""

    def drop(self, code: CloseCode, reason: str) -> None:
        """Close the connection soon, without waiting for the peer."""
