"""The one bot interface: a bot is a pure function of a seat's view.

A bot gets exactly what :func:`server.game.view` gives that seat (docs/ARCHITECTURE.md
convention 4), a seeded :class:`random.Random` and a :class:`Budget`; it never sees a
``Match``, so it cannot peek at another hand, the talon or anyone's discards. It returns a
:class:`Decision`: the turn action to take (a card, a chanter vote, six discards) plus the
partner signals (R15) it wants to send now. Chance is an input (convention 2): the same view,
RNG seed and budget always give the same decision, so a table can replay its bots.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Protocol

from protocol import TableView
from server.game import Action, ChanterVote, Discard, Play, Signal


@dataclass(frozen=True, slots=True)
class Budget:
    """How much thinking a table allows a search bot per decision (a per-table setting).

    Counted in simulated card plays, not in wall-clock time, so a decision does not depend
    on how loaded the machine is (determinism). ``steps`` is the whole budget of one card
    decision: worlds x candidate cards x cards left to play (plus a fixed cost per sampled
    world); the default keeps the expert's p99 decision time under 100 ms on one core
    (``bench/bots.py``). ``worlds_cap`` bounds how many determinizations (sampled deals of
    the unseen cards) are drawn late in a deal, when playouts are short. Three times the
    earlier 25,000 steps and 200 worlds measured stronger over 2,000 duplicate deals
    against ``pimc`` (docs/BOTS.md, "A larger budget").

    ``seconds`` is a safety cap the server adds (``--bot-think``), never the arena or the
    tests: a search that has thought that long plays the best card it has found so far (after
    at least a few worlds). A machine as fast as the one the steps were sized on never
    reaches it, so its bots stay deterministic; a slow or crowded one plays a little weaker
    instead of keeping its players waiting (docs/BOTS.md, "A cap on thinking time").
    """

    steps: int = 75000
    worlds_cap: int = 600
    seconds: float | None = None

    def scaled(self, factor: float) -> Budget:
        """A budget ``factor`` times as large (stronger or weaker tables), the cap kept."""
        return Budget(max(1, int(self.steps * factor)), max(1, int(self.worlds_cap * factor)),
                      self.seconds)

    def capped(self, seconds: float | None) -> Budget:
        """This budget with a cap of ``seconds`` of thinking (None: no cap)."""
        return Budget(self.steps, self.worlds_cap, seconds)


DEFAULT_BUDGET = Budget()


@dataclass(frozen=True, slots=True)
class Decision:
    """What a bot wants to do now: a turn action (None if it is not its turn) and signals."""

    action: Action | None
    signals: tuple[Signal, ...] = field(default=())


class Bot(Protocol):
    """Every level implements this; the registry in :mod:`server.bots` maps names to bots."""

    @property
    def level(self) -> str: ...

    def decide(self, view: TableView, rng: random.Random, budget: Budget) -> Decision: ...


def seat_of(view: TableView) -> int:
    """The seat whose view this is: a bot only ever decides for a seat, never a spectator."""
    seat = view.viewer
    if seat is None:
        raise ValueError("a spectator's view: bots decide for a seat")
    return seat


def make_play(view: TableView, card: str) -> Play:
    """The Play action for the viewer (the bot never chooses whose seat it acts for)."""
    return Play(seat_of(view), card)


def make_vote(view: TableView, vote: bool) -> ChanterVote:
    return ChanterVote(seat_of(view), vote)


def make_discard(view: TableView, cards: list[str]) -> Discard:
    return Discard(seat_of(view), tuple(cards))
