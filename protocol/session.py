"""One connection's session as two sans-I/O state machines: the server's and the client's.

Everything docs/PROTOCOL.md says about a session (hello first, one welcome, command ids
echoed in replies, the rate limit, malformed frames, per-table sequence numbers, resume and
replay, token rotation, resending unanswered commands) is written here once, in the style of
python-websockets' protocol objects and h11's ``Connection``: frames and the time go in,
frames and decisions come out, and nothing here does I/O or knows asyncio. The server's
shell, the terminal client, the network bot and the tests all drive these objects, so the
rules cannot drift apart between the two ends.

Both sides return lists of small typed *outputs*; the caller carries them out in order:

- :class:`Send` a frame;
- :class:`Close` the connection with a code;
- server only: :class:`HelloReceived` and :class:`CommandReceived` (for the shell to act on);
- client only: :class:`Welcomed`, :class:`Replied`, :class:`TableEvent`, :class:`TableLost`,
  :class:`SessionLost`, :class:`Fatal`.
"""

from __future__ import annotations

import collections
import enum
import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from . import limits
from .codec import decode_client, decode_server, encode, error_reply, unsupported_version
from .errors import AluetteError, CloseCode, ErrorCode, ProtocolError
from .events import ChatHistory, EventPayload, Snapshot, TableChanged, UnknownEvent
from .messages import (
    Command,
    CreateTable,
    Error,
    Event,
    Hello,
    Home,
    Join,
    Leave,
    Matched,
    Ok,
    Ping,
    Pong,
    Resume,
    Spectate,
    Welcome,
)
from .results import Result
from .versions import SUPPORTED_VERSIONS, negotiate

# --------------------------------------------------------------------------- outputs


@dataclass(frozen=True, slots=True)
class Send:
    """Write this frame to the peer."""

    frame: bytes


@dataclass(frozen=True, slots=True)
class Close:
    """Close the connection with this code (after sending what came before)."""

    code: CloseCode
    reason: str


@dataclass(frozen=True, slots=True)
class HelloReceived:
    """Server: a valid ``hello``; answer with :meth:`ServerSession.accept_hello` or
    :meth:`ServerSession.refuse_hello`. ``version`` is the negotiated one."""

    hello: Hello
    version: int


@dataclass(frozen=True, slots=True)
class CommandReceived:
    """Server: a valid command to carry out; answer with ``ok``/``error``."""

    command: Command


ServerOutput = Send | Close | HelloReceived | CommandReceived


class ServerState(enum.Enum):
    AWAITING_HELLO = "awaiting_hello"
    GREETING = "greeting"  # hello received, welcome not sent yet
    OPEN = "open"
    CLOSED = "closed"


class SequenceGap(Exception):
    """Server bug guard: an event would leave a hole in a viewer's sequence.

    The shell answers it by sending the viewer a fresh snapshot (a re-base), so a bug costs a
    redraw, never a silently inconsistent client.
    """


class RateLimiter:
    """Token bucket per connection that refuses rather than waits (docs/PROTOCOL.md,
    "Limits"): over the rate a frame is answered ``rate_limited``; refused frames keep
    counting, and far over the limit (``hard_multiplier``) the connection is closed.

    Waiting limiters (aiolimiter and the like) would hold a flooding client's frames in
    memory, which is what an attacker wants, so this small bucket is written here.
    """

    def __init__(
        self,
        per_second: float = limits.RATE_PER_SECOND,
        burst: int = limits.RATE_BURST,
        hard_multiplier: int = limits.RATE_HARD_MULTIPLIER,
        now: float = 0.0,
    ) -> None:
        self.per_second = per_second
        self.burst = burst
        self.tokens = float(burst)
        self.refused = 0.0
        self.hard = burst * (hard_multiplier - 1)
        self.stamp = now

    def allow(self, now: float) -> bool:
        elapsed = max(0.0, now - self.stamp)
        self.stamp = now
        self.tokens = min(self.burst, self.tokens + elapsed * self.per_second)
        self.refused = max(0.0, self.refused - elapsed * self.per_second)
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        self.refused += 1
        return False

    @property
    def over_hard_limit(self) -> bool:
        return self.refused > self.hard


@dataclass(slots=True)
class _Catchup:
    """Live events held back while a resume's replay is read (bounded)."""

    held: list[tuple[int, bytes]] = field(default_factory=list)
    overflow: bool = False


