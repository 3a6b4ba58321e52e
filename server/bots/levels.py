"""The four bot levels behind the one interface of :mod:`.base`.

``random`` plays any legal move; ``easy`` follows a beginner's rule of thumb; ``normal`` runs
a small determinized search (9 worlds, greedy rollouts); ``expert`` a large one with
inference (PIMC, :mod:`.expert`, :mod:`.inference`). All but ``random`` vote
and discard with the chanter heuristics (:mod:`.common`) and send true signals chosen for
what they tell the partner (:mod:`.signalling`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from protocol import TableView
from protocol.vocab import Phase
from server.game import Signal

from .base import Budget, Decision, make_discard, make_play, make_vote
from .common import chanter_discards, chanter_vote
from .expert import expert_card, expert_vote
from .heuristics import easy_card, normal_card
from .knowledge import read_view
from .reference import greedy_card, pimc_card
from .signalling import chosen_signals
from .v1.common import chanter_discards as v1_discards
from .v1.common import chanter_vote as v1_vote


def _my_turn(view: TableView) -> bool:
    return view.to_act is not None and view.to_act == view.viewer


def _can_act(view: TableView) -> bool:
    """It is this seat's turn and the view holds the cards the phase needs.

    The engine never builds a view where the seat to act lacks them, but a client's model
    can be caught between events (a new deal announced, the hand not yet received); then
    there is nothing to decide yet, and no bot may index into an empty hand.
    """
    if not _my_turn(view):
        return False
    n = len(view.hand)
    match view.phase:
        case Phase.PLAY:
            return n > 0
        case Phase.CHANTER_DISCARD:
            return n >= 6
        case Phase.CHANTER_VOTE:
            return True
        case _:
            return False


@dataclass(frozen=True, slots=True)
class RandomBot:
    """Uniformly random legal moves (R10: every card in hand is legal). Sends no signals."""

    level: str = "random"

    def decide(self, view: TableView, rng: random.Random, budget: Budget) -> Decision:
        if not _can_act(view):
            return Decision(None)
        hand = list(view.hand)
        match view.phase:
            case Phase.PLAY:
                return Decision(make_play(view, rng.choice(hand)))
            case Phase.CHANTER_VOTE:
                return Decision(make_vote(view, rng.random() < 0.5))
            case Phase.CHANTER_DISCARD:
                return Decision(make_discard(view, rng.sample(hand, 6)))
            case _:
                return Decision(None)


@dataclass(frozen=True, slots=True)
class HeuristicBot:
    """Levels easy, normal and expert: same chanter and signals, different card play."""

    level: str

    def signals(self, view: TableView) -> list[Signal]:
        return chosen_signals(view)     # nothing without a hand: "useless_hand" would be false

    def decide(self, view: TableView, rng: random.Random, budget: Budget) -> Decision:
        sigs = tuple(self.signals(view))
        if not _can_act(view):
            return Decision(None, sigs)
        match view.phase:
            case Phase.CHANTER_VOTE:
                vote = expert_vote(view, rng) if self.level == "expert" else chanter_vote(view)
                return Decision(make_vote(view, vote), sigs)
            case Phase.CHANTER_DISCARD:
                return Decision(make_discard(view, chanter_discards(view)), sigs)
            case Phase.PLAY:
                return Decision(make_play(view, self._card(view, rng, budget)), sigs)
            case _:
                return Decision(None, sigs)

    def _card(self, view: TableView, rng: random.Random, budget: Budget) -> str:
        match self.level:
            case "easy":
                return easy_card(view, rng)
            case "normal":
                return normal_card(view, read_view(view), rng)
            case _:
                return expert_card(view, rng, budget)


@dataclass(frozen=True, slots=True)
class ReferenceBot:
    """The arena's yardsticks ``greedy`` and ``pimc`` (:mod:`.reference`).

    They send no signals and ignore the ones they receive; they vote and discard with the
    chanter rule frozen in :mod:`.v1.common` (R9), so nothing about them moves when our
    levels improve.
    """

    level: str

    def decide(self, view: TableView, rng: random.Random, budget: Budget) -> Decision:
        if not _can_act(view):
            return Decision(None)
        match view.phase:
            case Phase.CHANTER_VOTE:
                return Decision(make_vote(view, v1_vote(view)))
            case Phase.CHANTER_DISCARD:
                return Decision(make_discard(view, v1_discards(view)))
            case Phase.PLAY:
                card = greedy_card(view) if self.level == "greedy" else pimc_card(view, rng)
                return Decision(make_play(view, card))
            case _:
                return Decision(None)
