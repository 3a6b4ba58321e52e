"""Client commands and server messages: every top-level frame, as tagged unions on ``type``.

Every command carries a client-chosen ``id`` (an int in 0..2**53) that the server's reply
(``ok``, ``error``, ``welcome`` or ``pong``) repeats, so a client can match replies and,
after a reconnect, resend a command it got no reply for: the server answers a repeated id
with the original reply and never applies the command twice.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from msgspec import Meta

from . import limits
from .cards import Card
from .events import EventPayload, UnknownEvent
from .fields import (
    AcesCount,
    BotLevel,
    CommandId,
    Contribution,
    ErrorDetails,
    JoinCode,
    MatchNumber,
    Name,
    Seat,
    SenderId,
    Seq,
    SignalId,
    TableId,
    Token,
    Version,
    check_signal_n,
)
from .players import Cursor, TableFilter
from .text import clean_text, mostly_marks
from .views import TableOptions

# --------------------------------------------------------------------------- commands


class Command(msgspec.Struct, tag_field="type"):
    """Base of every client command: ``type`` tag, then ``id`` (echoed in the reply)."""

    id: CommandId


def _clean_name(value: str, path: str) -> str:
    """Clean a user-supplied name; an all-control name is as bad as an empty one, and a
    name made mostly of combining marks ("Zalgo") would draw over the lobby's and the
    table's other lines wherever it is shown, as chat text would (issue 30)."""
    cleaned = clean_text(value)
    if not cleaned:
        raise ValueError(f"name is empty after removing control characters - at `$.{path}`")
    if mostly_marks(cleaned):
        raise ValueError(f"name is mostly combining marks - at `$.{path}`")
    return cleaned


class Hello(Command, tag="hello", kw_only=True):
    """First message of every connection: offered versions, display name, optional token.

    ``token`` is the session token of an earlier ``welcome``: with it the server restores
    that session (same player id, same seats) instead of creating a new one.
    ``name`` arrives already cleaned (:func:`protocol.clean_text`). ``bot`` (added in 1.5)
    says the client is a program: the seats it takes are shown as bots to everyone
    (``SeatInfo.bot``, the record's ``bots``), so nobody mistakes it for a person.
    """

    versions: Annotated[list[Version], Meta(min_length=1, max_length=limits.MAX_VERSIONS)]
    name: Name
    token: Token | None = None
    bot: bool = False

    def __post_init__(self) -> None:
        self.name = _clean_name(self.name, "name")


class Resume(Command, tag="resume", kw_only=True):
    """Re-subscribe to a table after a reconnect; the server replays events after
    ``last_seq`` (or sends a snapshot if they are no longer kept)."""

    token: Token
    table: TableId
    last_seq: Seq


class Ping(Command, tag="ping", kw_only=True):
    """Application keepalive; answered by ``pong`` with the same id."""


class ListTables(Command, tag="list_tables", kw_only=True):
    """Ask for the lobby, one page at a time (live tables first, finished ones last).

    ``ok`` result :class:`~protocol.results.TablesPage`. ``cursor`` is the ``next`` of the
    previous page (nil: the first page); ``limit`` caps the page (added in 1.2).
    """

    cursor: Annotated[str, Meta(max_length=limits.MAX_TABLE_ID_LEN * 2)] | None = None
    limit: Annotated[int, Meta(ge=1, le=limits.MAX_PAGE_TABLES)] | None = None
    #: Only the tables that match (added in 1.5): free seats, rated or casual, options.
    filter: TableFilter | None = None


class CreateTable(Command, tag="create_table", kw_only=True):
    """Create a table; the creator is seated (seat 0) and may add bots and start it."""

    options: TableOptions = msgspec.field(default_factory=TableOptions)
    private: bool = False
    name: Name | None = None

    def __post_init__(self) -> None:
        if self.name is not None:
            self.name = _clean_name(self.name, "name")


class Join(Command, tag="join", kw_only=True):
    """Take a seat (``seat`` None: any free seat); ``code`` is needed for private tables.

    ``contribution`` (R8a, added in 1.3) goes into the seed of the table's next match; a
    player already seated may send ``join`` again to give (or change) it.
    """

    table: TableId
    seat: Seat | None = None
    code: JoinCode | None = None
    contribution: Contribution | None = None