class ServerSession:
    """The server's side of one connection.

    Feed it every frame with :meth:`receive`; it answers what the protocol answers by
    itself (malformed frames, hello first, ping, the rate limit) and hands the shell only
    valid hellos and commands. The shell's replies and the table events go back through it
    too (:meth:`ok`, :meth:`error`, :meth:`event`, :meth:`rebase`), so every frame a viewer
    gets is numbered gap-free and in order, and a command's ``ok`` is always written before
    the events it caused (the shell calls :meth:`ok` before it fans out).
    """

    #: Live events held for one table while its resume replay is read from storage; past
    #: it the viewer gets a snapshot instead (a slow store must not cost unbounded memory).
    MAX_HELD = 512

    def __init__(
        self,
        *,
        now: float = 0.0,
        rate_per_second: float = limits.RATE_PER_SECOND,
        rate_burst: int = limits.RATE_BURST,
        hard_multiplier: int = limits.RATE_HARD_MULTIPLIER,
        max_bad_frames: int = limits.MAX_BAD_FRAMES,
        bad_frame_window: float = limits.BAD_FRAME_WINDOW_S,
    ) -> None:
        self.state = ServerState.AWAITING_HELLO
        self.version: int | None = None
        self.limiter = RateLimiter(rate_per_second, rate_burst, hard_multiplier, now)
        self._bad: collections.deque[float] = collections.deque(maxlen=max_bad_frames)
        self._bad_window = bad_frame_window
        #: Last sequence number sent to this connection, per table it watches.
        self.sent_seq: dict[str, int] = {}
        self._catchup: dict[str, _Catchup] = {}
        self._needs_snapshot = False

    # ------------------------------------------------------------------ frames in

    def receive(self, frame: bytes | str, now: float) -> list[ServerOutput]:
        """One frame from the client; every frame counts towards the rate limit."""
        if self.state is ServerState.CLOSED:
            return []
        try:
            cmd: Command | None = decode_client(frame)  # type: ignore[arg-type]
            problem: ProtocolError | None = None
        except ProtocolError as exc:
            cmd, problem = None, exc
        cid = cmd.id if cmd is not None else (problem.id if problem is not None else None)
        if not self.limiter.allow(now):
            out: list[ServerOutput] = [self._error_frame(
                ErrorCode.RATE_LIMITED, "too many commands; slow down and resend", cid)]
            if self.limiter.over_hard_limit:
                out.append(self._close(CloseCode.RATE_LIMITED, "too many commands"))
            return out
        if problem is not None:
            return self._malformed(problem, now)
        assert cmd is not None
        if self.state is ServerState.AWAITING_HELLO:
            if not isinstance(cmd, Hello):
                return [self._error_frame(ErrorCode.HELLO_REQUIRED, "say hello first", cmd.id),
                        self._close(CloseCode.PROTOCOL_ERROR, "expected hello")]
            version = negotiate(cmd.versions)
            if version is None:
                return [Send(encode(unsupported_version(cmd.id))),
                        self._close(CloseCode.UNSUPPORTED_VERSION, "unsupported version")]
            self.state = ServerState.GREETING
            return [HelloReceived(cmd, version)]
        if self.state is ServerState.GREETING:
            # The shell reads one frame at a time and answers hello before the next one.
            return [self._error_frame(ErrorCode.HELLO_REQUIRED, "wait for welcome", cmd.id)]
        if isinstance(cmd, Hello):
            return [self._error_frame(ErrorCode.INVALID_FIELD, "hello was already said",
                                      cmd.id)]
        if isinstance(cmd, Ping):
            return [Send(encode(Pong(id=cmd.id)))]
        return [CommandReceived(cmd)]

    def _malformed(self, problem: ProtocolError, now: float) -> list[ServerOutput]:
        """Answer a frame that is not a valid command; count it if it is not a message.

        Only frames that cannot be matched to a command count towards the limit (text,
        oversize, not msgpack, not a map, no string ``type``, no valid ``id``): they say the
        peer does not speak the protocol at all. A well-formed message refused for a field
        or an unknown type is answered under its id, like a rule refusal, and never closes
        the connection: a client of a newer minor version probing an older server gets
        ``unknown_type`` for its new commands, and floods of them are the rate limit's job.
        """
        out: list[ServerOutput] = [Send(encode(error_reply(problem)))]
        if self.state is ServerState.AWAITING_HELLO:
            out.append(self._close(CloseCode.PROTOCOL_ERROR, "expected hello"))
            return out
        if problem.well_formed:
            return out
        self._bad.append(now)
        if len(self._bad) == self._bad.maxlen and now - self._bad[0] <= self._bad_window:
            out.append(self._close(CloseCode.PROTOCOL_ERROR, "too many malformed frames"))
        return out

    def _close(self, code: CloseCode, reason: str) -> Close:
        self.state = ServerState.CLOSED
        return Close(code, reason)

    def _error_frame(self, code: ErrorCode, message: str, cid: int | None) -> Send:
        return Send(encode(Error(id=cid, code=code.value,
                                 message=message[: limits.MAX_MESSAGE_LEN])))

    # ------------------------------------------------------------------ hello

    def accept_hello(self, hello: Hello, *, session: str, player_id: str, name: str) -> Send:
        """The welcome; the session is open from now on."""
        assert self.state is ServerState.GREETING and self.version is None
        version = negotiate(hello.versions)
        assert version is not None
        self.version = version
        self.state = ServerState.OPEN
        return Send(encode(Welcome(id=hello.id, version=version, session=session,
                                   player_id=player_id, name=name)))

    def refuse_hello(self, hello: Hello, exc: AluetteError) -> list[ServerOutput]:
        """The error, then the close code docs/PROTOCOL.md gives for it."""
        codes = {
            ErrorCode.BAD_TOKEN: CloseCode.BAD_TOKEN,
            ErrorCode.RATE_LIMITED: CloseCode.TRY_AGAIN_LATER,
            ErrorCode.STORAGE_UNAVAILABLE: CloseCode.TRY_AGAIN_LATER,
            ErrorCode.SERVER_BUSY: CloseCode.TRY_AGAIN_LATER,
            ErrorCode.SHUTTING_DOWN: CloseCode.GOING_AWAY,
        }
        close = codes.get(exc.code, CloseCode.PROTOCOL_ERROR)
        return [self.error(hello.id, exc), self._close(close, exc.code.value)]

    def close(self, code: CloseCode, reason: str) -> Close:
        """The server closes for its own reasons (shutdown, replaced session, slow reader)."""
        return self._close(code, reason)

    # ------------------------------------------------------------------ replies

    def ok(self, cid: int, result: Result) -> Send:
        return Send(encode(Ok(id=cid, result=result)))

    def error(self, cid: int | None, exc: AluetteError) -> Send:
        return Send(encode(Error(id=cid, code=exc.code.value,
                                 message=exc.message[: limits.MAX_MESSAGE_LEN],
                                 details=exc.details)))

    # ------------------------------------------------------------------ events

    def event(self, table: str, seq: int, payload: bytes) -> Send | None:
        """A live event with this viewer's ``seq``; ``payload`` is an encoded event map.

        Returns None for an event this viewer already has (it came in a replay). Raises
        :class:`SequenceGap` if it would leave a hole (a server bug: re-base the viewer).
        While the table is catching up (:meth:`begin_catchup`) the event is held instead.
        """
        catchup = self._catchup.get(table)
        if catchup is not None:
            if len(catchup.held) >= self.MAX_HELD:
                catchup.overflow = True
            else:
                catchup.held.append((seq, payload))
            return None
        last = self.sent_seq.get(table)
        if last is None:
            raise SequenceGap(f"{table}: an event before the subscription's snapshot")
        if seq <= last:
            return None
        if seq != last + 1:
            raise SequenceGap(f"{table}: seq {seq} after {last}")
        self.sent_seq[table] = seq
        return Send(_event_frame(table, seq, payload))

    def rebase(self, table: str, seq: int, payloads: Iterable[EventPayload]) -> list[Send]:
        """Frames that set this viewer's sequence to ``seq``: the ``table_changed`` and
        ``snapshot`` that open a subscription or answer a resume without replay."""
        self.sent_seq[table] = seq
        return [Send(encode(Event(table=table, seq=seq, event=p))) for p in payloads]

    def forget(self, table: str) -> None:
        """The connection no longer watches ``table``."""
        self.sent_seq.pop(table, None)
        self._catchup.pop(table, None)

    def watching(self, table: str) -> bool:
        return table in self.sent_seq or table in self._catchup

    # ------------------------------------------------------------------ resume

    def begin_catchup(self, table: str) -> None:
        """A resume started: hold live events of ``table`` until :meth:`finish_resume`."""
        self._catchup[table] = _Catchup()

    def finish_resume(
        self,
        table: str,
        ok: Send,
        replay: list[tuple[int, bytes]] | None,
        snapshot: tuple[int, list[EventPayload]] | None,
        upto: int | None = None,
    ) -> list[Send]:
        """The resume's frames in the documented order: its ``ok``, then the replay (or
        the snapshot), then the live events held meanwhile, without duplicates.

        ``replay`` is ``[(seq, payload)]`` in order, ending at ``upto`` (the viewer's
        number when the replay was read; an empty replay means the viewer had everything);
        ``snapshot`` is ``(seq, [table_changed, snapshot])``. If the held events
        overflowed, or a held event does not continue the sequence, the caller must send a
        snapshot: this returns what it could and leaves :meth:`needs_snapshot` True.
        """
        catchup = self._catchup.pop(table, None) or _Catchup()
        out = [ok]
        if snapshot is not None:
            out += self.rebase(table, snapshot[0], snapshot[1])
        elif replay is not None:
            end = upto if upto is not None else (replay[-1][0] if replay else None)
            if end is not None:
                self.sent_seq[table] = end - len(replay)
            for seq, payload in replay:
                if seq == self.sent_seq.get(table, seq - 1) + 1:
                    self.sent_seq[table] = seq
                    out.append(Send(_event_frame(table, seq, payload)))
        self._needs_snapshot = catchup.overflow or table not in self.sent_seq
        for seq, payload in catchup.held:
            try:
                frame = self.event(table, seq, payload)
            except SequenceGap:
                self._needs_snapshot = True
                break
            if frame is not None:
                out.append(frame)
        return out

    @property
    def needs_snapshot(self) -> bool:
        """After :meth:`finish_resume`: the held live events could not all be delivered."""
        return self._needs_snapshot


