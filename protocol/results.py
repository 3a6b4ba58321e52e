"""The ``result`` map of each command's ``ok`` reply, as typed structs.

The server builds these (never loose dicts) and :data:`RESULT_TYPES` says which command
answers with which, so the conformance tests check every ``ok`` against its type and
docs/PROTOCOL.md's command table cannot drift from the code. On the wire a result is a
plain map; a client may decode it with :func:`decode_result` or read it as a dict.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from . import limits
from .fields import Count, JoinCode, MatchNumber, Name, Seat, Seq, TableId, TableStatus
from .players import (
    MAX_HISTORY_PAGE,
    MAX_PROFILE_PARTNERS,
    MAX_PROFILE_RECENT,
    Cursor,
    HistoryEntry,
    LadderStep,
    Partner,
    Rating,
)
from .views import TableInfo


class Result(msgspec.Struct, kw_only=True):
    """Base of every ``ok`` result."""


class TableResult(Result):
    """``start``, ``play``, ``chanter_vote``, ``discard``, ``signal``, ``rematch``, ``chat``,
    ``mute``: the table acted on."""

    table: TableId


class SeatResult(Result):
    """``join``, ``add_bot``, ``remove_bot``: the seat taken, filled or emptied."""

    table: TableId
    seat: Seat


class CreateResult(Result):
    """``create_table``: the new table, the creator's seat (0) and a private table's code."""

    table: TableId
    seat: Seat
    code: JoinCode | None = None


class LeaveResult(Result):
    """``leave``: the seat given up, or nil when you were watching."""

    table: TableId
    seat: Seat | None = None


class SpectateResult(Result):
    """``spectate``: ``seq`` is your sequence number at the table (your snapshot's)."""

    table: TableId
    seq: Seq


class ResumeResult(Result):
    """``resume``: your seat (nil when watching), the sequence number the replay or the
    snapshot brings you to, whether it is a snapshot, and how many events are replayed."""

    table: TableId
    seat: Seat | None
    seq: Seq
    snapshot: bool
    replayed: Count


class SeatRef(msgspec.Struct, kw_only=True):
    """A seat of yours: what to resume after a restart, and the table's status (a finished
    match needs no resuming; added in 1.2)."""

    table: TableId
    seat: Seat
    status: TableStatus | None = None


class WatchRef(msgspec.Struct, kw_only=True):
    """A table you watch without a seat: what to resume as a spectator after a restart,
    and its status (added in 1.5)."""

    table: TableId
    status: TableStatus | None = None


class TablesPage(Result):
    """``list_tables``: one page of the lobby, your seats, the tables you watch (added in
    1.5; the latest ``MAX_WATCHING``, most recent first), and the cursor of the next page
    (nil on the last one)."""

    tables: Annotated[list[TableInfo], Meta(max_length=limits.MAX_PAGE_TABLES)]
    seats: list[SeatRef]
    next: str | None = None
    watching: Annotated[list[WatchRef], Meta(max_length=limits.MAX_WATCHING)] = \
        msgspec.field(default_factory=list)


class RecordResult(Result):
    """``get_record``: the R17 match record of a finished match, and its number at the
    table (added in 1.3; nil for a record stored before)."""

    table: TableId
    record: dict[str, Any]
    match: MatchNumber | None = None


ReviewStatus = Literal["queued", "running", "done", "failed"]


class ReviewResult(Result):
    """``review`` (added in 1.5): where the expert's review of ``seat`` in match ``match``
    stands. ``queued`` (``ahead``: reviews before it), ``running`` (``done`` of ``total``
    decisions evaluated), ``done`` (``review``: the JSON object ``aluette-record review``
    prints) or ``failed`` (``error`` says why; asking again tries again)."""

    table: TableId
    match: MatchNumber
    seat: Seat
    status: ReviewStatus
    done: Annotated[int, Meta(ge=0)] = 0
    total: Annotated[int, Meta(ge=0)] = 0
    ahead: Annotated[int, Meta(ge=0)] = 0
    review: dict[str, Any] | None = None
    error: str | None = None


class HintChoice(Result):
    """One legal choice and the points the expert expects of it for your team this deal
    (your team's points minus the other's); nil when not valued."""

    choice: str
    value: float | None = None


class HintResult(Result):
    """``hint`` (added in 1.5): what the expert would do now, judged from your view alone:
    ``preferred`` (a card code, ``yes``/``no`` at the chanter vote, or six codes separated
    by spaces at the discard) and the choices it weighed."""

    table: TableId
    phase: Annotated[str, Meta(max_length=32)]
    preferred: Annotated[str, Meta(max_length=64)]
    choices: Annotated[list[HintChoice], Meta(max_length=16)] = msgspec.field(
        default_factory=list)


class HistoryResult(Result):
    """``history``: one page of matches, the most recent first; ``next`` is the cursor of
    the following page (nil: the last)."""

    matches: Annotated[list[HistoryEntry], Meta(max_length=MAX_HISTORY_PAGE)]
    next: Cursor | None = None


class ProfileResult(Result):
    """``profile``: a registered player's rating (nil before their first rated match),
    their matches played and won, favourite partners, and recent matches (only public
    tables, or tables the viewer sat at); ``ladder`` places the bot levels on the scale."""

    name: Name
    rating: Rating | None
    played: Count
    won: Count
    rated_played: Count
    partners: Annotated[list[Partner], Meta(max_length=MAX_PROFILE_PARTNERS)]
    recent: Annotated[list[HistoryEntry], Meta(max_length=MAX_PROFILE_RECENT)]
    ladder: list[LadderStep]


class QueueResult(Result):
    """``queue``: you wait for a game (``rated``, with these options); ``waiting`` counts
    the requests in the queue now. ``unqueue``: ``queued`` says whether you were."""

    queued: bool
    rated: bool = False
    waiting: Count = 0

class AccountResult(Result):
    """``register`` (1.5): the account made of this session. ``account`` is its key (the
    name, normalised and case-folded), ``name`` its display name."""

    player_id: Annotated[str, Meta(min_length=1, max_length=limits.MAX_TOKEN_LEN)]
    name: Annotated[str, Meta(min_length=1, max_length=limits.MAX_NAME_LEN)]
    account: Annotated[str, Meta(min_length=1, max_length=limits.MAX_NAME_LEN * 4)]


class LoginResult(AccountResult):
    """``login`` (1.5): as ``welcome``, a session token for this device (keep it, resume
    with it), and the account's player id and name; the connection speaks for them now."""

    session: Annotated[str, Meta(min_length=1, max_length=limits.MAX_TOKEN_LEN)]


class RevokedResult(Result):
    """``change_password``, ``logout``, ``logout_all`` (1.5): how many sessions ended."""

    revoked: Count


#: Which result each command's ``ok`` carries (``hello`` and ``ping`` have their own
#: replies, ``welcome`` and ``pong``).
RESULT_TYPES: dict[str, type[Result]] = {
    "create_table": CreateResult,
    "join": SeatResult,
    "leave": LeaveResult,
    "add_bot": SeatResult,
    "remove_bot": SeatResult,
    "spectate": SpectateResult,
    "start": TableResult,
    "play": TableResult,
    "chanter_vote": TableResult,
    "discard": TableResult,
    "signal": TableResult,
    "resume": ResumeResult,
    "list_tables": TablesPage,
    "get_record": RecordResult,
    "review": ReviewResult,
    "hint": HintResult,
    "rematch": TableResult,
    "chat": TableResult,
    "mute": TableResult,
    "history": HistoryResult,
    "profile": ProfileResult,
    "queue": QueueResult,
    "unqueue": QueueResult,
    "register": AccountResult,
    "login": LoginResult,
    "change_password": RevokedResult,
    "logout": RevokedResult,
    "logout_all": RevokedResult,
}


def decode_result(command_type: str, result: Any) -> Result:
    """Validate an ``ok`` result (a decoded map) as the struct of ``command_type``.

    Raises ``msgspec.ValidationError`` when it does not fit, ``KeyError`` for a command
    that has no ``ok`` result.
    """
    return msgspec.convert(result, RESULT_TYPES[command_type])


__all__ = [
    "RESULT_TYPES",
    "AccountResult",
    "CreateResult",
    "HintChoice",
    "HintResult",
    "HistoryResult",
    "LeaveResult",
    "LoginResult",
    "ProfileResult",
    "QueueResult",
    "RecordResult",
    "Result",
    "ResumeResult",
    "ReviewResult",
    "RevokedResult",
    "SeatRef",
    "SeatResult",
    "SpectateResult",
    "TableResult",
    "TablesPage",
    "WatchRef",
    "decode_result",
]