class Leave(Command, tag="leave", kw_only=True):
    """Leave a seat or stop spectating (a bot takes the seat if a match is running)."""

    table: TableId


class AddBot(Command, tag="add_bot", kw_only=True):
    """Creator only: seat a bot of ``level`` in an empty seat."""

    table: TableId
    seat: Seat
    level: BotLevel = "normal"


class RemoveBot(Command, tag="remove_bot", kw_only=True):
    """Creator only: remove a bot before the match starts."""

    table: TableId
    seat: Seat


class Spectate(Command, tag="spectate", kw_only=True):
    """Watch a table (R16: spectators never receive hands or signals)."""

    table: TableId
    code: JoinCode | None = None


class Start(Command, tag="start", kw_only=True):
    """Creator only: start the match; empty seats are filled with bots of the table's
    ``bot_level``. ``contribution`` (R8a, added in 1.3): the starter's, for this match."""

    table: TableId
    contribution: Contribution | None = None


class Rematch(Command, tag="rematch", kw_only=True):
    """A seated player asks for (or accepts) another match at this finished table, with the
    same seats and options (added in 1.3); ``contribution`` goes into its seed (R8a)."""

    table: TableId
    contribution: Contribution | None = None


class Chat(Command, tag="chat", kw_only=True):
    """Say something to the table (added in 1.3). A seated player's message goes to
    everyone at the table, a spectator's to the spectators only. ``text`` arrives cleaned
    (:func:`protocol.clean_text`) and holds 1 to ``MAX_CHAT_LEN`` code points."""

    table: TableId
    text: Annotated[str, Meta(min_length=1, max_length=limits.MAX_CHAT_RAW_LEN)]

    def __post_init__(self) -> None:
        cleaned = clean_text(self.text)
        if not cleaned:
            raise ValueError("text is empty after removing control characters - at `$.text`")
        if len(cleaned) > limits.MAX_CHAT_LEN:
            raise ValueError(f"text is longer than {limits.MAX_CHAT_LEN} characters after "
                             "cleaning - at `$.text`")
        self.text = cleaned


class Mute(Command, tag="mute", kw_only=True):
    """Stop (``muted`` true) or start again (false) receiving the chat of ``sender`` at
    this table (the ``sender`` of its ``chat`` events); added in 1.3."""

    table: TableId
    sender: SenderId
    muted: bool = True


class LetBotPlay(Command, tag="let_bot_play", kw_only=True):
    """A seated player's vote to let a bot play ``seat`` now, while its disconnected player
    is still in their grace period (added in 1.5): once every connected seated player has
    voted, a bot plays the seat until its player comes back, so nobody waits ``grace_s``."""

    table: TableId
    seat: Seat


class Play(Command, tag="play", kw_only=True):
    """R10: play ``card`` from your hand to the current trick."""

    table: TableId
    card: Card


class ChanterVote(Command, tag="chanter_vote", kw_only=True):
    """R9: say whether you want to chanter."""

    table: TableId
    vote: bool


class Discard(Command, tag="discard", kw_only=True):
    """R9: after the talon, discard exactly six distinct cards of your hand."""

    table: TableId
    cards: Annotated[list[Card], Meta(min_length=6, max_length=6)]


class Signal(Command, tag="signal", kw_only=True):
    """R15: send a signal to your partner; ``n`` (1..4) only and always for ``aces``."""

    table: TableId
    signal: SignalId
    n: AcesCount | None = None

    def __post_init__(self) -> None:
        check_signal_n(self.signal, self.n)


class GetRecord(Command, tag="get_record", kw_only=True):
    """Ask for the R17 record of a finished match of the table: ``ok`` result
    ``{"table", "record", "match"}``; ``match`` (added in 1.3) picks one by number, nil
    asks for the latest finished one. ``code`` (added in 1.5): a private table's join code
    opens its records to someone who never sat there (a shared replay link)."""

    table: TableId
    match: MatchNumber | None = None
    code: JoinCode | None = None