def _event_frame(table: str, seq: int, payload: bytes) -> bytes:
    return encode(Event(table=table, seq=seq, event=msgspec.Raw(payload)))  # type: ignore[arg-type]


def encode_event_payload(payload: EventPayload) -> bytes:
    """An event payload's bytes, encoded once and wrapped per viewer by :meth:`event`."""
    return encode(payload)


# =========================================================================== client


@dataclass(frozen=True, slots=True)
class Welcomed:
    """The session is open (first connection or reconnection)."""

    welcome: Welcome
    reconnected: bool


@dataclass(frozen=True, slots=True)
class Replied:
    """The reply to command ``id``: ``Ok``, ``Error`` or ``Pong``; ``None`` when the
    connection dropped and the command is not one to resend (it failed)."""

    id: int
    command: str
    reply: Ok | Error | Pong | None


@dataclass(frozen=True, slots=True)
class TableEvent:
    """An event of ``table``, in order, never twice. ``event`` is None for a placeholder
    (older servers) or an event type this client does not know (``unknown`` keeps it)."""

    table: str
    seq: int
    event: EventPayload | None
    unknown: UnknownEvent | None = None


@dataclass(frozen=True, slots=True)
class TableLost:
    """The server said we are no longer at ``table`` (a refused resume)."""

    table: str
    code: str


