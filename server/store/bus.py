"""What a table's commit leaves for others: its logged events, and the message other processes hear.

Every commit appends the events it caused to the table's log (for resumes and catch-ups)
and publishes one :class:`TableCommit` on the table's channel, in the same round trip. The
table that commits, the cluster that hears the channel, and the store that writes and
reads both all use these two types, so the message has one definition (it was an untyped
tuple packed in one file and unpacked in two).

Both are msgpack arrays on the wire (``array_like``): the process id comes first, so a
process can drop its own messages after reading one string (:func:`sender_of`).
"""

from __future__ import annotations

import msgspec

#: ``TableCommit.version`` of the message that says a table was closed (swept).
CLOSED = -1


class Entry(msgspec.Struct, array_like=True, frozen=True):
    """One stored event: its number in the table's log, who may see it (None: everyone at
    the table), and its encoded payload (a protocol event map)."""

    gseq: int
    recipients: tuple[str, ...] | None
    payload: bytes

    def visible_to(self, player: str) -> bool:
        return self.recipients is None or player in self.recipients

    def pack(self) -> bytes:
        """The log's value for this entry (the log keeps ``gseq`` itself)."""
        return _LOGGED.encode(_Logged(self.recipients, self.payload))


class _Logged(msgspec.Struct, array_like=True, frozen=True):
    recipients: tuple[str, ...] | None
    payload: bytes


def unpack_entry(gseq: int, raw: bytes) -> Entry | None:
    """A stored log entry, or None if it is not in this format (an older document)."""
    try:
        logged = _UNLOGGED.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    return Entry(gseq, logged.recipients, logged.payload)


class TableCommit(msgspec.Struct, array_like=True, frozen=True):
    """A commit, as the other processes holding the table hear it: the process that made
    it, the table's new version (:data:`CLOSED` when the table was swept), the events, when
    it was sent (for the cluster's lag figure), and what changed: the whole new document
    (``doc``), or the table's own delta of a light commit (``delta``; issue 32), or
    neither: a *beacon* saying only which version the table is at (a process that was
    alone did not publish its commits; a newcomer that is behind catches up).

    ``reply_to`` and ``reply`` are the command's answer, as the commit remembered it: the
    other processes keep it too, so a resent command finds it wherever it lands."""

    process: str
    version: int
    doc: bytes
    events: list[Entry]
    sent: float
    delta: bytes = b""
    reply_to: str = ""
    reply: bytes = b""

    def encode(self) -> bytes:
        return _COMMIT_ENCODER.encode(self)

    @classmethod
    def decode(cls, raw: bytes) -> TableCommit:
        """Raises ``msgspec.DecodeError``/``ValidationError`` on a message of another shape."""
        return _COMMIT_DECODER.decode(raw)


class _Sender(msgspec.Struct, array_like=True):
    process: str


def sender_of(message: bytes) -> str | None:
    """The process that published a table's message, read without the rest of it: a
    process drops its own commits, which it has delivered already."""
    try:
        return _SENDER.decode(message).process
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


_LOGGED = msgspec.msgpack.Encoder()
_UNLOGGED = msgspec.msgpack.Decoder(_Logged)
_COMMIT_ENCODER = msgspec.msgpack.Encoder()
_COMMIT_DECODER = msgspec.msgpack.Decoder(TableCommit)
# array_like decoding ignores extra trailing elements only with forbid_unknown_fields off
# (the default): the sender is read from the first element alone.
_SENDER = msgspec.msgpack.Decoder(_Sender)