class RequestReview(Command, tag="review", kw_only=True):
    """Ask for the expert's review of seat ``seat`` in a finished match of the table (added
    in 1.5): ``match`` picks it by number, nil asks for the latest finished one; only for a
    match whose record you may read. ``ok`` result :class:`~protocol.results.ReviewResult`:
    queued, running (with progress) or done (with the review); send it again to poll.
    ``code``: as ``get_record``'s, for a private table's match."""

    table: TableId
    seat: Seat
    match: MatchNumber | None = None
    code: JoinCode | None = None


class RequestHint(Command, tag="hint", kw_only=True):
    """At a table with ``options.hints``, on your turn: what would the expert do? (added in
    1.5). ``ok`` result :class:`~protocol.results.HintResult`."""

    table: TableId


class History(Command, tag="history", kw_only=True):
    """One page of finished matches, the most recent first (added in 1.5): a registered
    player's (``name``), or your own (nil). ``ok`` result
    :class:`~protocol.players.HistoryResult`; only public tables, or tables you sat at."""

    name: Name | None = None
    cursor: Cursor | None = None
    limit: Annotated[int, Meta(ge=1, le=50)] | None = None

    def __post_init__(self) -> None:
        if self.name is not None:
            self.name = _clean_name(self.name, "name")


class Profile(Command, tag="profile", kw_only=True):
    """A registered player's profile (added in 1.5): ``ok`` result
    :class:`~protocol.players.ProfileResult`."""

    name: Name
#: A password as typed (1.5). Never logged, echoed or stored: only its Argon2id hash is.
Password = Annotated[str, Meta(min_length=1, max_length=limits.MAX_PASSWORD_LEN)]
NewPassword = Annotated[str, Meta(min_length=limits.MIN_PASSWORD_LEN,
                                  max_length=limits.MAX_PASSWORD_LEN)]


class _Secret(Command, kw_only=True):
    """A command that carries a password: its ``repr`` (logs, tracebacks) never shows it."""

    def __repr__(self) -> str:
        shown = ", ".join(f"{f}={getattr(self, f)!r}" for f in self.__struct_fields__
                          if "password" not in f)
        return f"{type(self).__name__}({shown}, password=<hidden>)"


class Register(_Secret, tag="register", kw_only=True):
    """Make this session's player an account (added in 1.5): ``name`` for good, with a
    password; the session, its player id and its seats stay. ``ok`` result
    :class:`~protocol.results.AccountResult`."""

    name: Name
    password: NewPassword

    def __post_init__(self) -> None:
        self.name = _clean_name(self.name, "name")


class Queue(Command, tag="queue", kw_only=True):
    """Play now (added in 1.5): wait in the matchmaking queue for a rated or casual game
    with these options; a ``matched`` message says where you were seated. Sent again, it
    replaces your request."""

    rated: bool = False
    options: TableOptions = msgspec.field(default_factory=TableOptions)


class Unqueue(Command, tag="unqueue", kw_only=True):
    """Leave the matchmaking queue (added in 1.5)."""
class Login(_Secret, tag="login", kw_only=True):
    """Speak for an account on this connection (added in 1.5): ``ok`` result
    :class:`~protocol.results.LoginResult`, with a new session token for this device."""

    name: Name
    password: Password

    def __post_init__(self) -> None:
        self.name = _clean_name(self.name, "name")


class ChangePassword(_Secret, tag="change_password", kw_only=True):
    """Change the account's password (added in 1.5); the account's other sessions end."""

    old_password: Password
    new_password: NewPassword


class Logout(Command, tag="logout", kw_only=True):
    """End this session (added in 1.5): its token dies, the connection closes (4002)."""


class LogoutAll(Command, tag="logout_all", kw_only=True):
    """End every session of the account, this one included (added in 1.5)."""


