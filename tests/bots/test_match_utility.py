"""The expert's objective follows the match (R14, R14a), not only the deal's points; its
chanter vote (R9) is an evaluation of the same objective."""

from __future__ import annotations

import random

import msgspec

from protocol import TableOptions, TableView
from server.bots.expert import MATCH_WEIGHT, deal_utility, expert_vote
from server.bots.knowledge import MAJEURE_CARDS
from server.game import Match, Options, view


def _view(points: list[int], deal: int, deals: int = 5, target: int | None = None
          ) -> TableView:
    """A seat's view with the match's length and score as given (the rest is a new deal's)."""
    m, _ = Match.new(Options(deals=1), 0)
    return msgspec.structs.replace(view(m, 0), options=TableOptions(deals=deals,
                                                                     target_points=target),
                                   points=points, deal_number=deal)


def test_points_before_the_last_deal() -> None:
    """R12-R13: a deal that cannot end the match is worth its point margin (-2..2)."""
    assert deal_utility(_view([1, 2], 3), 0) == [-2, -1, 0, 1, 2]


def test_one_deal_match_is_points() -> None:
    """The arena's one-deal matches: the result is the sign of the points, and mordienne
    keeps its two points (R13)."""
    assert deal_utility(_view([0, 0], 1, deals=1), 1) == [-2, -1, 0, 1, 2]


def test_last_deal_is_the_match_result() -> None:
    """R14: last of five deals, team 0 leads 3-2. Losing by one point only draws the match,
    losing by two (a mordienne, R13) loses it; any result at or above zero wins it."""
    u = deal_utility(_view([3, 2], 5), 0)
    assert u == [-MATCH_WEIGHT - 2, -1, MATCH_WEIGHT, MATCH_WEIGHT + 1, MATCH_WEIGHT + 2]
    # The other team: one point draws the match, only a mordienne (R13) wins it.
    v = deal_utility(_view([3, 2], 5), 1)
    assert v[2:] == [-MATCH_WEIGHT, 1, MATCH_WEIGHT + 2]


def test_target_in_reach() -> None:
    """R14a: first to 5; team 1 has 4, so any point it scores ends the match."""
    u = deal_utility(_view([3, 4], 7, deals=50, target=5), 0)
    assert u[1] == -MATCH_WEIGHT - 1 and u[0] == -MATCH_WEIGHT - 2
    assert u[2] == 0 and u[3] == 1          # one point: 4-4, the match goes on
    assert u[4] == MATCH_WEIGHT + 2         # a mordienne takes team 0 to 5 first


def test_chanter_vote_by_evaluation_is_deterministic_and_sane() -> None:
    """R9 by evaluation (expert_vote): the same view and seed give the same vote, and a seat
    that keeps its hand while holding three or more cartes majeures (R3) sees the talon arm
    only the others, so it declines (seeded deals, as measured when the vote was written)."""
    strong = 0
    for seed in range(40):
        m, _ = Match.new(Options(deals=1, chanter=True, first_dealer=3), seed)
        for s in (1, 2):                                   # not receivers: dealer is 3
            v = view(m, s)
            vote = expert_vote(v, random.Random(seed))
            assert vote == expert_vote(v, random.Random(seed))
            if sum(c in MAJEURE_CARDS for c in v.hand) >= 3:
                strong += 1
                assert vote is False
    assert strong >= 3