@dataclass(frozen=True, slots=True)
class SessionLost:
    """The server no longer knew our token: a new session starts, old seats are gone."""


@dataclass(frozen=True, slots=True)
class Fatal:
    """Reconnecting would not help (unsupported version, protocol error, replaced)."""

    reason: str


@dataclass(frozen=True, slots=True)
class Seated:
    """The matchmaker seated us (``matched``, 1.5): the table's head follows."""

    matched: Matched


@dataclass(frozen=True, slots=True)
class GoHome:
    """``table`` is run by the server process at ``url`` (``home``, 1.6): the transport may
    reconnect there (hello, then resume, as after a drop) so one process serves it."""

    table: str
    url: str


ClientOutput = (Send | Close | Welcomed | Replied | TableEvent | TableLost | SessionLost | Fatal
                | Seated | GoHome)

#: Close codes after which a client must not reconnect by itself (docs/PROTOCOL.md).
FATAL_CLOSES: dict[int, str] = {
    CloseCode.PROTOCOL_ERROR: "the server closed the connection: protocol error",
    CloseCode.UNSUPPORTED_VERSION: "the server does not speak this client's protocol version",
    CloseCode.SESSION_REPLACED: "this session was opened from somewhere else",
    CloseCode.MESSAGE_TOO_BIG: "the server refused a message that was too large",
}


