"""Table chat: who may say what to whom, muting, and the chat's own rate limit.

Rules (docs/PROTOCOL.md, ``chat`` and ``mute``):

- A seated player's message goes to everyone at the table: the seated players and the
  spectators. A spectator's message goes to the spectators only, so that nobody watching
  can coach a seat (they see what the seats cannot: nothing, but they may know the
  players). Chat is public at the table: there is no private message between partners,
  so it is no channel for partner signals, which stay R15's vocabulary (R16 decides who
  receives those).
- The text arrives cleaned (:func:`protocol.clean_text`, in the decoder) and at most
  ``MAX_CHAT_LEN`` code points long; text made mostly of combining marks is refused
  (``too_many_marks``, :func:`protocol.mostly_marks`: it draws over the other lines).
- Muting is kept by player id (``mutes``, and the sender ids derived from it), never by
  connection or token: a muted player who comes back on a new connection, after a
  restart, or after leaving, is still muted; an account's devices all speak as the
  account's player, so a mute follows the account (issue 30).
- Muting is applied when a message is stored: a player who muted its sender is not in its
  audience, so the message is neither sent to them nor numbered in their sequence (no
  gap, nothing to replay). Unmuting applies to messages sent afterwards.
- Chat messages are table events (stored in the log, replayed on resume to those who
  received them); they are never part of a match record (R17).
- The table keeps its latest ``CHAT_HISTORY`` lines, and a head (a reloaded page, a new
  spectator, a resume answered by a snapshot) carries those its viewer may see now
  (:func:`history`).
- Chat has its own token bucket per player at each table, apart from the command rate
  limit of the session (:class:`ChatLimiter`).

The mutations are pure (:mod:`.mutations` style): the actor commits, replies, then sends.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict

import protocol
from protocol import CommandError, ErrorCode, ServiceError
from protocol.results import TableResult
from protocol.session import RateLimiter

from .mutations import Watchers, Work
from .state import TableState

#: Per-player counters and mute lists kept for players no longer at the table, past which
#: the oldest are dropped (a stranger who watched and chatted must not grow the document
#: forever; one who comes back is re-based by a snapshot, docs/PROTOCOL.md).
KEPT_FOR_ABSENT = 256


def sender_id(state: TableState, player: str) -> str:
    """The id a player's messages carry at this table (what ``mute`` names).

    Stable for one player at one table, different at every other table, and derived from
    the table's secret seed, so it says nothing about the player id behind it.
    """
    digest = hashlib.sha256(f"aluette-chat:{state.seed}:{state.id}:{player}".encode())
    return digest.hexdigest()[:16]


def _at_table(work: Work, player: str) -> int | None:
    """The player's seat, or None for a spectator; refuses anyone else."""
    seat = work.state.seat_of(player)
    if seat is None and player not in work.watchers:
        raise CommandError(ErrorCode.NOT_AT_TABLE, "you are not at this table: join or "
                           "watch it first")
    return seat


def post(work: Work, player: str, name: str, text: str, *, allowed: bool = True
         ) -> TableResult:
    """``chat``: a message to everyone at the table (a seat's) or to the spectators (a
    spectator's), minus those who muted its sender."""
    state = work.state
    seat = _at_table(work, player)
    if not allowed:
        raise ServiceError(ErrorCode.RATE_LIMITED, "too many chat messages; wait a moment "
                           "and send it again")
    if protocol.mostly_marks(text):
        raise CommandError(ErrorCode.TOO_MANY_MARKS, "that text is mostly combining marks; "
                           "write it with fewer accents")
    sender = sender_id(state, player)
    muting = frozenset(p for p, muted in state.mutes.items() if sender in muted)
    event = protocol.ChatMessage(from_seat=seat, name=name, text=text, sender=sender)
    state.chat = [*state.chat, event][-protocol.CHAT_HISTORY:]
    if seat is None:
        work.emit(event, Watchers(seats=False, spectators=True, muting=muting))
    elif muting:
        work.emit(event, Watchers(seats=True, spectators=True, muting=muting))
    else:
        work.emit(event)     # everyone at the table: a public event
    _forget_absent(work)
    return TableResult(table=state.id)


def mute(work: Work, player: str, sender: str, muted: bool) -> TableResult:
    """``mute``: stop (or start again) receiving ``sender``'s messages at this table."""
    state = work.state
    _at_table(work, player)
    mine = [s for s in state.mutes.get(player, []) if s != sender]
    if muted:
        mine = [*mine, sender][-protocol.MAX_MUTES:]
    if mine:
        state.mutes[player] = mine          # a new list: the copy shares the old one
    else:
        state.mutes.pop(player, None)
    _forget_absent(work)
    return TableResult(table=state.id)


def history(state: TableState, player: str) -> protocol.ChatHistory | None:
    """The head's ``chat_history`` for ``player``: the kept lines it may see now (a seat
    none of the spectators', nobody those of a sender it mutes) and whom it mutes, or None
    if there is neither.

    Visibility is decided by where the player is now, so a spectator who sits down stops
    seeing the spectators' lines, as it would have stopped receiving them."""
    seated = state.seat_of(player) is not None
    muted = list(state.mutes.get(player, ()))
    lines = [m for m in state.chat
             if m.sender not in muted and (m.from_seat is not None or not seated)]
    if not lines and not muted:
        return None
    return protocol.ChatHistory(lines=lines, sender=sender_id(state, player), muted=muted)


def _forget_absent(work: Work) -> None:
    """Bound what the document keeps for players who are no longer at the table: their
    private event counters and mute lists, oldest first, past ``KEPT_FOR_ABSENT``."""
    state = work.state
    here = set(state.humans()) | set(work.watchers) | set(state.members)
    for table in (state.priv, state.mutes):
        absent = [p for p in table if p not in here]
        for p in absent[:max(0, len(absent) - KEPT_FOR_ABSENT)]:
            del table[p]


class ChatLimiter:
    """A token bucket per player, apart from the session's command rate limit, so that
    chatting cannot crowd out moves and moves cannot be starved by chat. Over it a
    message is refused ``rate_limited`` (nothing is sent or stored)."""

    #: Players remembered; the least recently active are forgotten past it.
    KEPT = 1024

    def __init__(self, per_second: float = protocol.CHAT_PER_SECOND,
                 burst: int = protocol.CHAT_BURST) -> None:
        self.per_second = per_second
        self.burst = burst
        self._buckets: OrderedDict[str, RateLimiter] = OrderedDict()

    def allow(self, player: str, now: float) -> bool:
        bucket = self._buckets.get(player)
        if bucket is None:
            bucket = RateLimiter(self.per_second, self.burst, 2, now)
            self._buckets[player] = bucket
            while len(self._buckets) > self.KEPT:
                self._buckets.popitem(last=False)
        self._buckets.move_to_end(player)
        return bucket.allow(now)
