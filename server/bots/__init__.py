"""Bots for every seat: pure functions of a seat's view, a seeded RNG and a budget.

The server calls :func:`choose_action` when a bot seat is to act and :func:`choose_signals`
whenever it likes (signals are allowed at any time, R15); both take only the seat's view
(``server.game.view(match, seat)``), never the match. ``aluette-arena`` (:mod:`.arena`)
measures the levels against each other.

Determinism: the same level, view, RNG state and budget give the same result, so a table
that seeds the RNG from its match seed and version can replay its bots exactly.
"""

from __future__ import annotations

import random

from protocol import TableView
from server.game import Action, Signal

from .base import DEFAULT_BUDGET, Bot, Budget, Decision
from .levels import HeuristicBot, RandomBot, ReferenceBot
from .v1 import ExpertV1Bot

#: The levels a table offers (protocol.BOT_LEVELS).
LEVELS = ("random", "easy", "normal", "expert")
#: Arena-only yardsticks (docs/BOTS.md): fixed reference opponents and the frozen expert.
REFERENCE_LEVELS = ("greedy", "pimc", "expert-v1")
#: Everything :func:`get_bot` knows.
ALL_LEVELS = LEVELS + REFERENCE_LEVELS

_BOTS: dict[str, Bot] = {
    "random": RandomBot(),
    "easy": HeuristicBot("easy"),
    "normal": HeuristicBot("normal"),
    "expert": HeuristicBot("expert"),
    "greedy": ReferenceBot("greedy"),
    "pimc": ReferenceBot("pimc"),
    "expert-v1": ExpertV1Bot(),
}


class UnknownLevel(ValueError):
    """Raised for a level name that is not in :data:`LEVELS`."""


def get_bot(level: str) -> Bot:
    """The bot for ``level`` (one of :data:`ALL_LEVELS`); bots are stateless and shareable."""
    try:
        return _BOTS[level]
    except KeyError:
        raise UnknownLevel(
            f"unknown bot level {level!r}; choose one of {ALL_LEVELS}") from None


def decide(
    level: str, view: TableView, rng: random.Random, budget: Budget | None = None
) -> Decision:
    """The full decision (turn action and signals) of a ``level`` bot for this view."""
    return get_bot(level).decide(view, rng, budget or DEFAULT_BUDGET)


def choose_action(
    level: str, view: TableView, rng: random.Random, budget: Budget | None = None
) -> Action:
    """The engine action a ``level`` bot takes for the seat whose view this is.

    Raises ValueError when it is not that seat's turn (``view.to_act``).
    """
    action = decide(level, view, rng, budget).action
    if action is None:
        raise ValueError(f"seat {view.viewer} is not to act (to_act={view.to_act})")
    return action


def choose_signals(level: str, view: TableView, rng: random.Random) -> list[Signal]:
    """Signals (R15) the bot wants to send now; empty when signals are off (R16)."""
    bot = get_bot(level)
    if isinstance(bot, HeuristicBot | ExpertV1Bot):
        return bot.signals(view)
    return []


__all__ = [
    "ALL_LEVELS", "DEFAULT_BUDGET", "LEVELS", "REFERENCE_LEVELS", "Bot", "Budget", "Decision",
    "UnknownLevel", "choose_action", "choose_signals", "decide", "get_bot",
]
