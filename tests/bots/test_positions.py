"""Scripted positions where the right card is clear; each test cites the rule that makes it so.

Positions are built through the engine (tests/bots/conftest.py) and the bots get only
``view(match, seat)``.
"""

from __future__ import annotations

import random

import pytest

from server.bots import Budget, choose_action
from server.bots.heuristics import EASY_SLIP, easy_card
from server.game import STRENGTH, Play, view

from .conftest import fill, scripted

SMART = ("normal", "expert")
BUDGET = Budget(steps=6000, worlds_cap=60)


def card_of(level: str, m, seed: int = 0) -> str:  # type: ignore[no-untyped-def]
    """The level's card; ``easy`` without its random slips, whose rule is what is tested
    (the slips have a test of their own below)."""
    seat = m.to_act
    if level == "easy":
        return easy_card(view(m, seat), random.Random(seed), slip=0.0)
    action = choose_action(level, view(m, seat), random.Random(seed), BUDGET)
    assert isinstance(action, Play) and action.seat == seat
    return action.card


@pytest.mark.parametrize("level", ("easy", *SMART))
@pytest.mark.parametrize("seed", range(3))
def test_monsieur_not_wasted_on_partners_sure_trick(level: str, seed: int) -> None:
    """R3/R11: Madame loses only to Monsieur; with Monsieur in my hand the partner's Madame
    cannot be beaten, and R12 (no pooling) makes taking the partner's trick worthless.
    So seat 2 must not spend Monsieur (or any big card) on it."""
    hands = fill([["3c", "4o"], ["5o", "6o"], ["3o", "2o", "9c", "1o", "4b"], ["5b", "6b"]])
    m = scripted(hands, ["3c", "5o"])          # seat 0 (partner) leads Madame, seat 1 low
    assert m.to_act == 2
    card = card_of(level, m, seed)
    assert card != "3o"
    assert STRENGTH[card] < STRENGTH["3c"]


@pytest.mark.parametrize("level", ("easy", *SMART))
def test_cheap_card_when_partner_cannot_be_beaten(level: str) -> None:
    """R11: seat 3 plays last and its partner (seat 1) holds the trick; nothing seat 3 does
    can make it safer, so it keeps its good cards and throws its lowest one (R10, R12)."""
    hands = fill([["4o", "5o"], ["2o", "6o"], ["4c", "5c"], ["2c", "9o", "1e", "Rb"]])
    m = scripted(hands, ["4o", "2o", "4c"])
    assert m.to_act == 3
    card = card_of(level, m)
    assert STRENGTH[card] < STRENGTH["2o"]
    assert card not in ("2c", "9o", "1e", "Rb")


def test_easy_slips_now_and_then_as_a_beginner_would() -> None:
    """``easy`` plays a card at random (R10: any card is legal) with probability
    ``EASY_SLIP``, so over many seeds it leaves its rule (dump the lowest card under the
    partner's sure trick, R12) about ``EASY_SLIP * (k - 1) / k`` of the time with k cards in hand,
    and every card of the hand turns up."""
    assert 0 < EASY_SLIP < 0.5
    hands = fill([["3c", "4o"], ["5o", "6o"], ["3o", "2o", "9c", "1o", "4b"], ["5b", "6b"]])
    m = scripted(hands, ["3c", "5o"])
    rule = card_of("easy", m)
    n = 4000
    seen = [choose_action("easy", view(m, 2), random.Random(i), BUDGET) for i in range(n)]
    cards = [a.card for a in seen if isinstance(a, Play)]
    assert len(cards) == n
    off_rule = sum(c != rule for c in cards) / n
    k = len(m.hands[2])
    expected = EASY_SLIP * (k - 1) / k
    assert abs(off_rule - expected) < 4 * (expected * (1 - expected) / n) ** 0.5
    assert set(cards) == set(m.hands[2])


@pytest.mark.parametrize("level", SMART)
def test_last_seat_does_not_let_the_opponent_take_a_roi_trick(level: str) -> None:
    """R11: the single strongest card wins; a tie for the top spoils. Seat 3, last, either
    beats the opponents' Roi cheaply (an ace) or ties it with its own Roi (spoiled, R11),
    and keeps Monsieur for later."""
    hands = fill([["Rb", "4o"], ["5o", "6o"], ["4c", "5c"], ["3o", "1c", "4e"]])
    m = scripted(hands, ["Rb", "5o", "4c"])
    assert "Ro" in m.hands[3]
    assert card_of(level, m) in ("1c", "Ro")


SPOIL_HANDS = [
    ["4o", "5o", "6o", "7o", "Ro", "Rc", "8o", "1o", "8e"],
    ["3o", "3c", "4c", "6c", "7c", "8c", "7e", "4e", "2o"],
    ["3b", "3e", "Vo", "5c", "Vc", "Cb", "Co", "5e", "6e"],
    ["5b", "6b", "9b", "Ce", "7b", "8b", "Cc", "1e", "4b"],
]
SPOIL_PLAYS = [
    "4o", "3o", "3b", "5b",     # t1, leader 0: Monsieur, seat 1 wins
    "3c", "3e", "6b", "5o",     # t2, leader 1: Madame, seat 1 wins (2 tricks, first)
    "4c", "Vo", "9b", "6o",     # t3, leader 1: seat 2 wins
    "5c", "Ce", "7o", "6c",     # t4, leader 2: seat 3 wins
    "7b", "Ro", "7c", "Vc",     # t5, leader 3: seat 0 wins
    "Rc", "8c", "Cb", "8b",     # t6, leader 0: seat 0 wins (2 tricks)
    "8o", "7e", "Co", "Cc",     # t7, leader 0: two Cavalières tie, spoiled (R11)
    "1o", "4e", "5e",           # t8, leader 0: seat 0's ace holds the trick
]


@pytest.mark.parametrize("level", SMART)
def test_spoil_by_matching_when_opponent_would_take_the_deal(level: str) -> None:
    """R11 + R12: seat 3 plays last in trick 8. Seat 0 holds it with an ace and, at 2 tricks,
    would reach 3 and win the deal (the partner, seat 1, can only tie at 3 later and R12
    gives ties to whoever got there first). Seat 3 cannot beat an ace but holds one:
    matching it spoils the trick (R11) and keeps the deal open; dumping loses it."""
    m = scripted(SPOIL_HANDS, SPOIL_PLAYS)
    v = view(m, 3)
    assert v.trick_counts == [2, 2, 1, 1]
    assert [t.winner for t in v.tricks] == [1, 1, 2, 3, 0, 0, None]
    assert m.to_act == 3
    assert card_of(level, m) == "1e"
