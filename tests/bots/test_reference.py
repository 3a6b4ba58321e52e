"""The arena's reference opponents ``greedy`` and ``pimc`` and the frozen ``expert-v1``.

Greedy's rule cases are hand-built positions through the real engine (tests/bots/conftest.py);
each test cites the rule the expected card follows from.
"""

from __future__ import annotations

import random

import pytest

from server.bots import (
    ALL_LEVELS,
    LEVELS,
    REFERENCE_LEVELS,
    Budget,
    choose_action,
    get_bot,
)
from server.bots.base import DEFAULT_BUDGET
from server.bots.reference import greedy_card, greedy_index, greedy_rollout, pimc_card
from server.bots.v1 import FROZEN_BUDGET
from server.bots.v1.expert import expert_card as v1_card
from server.game import STRENGTH, Match, Options, Play, view

from .conftest import fill, scripted
from .test_positions import SPOIL_HANDS, SPOIL_PLAYS

_BUDGET = Budget(steps=1000, worlds_cap=10)


def _lowest(v: dict) -> int:  # type: ignore[type-arg]
    return min(STRENGTH[c] for c in v.hand)


def test_registry_has_the_reference_levels() -> None:
    assert REFERENCE_LEVELS == ("greedy", "pimc", "expert-v1")
    assert ALL_LEVELS == LEVELS + REFERENCE_LEVELS
    assert all(get_bot(level).level == level for level in ALL_LEVELS)


def test_greedy_leads_its_lowest_card() -> None:
    """R10: any card may lead; nothing is on the table, so the cheapest card "beats" it."""
    m = scripted(fill([["3o", "2o", "1o"], [], [], []]), [])
    v = view(m, 0)
    assert STRENGTH[greedy_card(v)] == _lowest(v)


def test_greedy_dumps_when_partner_holds_unbeatably() -> None:
    """R11-R12: seat 0 leads Monsieur (nothing beats or ties it); seat 2 keeps its cards."""
    m = scripted(fill([["3o"], ["5o"], ["2o", "1o", "Rb"], []]), ["3o", "5o"])
    v = view(m, 2)
    card = greedy_card(v)
    assert STRENGTH[card] == _lowest(v) and card not in ("2o", "1o", "Rb")


def test_greedy_dumps_when_last_and_partner_holds() -> None:
    """Seat 3 plays the last card of the trick and its partner (seat 1) holds it with a Roi:
    it cannot be beaten any more (R11), so seat 3 throws its lowest card."""
    m = scripted(fill([["4o"], ["Rb"], ["5c"], ["2c", "1e"]]), ["4o", "Rb", "5c"])
    v = view(m, 3)
    card = greedy_card(v)
    assert card not in ("2c", "1e") and STRENGTH[card] == _lowest(v)


def test_greedy_overtakes_a_beatable_partner_cheaply() -> None:
    """The partner's Roi can still be beaten by the opponent to play (Monsieur is unseen):
    greedy takes the trick with its cheapest card that beats it (an ace, not Le Borgne)."""
    m = scripted(fill([["Rb"], ["4c"], ["1c", "2o"], []]), ["Rb", "4c"])
    assert greedy_card(view(m, 2)) == "1c"


def test_greedy_beats_with_the_cheapest_winning_card() -> None:
    """R11: the single strongest card wins; greedy spends the least card that does it."""
    m = scripted(fill([["Rb"], ["1c", "3o", "2c"], [], []]), ["Rb"])
    assert greedy_card(view(m, 1)) == "1c"


def test_greedy_spoils_an_opponents_trick_by_tying() -> None:
    """R11: seat 1 cannot beat the opponent's ace but holds one; a tie spoils the trick."""
    m = scripted(fill([["1o"], ["1e", "Rb"], [], []]), ["1o"])
    v = view(m, 1)
    assert max(STRENGTH[c] for c in v.hand) == STRENGTH["1e"]
    assert greedy_card(v) == "1e"


def test_greedy_dumps_lowest_when_nothing_helps() -> None:
    """Nothing in seat 1's hand beats or ties Monsieur (R3): lowest card (R10)."""
    m = scripted(fill([["3o"], ["2o", "1e"], [], []]), ["3o"])
    v = view(m, 1)
    card = greedy_card(v)
    assert card not in ("2o", "1e") and STRENGTH[card] == _lowest(v)