#: Refusals of a hello that mean "later", not "never" (docs/PROTOCOL.md: close 1013 or
#: 1001 follows). A returning session reconnects; a new one is told why at once.
HELLO_LATER: frozenset[str] = frozenset({
    ErrorCode.RATE_LIMITED, ErrorCode.STORAGE_UNAVAILABLE, ErrorCode.SHUTTING_DOWN,
    ErrorCode.SERVER_BUSY})


#: Commands not sent again after a drop unless the caller says so: read-only, or redone by
#: the session itself (every welcome resumes each table). Their callers hear at the drop
#: that no reply will come (``Replied`` with ``None``) and ask again if they still care.
NOT_RESENT: frozenset[str] = frozenset({
    "ping", "resume", "list_tables",
    # 1.5: they carry passwords (never kept to be resent) or start or end sessions.
    "register", "login", "change_password", "logout", "logout_all"})


class ClientState(enum.Enum):
    DISCONNECTED = "disconnected"
    HELLO_SENT = "hello_sent"
    OPEN = "open"
    CLOSED = "closed"  # fatal: do not reconnect


@dataclass(slots=True)
class Pending:
    """A command waiting for its reply; ``resend`` ones survive a reconnect (same id)."""

    id: int
    type: str
    frame: bytes
    resend: bool
    table: str | None = None


@dataclass(slots=True)
class TableStream:
    """One table this client sits at or watches: its sequence and our seat in it."""

    table: str
    seq: int = 0
    seat: int | None = None
    resuming: bool = False
    #: A subscription's first frames are due (after the ok of create_table, join,
    #: spectate, or of a resume answered by a snapshot): they may re-base the sequence.
    expect_head: bool = False


