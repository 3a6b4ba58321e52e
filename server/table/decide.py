"""The pure decisions of a table: what a command does, and what the table does next by itself.

Nothing here waits, stores or sends (docs/ARCHITECTURE.md convention 1):

- :func:`plan_for` reads a table command and returns the work it means: the mutation to
  apply to a working copy (:mod:`.mutations`, :mod:`.chat`) and what it does to the
  connection's subscription; the one place that dispatches on a table command's kind;
- :func:`next_due` reads the table's state and says what will act by itself next, and
  when: a bot's move or signals, a turn timer, a grace period's end, a rematch. The
  table's clock (:mod:`.clock`) sleeps until then.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

import protocol
from protocol import CommandError, ErrorCode
from protocol.results import Result
from server.game import ChanterVote, Discard, Match, Play, Signal

from . import chat, mutations
from .mutations import Work
from .state import TableState

#: A command's effect on a working copy: its ``ok`` result, or None (nothing to answer).
Mutation = Callable[[Work], Result | None]

#: What a command does to the connection's subscription once it is applied: a ``join``
#: starts watching the table (with a head), a seated player's ``leave`` stops.
Watch = Literal["subscribe", "unsubscribe"] | None


@dataclass(frozen=True, slots=True)
class Plan:
    """The work a table command means: the mutation, and its effect on the subscription."""

    mutate: Mutation
    watch: Watch = None
    #: The mutation only applies engine actions: it may be stored as a delta (issue 32).
    light: bool = False


#: Whose turn it is, precisely enough that a bot asked about one turn never plays another.
TurnKey = tuple[Any, ...]

DueKind = Literal["signals", "bot", "timer", "grace", "rematch"]


def plan_for(cmd: protocol.Command, player: str, name: str,
             chat_allowed: Callable[[], bool], *, bot: bool = False) -> Plan:
    """The work a table command means for ``player`` (whose display name is ``name``;
    ``bot``: its client said it is a program).

    ``chat_allowed`` is asked once, now, for a ``chat`` (its own rate limit: a refused
    message is answered ``rate_limited`` and stores nothing)."""
    match cmd:
        case protocol.Join(seat=seat, code=code, contribution=contribution):
            return Plan(partial(mutations.join, player=player, name=name, seat=seat, code=code,
                                contribution=contribution, bot=bot), "subscribe")
        case protocol.Leave():
            return Plan(partial(mutations.leave, player=player), "unsubscribe")
        case protocol.AddBot(seat=bot_seat, level=level):
            return Plan(partial(mutations.add_bot, player=player, seat=bot_seat, level=level))
        case protocol.RemoveBot(seat=bot_seat):
            return Plan(partial(mutations.remove_bot, player=player, seat=bot_seat))
        case protocol.Start(contribution=contribution):
            return Plan(partial(mutations.start, player=player, contribution=contribution))
        case protocol.Rematch(contribution=contribution):
            return Plan(partial(mutations.rematch, player=player, contribution=contribution))
        case protocol.Chat(text=text):
            return Plan(partial(chat.post, player=player, name=name, text=text,
                                allowed=chat_allowed()))
        case protocol.Mute(sender=sender, muted=muted):
            return Plan(partial(chat.mute, player=player, sender=sender, muted=muted))
        case protocol.LetBotPlay(seat=away_seat):
            return Plan(partial(mutations.let_bot_play, player=player, seat=away_seat))
        # The game's commands become engine actions once the player's seat is known.
        case protocol.Play(card=card):
            return Plan(partial(mutations.act, player=player, action=partial(Play, card=card)),
                        light=True)
        case protocol.ChanterVote(vote=vote):
            return Plan(partial(mutations.act, player=player,
                                action=partial(ChanterVote, vote=vote)), light=True)
        case protocol.Discard(cards=cards):
            return Plan(partial(mutations.act, player=player,
                                action=partial(Discard, cards=tuple(cards))), light=True)
        case protocol.Signal(signal=signal, n=n):
            return Plan(partial(mutations.act, player=player,
                                action=partial(Signal, signal=signal, n=n)), light=True)
    raise CommandError(ErrorCode.UNKNOWN_TYPE, f"{type(cmd).__name__} is not a table command")


# ---------------------------------------------------------------------------- what is due


@dataclass(frozen=True, slots=True)
class Due:
    """The next thing a table does by itself, and when (wall clock, seconds)."""

    at: float
    kind: DueKind
    seat: int | None = None
    key: TurnKey = ()


def _pause(m: Match) -> float:
    """How many bot delays a bot waits before its move: longer before the first card of a
    trick (the players look at the trick just gathered) and of a deal (they read its
    result), issue 31's pace. It depends on public state only."""
    if not m.trick:
        return 5.0 if not m.tricks else 2.0
    return 1.0


def next_due(state: TableState, match: Match | None, *, turn: TurnKey | None,
             turn_started: float, now: float, watched: bool,
             bot_signals_pending: Callable[[], bool]) -> Due | None:
    """What the table does by itself next, from its state alone (for the process that
    owns it). ``watched``: someone is here (bots and timers pause without);
    ``bot_signals_pending``: a bot seat has signals to send now (R15)."""
    if state.status == "finished":
        at = mutations.rematch_due(state)
        return Due(at, "rematch") if at is not None else None
    if match is None or match.over or state.status != "playing":
        return None
    dues: list[Due] = []
    for seat, s in enumerate(state.seats):
        if (s.kind == "human" and not s.connected and not s.takeover
                and s.disconnected_at is not None):
            dues.append(Due(s.disconnected_at + state.options.grace_s, "grace", seat,
                            (s.player,)))
    if watched:
        if state.options.signals != "off" and bot_signals_pending():
            dues.append(Due(now, "signals"))
        to_act = match.to_act
        if to_act is not None and turn is not None:
            if state.controlled_by_bot(to_act):
                delay = state.options.bot_delay_ms / 1000 * _pause(match)
                dues.append(Due(turn_started + delay, "bot", to_act, turn))
            elif state.options.turn_timer_s:
                dues.append(Due(turn_started + state.options.turn_timer_s, "timer", to_act,
                                turn))
    return min(dues, key=lambda d: d.at) if dues else None
