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

import contextlib
from collections.abc import Callable, Iterator, Sequence
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


class _Hold:
    """The writes held now (:func:`writes_held`): how deep the holds are, and the
    connections' writes kept for the outermost one's end."""

    def __init__(self) -> None:
        self.depth = 0
        self.writes: list[Callable[[], None]] = []


_hold = _Hold()


@contextlib.contextmanager
def writes_held() -> Iterator[None]:
    """Frames told to viewers inside go out when the block ends, one write per connection:
    a command's reply and its commit's events reach the player who made it in one system
    call, not two (issue 32). Nothing inside may await: the block is one step of one task,
    so no frame waits for a later turn of the loop. (Waiting for the loop's next turn
    instead, to write a connection's frames of a whole turn at once, cost 7-9% of the plays
    per second at full pace for no CPU saved: BENCHMARKS.md.)"""
    _hold.depth += 1
    try:
        yield
    finally:
        _hold.depth -= 1
        if _hold.depth == 0:
            writes, _hold.writes = _hold.writes, []
            for write in writes:
                write()


def hold_write(write: Callable[[], None]) -> bool:
    """Keep ``write`` for the end of the open hold (True); False: none is open, and the
    caller writes now."""
    if _hold.depth == 0:
        return False
    _hold.writes.append(write)
    return True
