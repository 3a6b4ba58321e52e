"""R4-R8: seats, partners, the dealer, the deal, and the partner draw."""

from __future__ import annotations

import random

import pytest
from game_kit import codes_in, random_play
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import DealStarted, HandDealt, PartnerDraw
from server.game import (
    ALL_CARDS,
    Match,
    Options,
    Private,
    chance,
    left_of,
    partner_of,
    rules,
    team_of,
)
from server.game.errors import InvalidOptions
from server.game.seats import SEATS

# ---------------------------------------------------------------- R4, R5


def test_r4_left_of_is_next_clockwise() -> None:
    assert SEATS == (0, 1, 2, 3)
    assert [left_of(s) for s in SEATS] == [1, 2, 3, 0]


def test_r5_partners_opposite_and_teams() -> None:
    assert [partner_of(s) for s in SEATS] == [2, 3, 0, 1]
    assert [team_of(s) for s in SEATS] == [0, 1, 0, 1]
    for s in SEATS:
        assert team_of(partner_of(s)) == team_of(s)
        assert team_of(left_of(s)) != team_of(s)


# ---------------------------------------------------------------- R6


@pytest.mark.parametrize("dealer", [0, 1, 2, 3])
def test_r6_fixed_first_dealer(dealer: int) -> None:
    m, events = Match.new(Options(first_dealer=dealer), seed=123)
    assert m.dealer == dealer
    started = [e for e in events if isinstance(e, DealStarted)]
    assert started == [DealStarted(deal_number=1, dealer=dealer)]
    # R10: the seat left of the dealer leads the first trick.
    assert m.to_act == left_of(dealer) == m.leader


def test_r6_random_first_dealer_comes_from_seed() -> None:
    dealers = {}
    for seed in range(200):
        a, _ = Match.new(Options(), seed)
        b, _ = Match.new(Options(first_dealer="random"), seed)
        assert a.dealer == b.dealer
        dealers[seed] = a.dealer
    assert set(dealers.values()) == {0, 1, 2, 3}
    # Also with string seeds.
    assert Match.new(Options(), "table-7")[0].dealer == Match.new(Options(), "table-7")[0].dealer


