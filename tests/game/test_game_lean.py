"""lean.py, the bots' unvalidated fast path, must agree with the validated engine (R10-R13a)."""

from __future__ import annotations

import random

import pytest
from game_kit import make_match
from hypothesis import given, settings
from hypothesis import strategies as st

from server.game import ALL_CARDS, STRENGTH, Match, Play, lean, rules


def _play_in_list_order(m: Match, stop_after: int | None = None) -> int:
    """Each seat plays its hand in list order; returns how many cards were played."""
    played = 0
    while not m.over and (stop_after is None or played < stop_after):
        seat = m.to_act
        assert seat is not None
        m.apply(Play(seat, m.hands[seat][0]))
        played += 1
    return played


def _strengths(hand: list[str]) -> list[int]:
    return [STRENGTH[c] for c in hand]


def _deal_winners_from_record(m: Match) -> list[int | None]:
    deal = m.deals[-1]
    leader = (deal["dealer"] + 1) % 4
    out: list[int | None] = []
    for cards in deal["tricks"]:
        w = rules.trick_winner(leader, cards)
        out.append(w)
        leader = rules.next_leader(leader, w)
    return out


def test_lean_trick_winners() -> None:
    assert lean.trick_winners([[19, 1, 2, 3]]) == [0]
    assert lean.trick_winners([[11, 11, 2, 3]]) == [None]
    assert lean.trick_winners([[10, 2, 2, 3], [1, 1, 1, 18]]) == [0, 3]
    assert lean.trick_winners([[9, 9, 9, 9]]) == [None]
    assert lean.trick_winners([]) == []


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**40), st.integers(0, 3), st.integers(0, 35))
def test_lean_finish_deal_agrees_with_engine(seed: int, dealer: int, cut: int) -> None:
    """Play a deal through the engine with hands in list order; stop after ``cut`` cards,
    hand the position to lean.finish_deal, and compare all nine trick winners."""
    rng = random.Random(seed)
    pack = list(ALL_CARDS)
    rng.shuffle(pack)
    hands = [pack[9 * s : 9 * s + 9] for s in range(4)]
    m = make_match(hands, dealer=dealer, deals=1)
    _play_in_list_order(m, stop_after=cut)
    remaining = [_strengths(h) for h in m.hands]
    trick = [STRENGTH[c] for c in m.trick]
    done = [t["winner"] for t in m.tricks]
    leader = m.leader
    lean_winners = lean.finish_deal(remaining, leader, trick, done)
    _play_in_list_order(m)
    engine = _deal_winners_from_record(m)
    assert lean_winners == engine
    assert len(lean_winners) == 9
    assert rules.score_deal(lean_winners).points == m.deals[0]["points"]


@pytest.mark.parametrize("seed", range(200))
def test_lean_random_deal_agrees_with_engine_on_same_cards(seed: int) -> None:
    """random_deal shuffles strengths with the same RNG calls as shuffling the pack, so the
    same seed gives seat s cards pack[9s:9s+9]; the engine, fed those hands, agrees."""
    pack = list(ALL_CARDS)
    random.Random(seed).shuffle(pack)
    hands = [pack[9 * s : 9 * s + 9] for s in range(4)]
    m = make_match(hands, dealer=seed % 4, deals=1, mordienne=seed % 2 == 0)
    _play_in_list_order(m)
    engine = _deal_winners_from_record(m)
    assert lean.random_deal(random.Random(seed)) == engine
    points = lean.random_deal_points(random.Random(seed), mordienne=seed % 2 == 0)
    assert points == m.deals[0]["points"] == m.points


def test_lean_finish_deal_with_no_cards_left() -> None:
    winners: list[int | None] = [0, None, 1, 2, 3, 3, None, 0, 2]
    assert lean.finish_deal([[], [], [], []], 1, [], winners) == winners


def test_lean_finish_deal_mid_trick_uses_played_cards_by_seat() -> None:
    # Leader 3 played 19 (Monsieur), then seat 0 played 1; seats 1 and 2 still to play.
    hands = [[5], [4, 18], [7, 2], [17]]   # seats 0 and 3 played; 1 and 2 have one more card
    # Trick 8 by seat: 1 (seat 0, played), 4, 7, 19 (seat 3, played): seat 3 wins.
    # Trick 9 by seat: 5, 18, 2, 17: seat 1 wins.
    out = lean.finish_deal(hands, 3, [19, 1], [None] * 7)
    assert out == [None] * 7 + [3, 1]
    hands[3] = [20]
    assert lean.finish_deal(hands, 3, [19, 1], [None] * 7)[-1] == 3


@pytest.mark.parametrize(
    ("winners", "points", "mordienne"),
    [
        ([None] * 9, [0, 0], False),
        ([1, None, 3, 1, 2, 2, 2, 2, 2], [2, 0], True),
        ([1, 2, 3, 1, 2, 0, 0, None, 0], [1, 0], False),
        ([0, 2, 3, 1, 1, None, None, None, 0], [0, 1], False),
        ([3] * 9, [0, 2], True),
    ],
)
def test_lean_score_deal_known_sequences(
    winners: list[int | None], points: list[int], mordienne: bool
) -> None:
    s = lean.score_deal(winners)
    assert s.points == points and s.mordienne is mordienne


def test_lean_random_deal_points_distribution_sane() -> None:
    rng = random.Random(42)
    totals = [0, 0]
    zero = two = 0
    for _ in range(3000):
        p = lean.random_deal_points(rng)
        assert p[0] == 0 or p[1] == 0
        assert sum(p) in (0, 1, 2)
        totals[0] += p[0]
        totals[1] += p[1]
        zero += sum(p) == 0
        two += sum(p) == 2
    # Seats are symmetric in a random deal: neither team dominates.
    assert abs(totals[0] - totals[1]) < 0.1 * sum(totals)
    assert two > 0