def test_greedy_never_ties_its_partners_winning_card() -> None:
    """Seat 3, last, partner (seat 1) holds the trick with an ace; seat 3's cards are all
    aces or better but one: it dumps the one that does not spoil the partner's trick (R11)."""
    m = scripted(fill([["4o"], ["1o"], ["5c"], ["1e", "1b", "1c", "Rb", "3o", "3c", "2o",
                                                "2c", "9c"]]), ["4o", "1o", "5c"])
    assert greedy_card(view(m, 3)) == "Rb"


def test_greedy_index_matches_greedy_card_on_open_positions() -> None:
    """Inside a world, the strength-level rule plays the same strength as the view rule
    whenever "unbeatably" means the same in both (partner not holding a beatable trick)."""
    m = scripted(fill([["Rb"], ["1c", "3o", "2c"], [], []]), ["Rb"])
    hands = [sorted(STRENGTH[c] for c in h) for h in m.hands]
    i = greedy_index(hands, 1, 0, [STRENGTH["Rb"]])
    assert hands[1][i] == STRENGTH[greedy_card(view(m, 1))]


def test_greedy_rollout_plays_nine_tricks() -> None:
    rng = random.Random(3)
    pack = list(STRENGTH.values())
    for _ in range(50):
        rng.shuffle(pack)
        hands = [sorted(pack[i * 9 : i * 9 + 9]) for i in range(4)]
        winners = greedy_rollout(hands, rng.randrange(4), [], [])
        assert len(winners) == 9 and all(h == [] for h in hands)


def _positions(seed: int) -> list[dict]:  # type: ignore[type-arg]
    m, _ = Match.new(Options(deals=1, signals="off"), seed)
    out = []
    while not m.over:
        seat = m.to_act
        assert seat is not None
        v = view(m, seat)
        out.append(v)
        m.apply(choose_action("greedy", v, random.Random(0)))
    return out


@pytest.mark.parametrize("seed", range(3))
def test_pimc_is_legal_and_deterministic(seed: int) -> None:
    for v in _positions(seed):
        a = pimc_card(v, random.Random(7))
        assert a in v.hand
        assert pimc_card(v, random.Random(7)) == a
        assert greedy_card(v) in v.hand


def test_pimc_spoils_when_an_opponent_would_take_the_deal() -> None:
    """The R11/R12 position of test_positions: matching the ace keeps the deal open."""
    m = scripted(SPOIL_HANDS, SPOIL_PLAYS)
    action = choose_action("pimc", view(m, 3), random.Random(0))
    assert isinstance(action, Play) and action.card == "1e"


@pytest.mark.parametrize("level", REFERENCE_LEVELS)
def test_reference_levels_play_whole_matches(level: str) -> None:
    """Against normal bots, chanter on (R9) and signals private (R16): only legal actions,
    and the yardsticks send no signals (expert-v1 keeps its truthful ones)."""
    for seed in range(2):
        m, _ = Match.new(Options(deals=2, chanter=True, signals="private"), seed)
        levels = [level, "normal", level, "normal"]
        while not m.over:
            seat = m.to_act
            assert seat is not None
            v = view(m, seat)
            decision = get_bot(levels[seat]).decide(v, random.Random(seed), _BUDGET)
            if level != "expert-v1" and levels[seat] == level:
                assert decision.signals == ()
            for sig in decision.signals:
                m.apply(sig)
            assert decision.action is not None
            m.apply(decision.action)


def test_the_frozen_expert_keeps_its_frozen_budget() -> None:
    """``expert-v1`` is a yardstick: when the default budget grows, it still searches with
    the budget it had when frozen (25,000 simulated plays, 200 worlds), and a larger table
    or arena budget scales that in proportion."""
    assert Budget(steps=25000, worlds_cap=200) == FROZEN_BUDGET
    assert DEFAULT_BUDGET.steps > FROZEN_BUDGET.steps        # the case this test is about
    m = scripted(SPOIL_HANDS, SPOIL_PLAYS[:9])
    v = view(m, m.to_act)
    differ = 0
    for seed in range(12):
        chosen = get_bot("expert-v1").decide(v, random.Random(seed), DEFAULT_BUDGET).action
        assert isinstance(chosen, Play)
        assert chosen.card == v1_card(v, random.Random(seed), FROZEN_BUDGET)
        differ += chosen.card != v1_card(v, random.Random(seed), DEFAULT_BUDGET)
    assert differ > 0        # the position tells the two budgets apart
    twice = DEFAULT_BUDGET.scaled(2)
    chosen = get_bot("expert-v1").decide(v, random.Random(0), twice).action
    assert isinstance(chosen, Play)
    assert chosen.card == v1_card(v, random.Random(0), FROZEN_BUDGET.scaled(2))