@pytest.mark.parametrize("bad", [-1, 4, "0", 1.0, True, None, "north"])
def test_r6_first_dealer_option_validated(bad: object) -> None:
    with pytest.raises(InvalidOptions):
        Options(first_dealer=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("first", [0, 1, 2, 3])
def test_r6_dealer_passes_left_after_each_deal(first: int) -> None:
    m, _ = Match.new(Options(deals=6, first_dealer=first), seed=5)
    dealers = [m.dealer]
    rng = random.Random(1)
    while not m.over:
        number = m.deal_number
        while m.deal_number == number and not m.over:
            random_play(m, rng, max_actions=1)
        if not m.over:
            dealers.append(m.dealer)
            assert m.to_act == left_of(m.dealer)   # R10 in every deal
    assert dealers == [(first + i) % 4 for i in range(6)]
    assert [d["dealer"] for d in m.deals] == dealers


# ---------------------------------------------------------------- R8


@pytest.mark.parametrize("dealer", [0, 1, 2, 3])
@pytest.mark.parametrize("seed", [0, 1, 99])
def test_r8_deal_exact_positions(dealer: int, seed: int) -> None:
    pack = list(ALL_CARDS)
    random.Random(seed).shuffle(pack)
    hands, talon = rules.deal(random.Random(seed), dealer)
    expected: list[list[str]] = [[], [], [], []]
    pos = 0
    for _round in range(3):
        for k in range(1, 5):            # clockwise from the dealer's left, dealer last
            seat = (dealer + k) % 4
            expected[seat] += pack[pos : pos + 3]
            pos += 3
    assert hands == expected
    assert talon == pack[36:]
    # Spot checks written out by hand: the first three cards go to the dealer's left,
    # the dealer receives cards 9-11 of the pack in round one and 33-35 in round three.
    assert hands[left_of(dealer)][:3] == pack[0:3]
    assert hands[dealer][:3] == pack[9:12]
    assert hands[dealer][6:] == pack[33:36]
    assert hands[left_of(dealer)][3:6] == pack[12:15]


def test_r8_nine_each_twelve_talon_all_distinct() -> None:
    for seed in range(100):
        hands, talon = rules.deal(random.Random(seed), seed % 4)
        assert [len(h) for h in hands] == [9, 9, 9, 9]
        assert len(talon) == 12
        everything = [c for h in hands for c in h] + talon
        assert sorted(everything) == sorted(ALL_CARDS)


def test_r8_match_deal_is_the_seeded_deal() -> None:
    m, events = Match.new(Options(first_dealer=2), seed=77)
    hands, talon = rules.deal(rules.deal_rng(77, 1), 2)
    assert m.hands == hands and m.talon == talon and m.play_hands == hands
    dealt = [e for e in events if isinstance(e, Private) and isinstance(e.payload, HandDealt)]
    assert [e.to for e in dealt] == [(0,), (1,), (2,), (3,)]
    for e in dealt:
        assert isinstance(e.payload, HandDealt)
        assert sorted(e.payload.cards) == sorted(hands[e.payload.seat])
    # The talon never appears in any event.
    assert not codes_in(events) & set(talon)


def test_r8_each_deal_reshuffles_from_seed_and_number() -> None:
    assert rules.deal_rng(5, 1).below(2**32) == rules.deal_rng(5, 1).below(2**32)
    assert rules.deal_rng(5, 1).below(2**32) != rules.deal_rng(5, 2).below(2**32)
    assert rules.deal_rng(5, 1).below(2**32) != rules.deal_rng(6, 1).below(2**32)


# ---------------------------------------------------------------- R7


def _expected_draw(seed: int) -> tuple[list[tuple[int, str]], dict[str, int]]:
    """R7 written out independently: turn cards to 0,1,2,3,... skipping finished seats."""
    pack = list(ALL_CARDS)
    random.Random(seed).shuffle(pack)
    turned: list[tuple[int, str]] = []
    holder: dict[str, int] = {}
    cards = iter(pack)
    seat = 0
    while len(holder) < 4:
        if seat in holder.values():
            seat = (seat + 1) % 4
            continue
        card = next(cards)
        turned.append((seat, card))
        if card in rules.TOP_FOUR:
            holder[card] = seat
        seat = (seat + 1) % 4
    return turned, holder


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32))
def test_r7_partner_draw_properties(seed: int) -> None:
    drawn = rules.partner_draw(random.Random(seed))
    turned, holder = _expected_draw(seed)
    assert drawn.cards == turned
    # Every top card was turned once; after receiving one, a seat receives nothing more.
    tops = [(s, c) for s, c in drawn.cards if c in rules.TOP_FOUR]
    assert sorted(c for _, c in tops) == sorted(rules.TOP_FOUR)
    assert sorted(s for s, _ in tops) == [0, 1, 2, 3]
    for i, (s, c) in enumerate(drawn.cards):
        if c in rules.TOP_FOUR:
            assert all(s2 != s for s2, _ in drawn.cards[i + 1 :])
    assert drawn.cards[-1][1] in rules.TOP_FOUR        # the draw stops at the fourth
    # Seats turn clockwise from seat 0, skipping finished seats.
    assert drawn.cards[0][0] == 0
    # Seating is a permutation; Monsieur keeps his seat; Madame sits opposite him.
    seating = drawn.seating
    assert sorted(seating) == [0, 1, 2, 3]
    m, mme, bo, va = (holder[c] for c in ("3o", "3c", "2o", "2c"))
    assert seating[m] == m
    assert seating[mme] == partner_of(m)
    assert partner_of(seating[m]) == seating[mme]
    assert partner_of(seating[bo]) == seating[va]
    # The other two keep their clockwise order counted from Monsieur.
    others = sorted((bo, va), key=lambda s: (s - m) % 4)
    assert [seating[s] for s in others] == [(m + 1) % 4, (m + 3) % 4]
    # Madame's holder deals first.
    assert drawn.first_dealer == seating[mme]


def test_r7_worked_example() -> None:
    """Find a seed whose draw re-seats everyone, and check the move by hand."""
    for seed in range(1000):
        drawn = rules.partner_draw(random.Random(seed))
        _, holder = _expected_draw(seed)
        if holder["3o"] == 2 and holder["3c"] == 3:
            break
    else:
        pytest.fail("no seed with Monsieur at 2 and Madame at 3")
    # Monsieur stays at 2, Madame moves to 0; old 0 then old 1 (clockwise after seat 2)
    # fill seats 3 and 1.
    assert drawn.seating == [3, 1, 2, 0]
    assert drawn.first_dealer == 0


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 11, "x"])
def test_r7_match_runs_draw_and_madame_deals_first(seed: int | str) -> None:
    m, events = Match.new(Options(partner_draw=True, first_dealer=1), seed)
    drawn = rules.partner_draw(chance.draws(chance.CURRENT, seed, "partner_draw"))
    draw = events[0]
    assert isinstance(draw, PartnerDraw)               # public: shown to everyone
    assert draw.cards == [(s, c) for s, c in drawn.cards]
    assert draw.seating == drawn.seating == m.seating
    assert m.draw == [[s, c] for s, c in drawn.cards]
    # R7 overrides first_dealer.
    assert m.dealer == drawn.first_dealer == draw.dealer
    madame_old = next(s for s, c in drawn.cards if c == "3c")
    assert m.dealer == m.seating[madame_old]
    # Same seed, same draw.
    again, _ = Match.new(Options(partner_draw=True), seed)
    assert again.seating == m.seating and again.draw == m.draw


def test_r7_off_keeps_seats() -> None:
    m, events = Match.new(Options(), 3)
    assert m.seating == [0, 1, 2, 3] and m.draw == []
    assert not any(isinstance(e, PartnerDraw) for e in events)