ClientCommand = (
    Hello
    | Resume
    | Ping
    | ListTables
    | CreateTable
    | Join
    | Leave
    | AddBot
    | RemoveBot
    | Spectate
    | Start
    | Play
    | ChanterVote
    | Discard
    | Signal
    | GetRecord
    | RequestReview
    | RequestHint
    | Rematch
    | Chat
    | Mute
    | LetBotPlay
    | History
    | Profile
    | Queue
    | Unqueue
    | Register
    | Login
    | ChangePassword
    | Logout
    | LogoutAll
)

# --------------------------------------------------------------------------- server


class ServerBase(msgspec.Struct, tag_field="type", kw_only=True):
    """Base of every server message."""


class Welcome(ServerBase, tag="welcome", kw_only=True):
    """Reply to ``hello``: the chosen version and the session token to resume with."""

    id: CommandId | None
    version: Version
    session: Token
    player_id: Annotated[str, Meta(min_length=1, max_length=limits.MAX_TOKEN_LEN)]
    name: Name


class Ok(ServerBase, tag="ok", kw_only=True):
    """Success reply to command ``id``; ``result`` is a map whose shape depends on the
    command (:mod:`protocol.results`; docs/PROTOCOL.md). Decoded, it is a plain dict."""

    id: CommandId
    result: Any = msgspec.field(default_factory=dict)


class Error(ServerBase, tag="error", kw_only=True):
    """Failure reply; ``id`` is None when the frame's id could not be read.

    ``code`` is typed ``str`` (not :class:`ErrorCode`) on purpose: new codes are a minor
    change, and an older client must still decode them.
    """

    id: CommandId | None = None
    code: str
    message: Annotated[str, Meta(max_length=limits.MAX_MESSAGE_LEN)] = ""
    details: ErrorDetails | None = None


class Pong(ServerBase, tag="pong", kw_only=True):
    """Reply to ``ping``."""

    id: CommandId


class Event(ServerBase, tag="event", kw_only=True):
    """One table event with its per-table, per-viewer gap-free sequence number.

    ``event`` None (or absent) is a placeholder: something happened that this viewer may
    not see (another seat's hand, a signal to someone else); its ``seq`` still counts.
    """

    table: TableId
    seq: Seq
    event: EventPayload | None = None


class Matched(ServerBase, tag="matched", kw_only=True):
    """The matchmaker seated you (added in 1.5): at ``table``, in ``seat``; the table's
    head follows as for a ``join``. Sent to your connections when it happens; a player
    matched while away finds the seat in ``list_tables``'s ``seats``."""

    table: TableId
    seat: Seat
    rated: bool = False


class Home(ServerBase, tag="home", kw_only=True):
    """``table`` is run by another server process, reachable at ``url`` (added in 1.6).

    With several processes on one store, a table's commands are applied by the process
    that runs it and delivered by every process that holds one of its viewers: a viewer on
    another process costs that process a copy of the table. A client may reconnect to
    ``url`` (its ``hello`` with its token, then ``resume``, as after any drop) to cost one
    process instead of two; one that ignores it plays on as before. Sent after the head of
    a ``join``, ``spectate``, ``resume`` or ``matched`` when the connection watches that
    table only and the server was told its processes' addresses (README
    ``--advertise-url``)."""

    table: TableId
    url: Annotated[str, Meta(min_length=1, max_length=limits.MAX_URL_LEN)]


ServerMessage = Welcome | Ok | Error | Pong | Event | Matched | Home

# Lenient envelope used only when decoding an event of a type this client does not know.


class _LenientEvent(msgspec.Struct, tag_field="type", tag="event", kw_only=True):
    table: TableId
    seq: Seq
    event: dict[str, Any] | None = None


def _unknown_event(raw: _LenientEvent) -> Event:
    data = dict(raw.event or {})
    return Event(
        table=raw.table,
        seq=raw.seq,
        event=UnknownEvent(type=str(data.pop("type", "")), data=data),  # type: ignore[arg-type]
    )


CLIENT_TYPES: dict[str, type[Command]] = {
    cls.__struct_config__.tag: cls
    for cls in ClientCommand.__args__
}
SERVER_TYPES: dict[str, type[ServerBase]] = {
    cls.__struct_config__.tag: cls
    for cls in ServerMessage.__args__
}
