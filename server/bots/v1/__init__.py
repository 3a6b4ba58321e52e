"""``expert-v1``: the expert exactly as it was before issue 12, frozen as a yardstick.

These modules are verbatim copies of ``common``, ``expert``, ``heuristics``, ``knowledge``
and ``sampling`` at the commit that opened issue 12 (only the import of :mod:`..base` was
adjusted). Do not improve them: ``aluette-arena --a expert --b expert-v1`` measures the
current expert against this fixed reference (docs/BOTS.md).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from protocol import TableView
from protocol.vocab import Phase
from server.game import Signal

from ..base import DEFAULT_BUDGET, Budget, Decision, make_discard, make_play, make_vote
from .common import chanter_discards, chanter_vote, truthful_signals
from .expert import expert_card

#: The budget the expert had when it was frozen. The frozen expert keeps it when the
#: default grows (docs/BOTS.md), so it stays the same yardstick; a table or arena budget
#: scales it in proportion to the default.
FROZEN_BUDGET = Budget(steps=25000, worlds_cap=200)


@dataclass(frozen=True, slots=True)
class ExpertV1Bot:
    """The frozen expert: same chanter, signals and PIMC search as before issue 12."""

    level: str = "expert-v1"

    def signals(self, view: TableView) -> list[Signal]:
        if not view.hand:
            return []
        return truthful_signals(view)

    def decide(self, view: TableView, rng: random.Random, budget: Budget) -> Decision:
        sigs = tuple(self.signals(view))
        if view.to_act is None or view.to_act != view.viewer:
            return Decision(None, sigs)
        hand = view.hand
        match view.phase:
            case Phase.CHANTER_VOTE:
                return Decision(make_vote(view, chanter_vote(view)), sigs)
            case Phase.CHANTER_DISCARD if len(hand) >= 6:
                return Decision(make_discard(view, chanter_discards(view)), sigs)
            case Phase.PLAY if hand:
                frozen = FROZEN_BUDGET.scaled(budget.steps / DEFAULT_BUDGET.steps)
                return Decision(make_play(view, expert_card(view, rng, frozen)), sigs)
            case _:
                return Decision(None, sigs)