class ClientSession:
    """The client's side of a session, across any number of connections.

    It owns what must survive a dropped connection: the newest token (it rotates at every
    welcome), the command counter (ids are unique for the session's whole life), the
    commands still unanswered, and each table's last sequence number. :meth:`connect` opens
    a connection's session; after the welcome it resumes every table and resends every
    unanswered command with its original id, by itself.
    """

    def __init__(
        self,
        name: str,
        *,
        token: str | None = None,
        first_id: int = 1,
        versions: tuple[int, ...] = SUPPORTED_VERSIONS,
        bot: bool = False,
    ) -> None:
        self.name = name
        self.token = token
        self.versions = versions
        #: This client is a program and says so in every hello (1.5): its seats show it.
        self.bot = bot
        self.state = ClientState.DISCONNECTED
        self.player_id: str | None = None
        self.version: int | None = None
        self.tables: dict[str, TableStream] = {}
        self.pending: dict[int, Pending] = {}
        self._ids = itertools.count(first_id)
        self.next_id = first_id
        self._hello_id: int | None = None
        self._welcomed_before = False

    # ------------------------------------------------------------------ connection

    def connect(self) -> list[ClientOutput]:
        """A transport is up: say hello (with the token, to keep the session)."""
        cid = self._new_id()
        self._hello_id = cid
        self.state = ClientState.HELLO_SENT
        hello = Hello(id=cid, versions=list(self.versions), name=self.name, token=self.token,
                      bot=self.bot)
        return [Send(encode(hello))]

    def connection_lost(self, close_code: int | None = None) -> list[ClientOutput]:
        """The transport dropped. Commands not worth resending fail now; with a fatal
        close code the session stops for good."""
        out: list[ClientOutput] = []
        for cid, pending in list(self.pending.items()):
            if not pending.resend:
                del self.pending[cid]
                out.append(Replied(cid, pending.type, None))
        for stream in self.tables.values():
            stream.resuming = False
        fatal = FATAL_CLOSES.get(close_code) if close_code is not None else None
        if fatal is not None:
            self.state = ClientState.CLOSED
            out.append(Fatal(fatal))
        elif self.state is not ClientState.CLOSED:
            self.state = ClientState.DISCONNECTED
        return out

    # ------------------------------------------------------------------ commands

    def _new_id(self) -> int:
        cid = next(self._ids)
        self.next_id = cid + 1
        return cid

    def command(self, cls: type[Command], *, resend: bool | None = None,
                **fields: Any) -> tuple[int, list[ClientOutput]]:
        """Build command ``cls``; returns its id and what to do now (send it, if open).

        ``resend`` commands that get no reply before a drop are sent again, with the same
        id, after the next welcome (the server answers a repeated id with its first reply
        and never applies it twice); by default every command but those of
        :data:`NOT_RESENT`.
        """
        cid = self._new_id()
        frame = encode(cls(id=cid, **fields))
        tag = cls.__struct_config__.tag
        assert isinstance(tag, str)
        if resend is None:
            resend = tag not in NOT_RESENT
        table = fields.get("table")
        self.pending[cid] = Pending(cid, tag, frame, resend, table if isinstance(table, str)
                                    else None)
        if self.state is ClientState.OPEN:
            return cid, [Send(frame)]
        if not resend:
            del self.pending[cid]
            return cid, [Replied(cid, tag, None)]
        return cid, []

    def resume(self, table: str, last_seq: int | None = None) -> list[ClientOutput]:
        """Ask for what we missed at ``table`` (or, with a ``last_seq`` past the table's
        sequence, for a fresh snapshot). At most one resume per table is in flight."""
        stream = self.tables.setdefault(table, TableStream(table))
        if stream.resuming or self.token is None or self.state is not ClientState.OPEN:
            return []
        stream.resuming = True
        _, out = self.command(Resume, resend=False, token=self.token, table=table,
                              last_seq=stream.seq if last_seq is None else last_seq)
        return out

    def forget(self, table: str) -> None:
        self.tables.pop(table, None)

    # ------------------------------------------------------------------ frames in

    def receive(self, frame: bytes) -> list[ClientOutput]:
        """One frame from the server."""
        try:
            msg = decode_server(frame)
        except ProtocolError:
            return []  # a server frame we cannot read: skip it (newer server, or a bug)
        if isinstance(msg, Event):
            return self._event(msg)
        if isinstance(msg, Matched):
            # The matchmaker seated us (1.5): as after a join's ok, the table's head follows.
            stream = self.tables.setdefault(msg.table, TableStream(msg.table))
            stream.seat = msg.seat
            stream.expect_head = True
            return [Seated(msg)]
        if isinstance(msg, Home):
            # 1.6: a hint about a table we are at; about any other, nothing to do.
            return [GoHome(msg.table, msg.url)] if msg.table in self.tables else []
        if self.state is ClientState.HELLO_SENT and msg.id == self._hello_id:
            return self._hello_reply(msg)
        if not isinstance(msg, Ok | Error | Pong):
            return []  # a welcome out of place answers no command
        pending = self.pending.get(msg.id) if msg.id is not None else None
        if pending is None:
            return []
        if isinstance(msg, Error) and msg.code == ErrorCode.SHUTTING_DOWN and pending.resend:
            return []  # not applied; the server is going away: resend after reconnecting
        del self.pending[pending.id]
        out: list[ClientOutput] = []
        self._track(pending, msg, out)
        out.append(Replied(pending.id, pending.type, msg))
        return out

    def _hello_reply(self, msg: Any) -> list[ClientOutput]:
        if isinstance(msg, Welcome):
            self.token = msg.session
            self.player_id = msg.player_id
            self.version = msg.version
            self.name = msg.name
            self.state = ClientState.OPEN
            out: list[ClientOutput] = [Welcomed(msg, self._welcomed_before)]
            self._welcomed_before = True
            for table in list(self.tables):
                self.tables[table].resuming = False
                out += self.resume(table)
            for pending in list(self.pending.values()):
                if pending.resend:
                    out.append(Send(pending.frame))
            return out
        if isinstance(msg, Error) and msg.code == ErrorCode.BAD_TOKEN and self.token:
            # The server no longer knows this session: start a new one; its seats are gone.
            self.token = None
            self.tables.clear()
            self.pending = {k: p for k, p in self.pending.items() if p.table is None}
            return [SessionLost(), *self.connect()]
        if isinstance(msg, Error) and msg.code in HELLO_LATER and self.token:
            # A returning session refused for now; the server closes (1013 or 1001) and
            # the transport reconnects with backoff: the session, its tables and its
            # unanswered moves are kept for the next hello.
            self.state = ClientState.DISCONNECTED
            return []
        code = msg.code if isinstance(msg, Error) else "unexpected reply"
        self.state = ClientState.CLOSED
        message = msg.message if isinstance(msg, Error) else ""
        return [Fatal(f"the server refused hello: {code}: {message}")]

    def _track(self, pending: Pending, msg: Ok | Error | Pong, out: list[ClientOutput]) -> None:
        """What a reply tells us about the tables we follow."""
        if isinstance(msg, Ok):
            result = msg.result if isinstance(msg.result, dict) else {}
            table = result.get("table", pending.table)
            if not isinstance(table, str):
                return
            if pending.type in (CreateTable.__struct_config__.tag, Join.__struct_config__.tag):
                stream = self.tables.setdefault(table, TableStream(table))
                seat = result.get("seat")
                stream.seat = seat if isinstance(seat, int) else stream.seat
                stream.expect_head = True
            elif pending.type == Spectate.__struct_config__.tag:
                stream = self.tables.setdefault(table, TableStream(table))
                stream.seat = None
                stream.expect_head = True
            elif pending.type == Leave.__struct_config__.tag:
                self.tables.pop(table, None)
            elif pending.type == Resume.__struct_config__.tag:
                stream = self.tables.setdefault(table, TableStream(table))
                stream.resuming = False
                seat = result.get("seat")
                stream.seat = seat if isinstance(seat, int) else None
                stream.expect_head = bool(result.get("snapshot"))
        elif isinstance(msg, Error) and pending.type == Resume.__struct_config__.tag:
            # Not applied, try again (storage down, or this process stopping: the resume
            # goes to another after the reconnect); any other refusal loses the table.
            if pending.table is not None and msg.code not in (ErrorCode.STORAGE_UNAVAILABLE,
                                                              ErrorCode.SHUTTING_DOWN):
                self.tables.pop(pending.table, None)
                out.append(TableLost(pending.table, msg.code))
            elif pending.table in self.tables:
                self.tables[pending.table].resuming = False

    def _event(self, msg: Event) -> list[ClientOutput]:
        payload = msg.event
        stream = self.tables.get(msg.table)
        if stream is None:
            if not isinstance(payload, Snapshot | TableChanged):
                return []  # not a table we follow (any more)
            stream = self.tables[msg.table] = TableStream(msg.table)
        unknown = payload if isinstance(payload, UnknownEvent) else None
        known = None if unknown is not None else payload
        if isinstance(payload, Snapshot):
            stream.seq = msg.seq          # snapshots re-base, backwards or forwards
            stream.seat = payload.view.viewer
            stream.expect_head = False
            return [TableEvent(msg.table, msg.seq, known)]
        if isinstance(payload, TableChanged) and (stream.expect_head or msg.seq == stream.seq):
            # A subscription's head (a snapshot follows if a match is running) re-bases;
            # lobby state is idempotent, so the same seq again is applied as well.
            stream.seq = msg.seq
            if payload.table.status in ("waiting", "finished", "abandoned"):
                stream.expect_head = False  # no match view: the head is this frame alone
            return [TableEvent(msg.table, msg.seq, known)]
        if isinstance(payload, ChatHistory) and msg.seq == stream.seq:
            # The head's last frame (1.4), stamped with its seq: it replaces the chat log,
            # so applying it again is harmless.
            return [TableEvent(msg.table, msg.seq, known)]
        if msg.seq <= stream.seq:
            return []  # a duplicate, around a resume
        if msg.seq != stream.seq + 1:
            return self.resume(msg.table)  # a gap: ask for what we missed
        stream.seq = msg.seq
        return [TableEvent(msg.table, msg.seq, known, unknown)]


__all__ = [
    "FATAL_CLOSES",
    "NOT_RESENT",
    "ClientOutput",
    "ClientSession",
    "ClientState",
    "Close",
    "CommandReceived",
    "Fatal",
    "HelloReceived",
    "Pending",
    "RateLimiter",
    "Replied",
    "Seated",
    "Send",
    "SequenceGap",
    "ServerOutput",
    "ServerSession",
    "ServerState",
    "SessionLost",
    "TableEvent",
    "TableLost",
    "TableStream",
    "Welcomed",
    "encode_event_payload",
]
