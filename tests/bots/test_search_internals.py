"""The expert's building blocks: the view-derived knowledge, world sampling, the inlined
playout and the fast scorer, each checked against the engine's own rules."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.bots.expert import greedy, playout, team_value
from server.bots.knowledge import ACES, Knowledge, read_view
from server.bots.sampling import WorldSampler, sample_world
from server.bots.v1.sampling import sample_world as v1_sample_world
from server.game import ALL_CARDS, STRENGTH, Match, Options, Signal, view
from server.game.rules import score_deal


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([None, 0, 1, 2, 3]), min_size=9, max_size=9),
       st.booleans())
def test_team_value_matches_score_deal(winners: list[int | None], mordienne: bool) -> None:
    """R12, R13, R13a exactly as rules.score_deal scores them."""
    pts = score_deal(winners, mordienne).points
    assert team_value(winners, 0, mordienne) == pts[0] - pts[1]
    assert team_value(winners, 1, mordienne) == pts[1] - pts[0]


def _reference_playout(hands: list[list[int]], leader: int, trick: list[int],
                       winners: list[int | None], lowest_seat: int = -1) -> list[int | None]:
    """Greedy for every seat, but ``lowest_seat`` (if any) always plays its lowest card."""
    while len(winners) < 9:
        while len(trick) < 4:
            seat = (leader + len(trick)) % 4
            idx = 0 if seat == lowest_seat else greedy(hands, seat, leader, trick)
            trick.append(hands[seat].pop(idx))
        top = max(trick)
        if trick.count(top) == 1:
            leader = (leader + trick.index(top)) % 4
            winners.append(leader)
        else:
            winners.append(None)
        trick = []
    return winners


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32), st.integers(0, 3), st.integers(0, 3))
def test_inlined_playout_agrees_with_greedy(seed: int, leader: int, done: int) -> None:
    rng = random.Random(seed)
    pack = [STRENGTH[c] for c in STRENGTH]
    rng.shuffle(pack)
    hands = [sorted(pack[i * 9 : i * 9 + 9]) for i in range(4)]
    trick = []
    for i in range(done):
        seat = (leader + i) % 4
        trick.append(hands[seat].pop(rng.randrange(9)))
    a = playout([list(h) for h in hands], leader, list(trick), [])
    b = _reference_playout([list(h) for h in hands], leader, list(trick), [])
    assert a == b and len(a) == 9


def _deal(seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    pack = [STRENGTH[c] for c in STRENGTH]
    rng.shuffle(pack)
    return [sorted(pack[i * 9 : i * 9 + 9]) for i in range(4)]


def test_noisy_playout_is_seeded_and_leaves_the_greedy_line() -> None:
    """ROLLOUT_NOISE: a noisy playout is a pure function of its rng's seed (a table can
    replay its bots), still plays nine legal tricks (R11), and with noise really departs
    from the greedy line: with noise 1 every card is random, so over seeded deals the
    winners differ from the greedy playout's in most of them."""
    differ = 0
    for seed in range(40):
        hands = _deal(seed)
        greedy_line = playout([list(h) for h in hands], seed % 4, [], [])
        a = playout([list(h) for h in hands], seed % 4, [], [], 1.0, random.Random(seed))
        b = playout([list(h) for h in hands], seed % 4, [], [], 1.0, random.Random(seed))
        assert a == b and len(a) == 9
        differ += a != greedy_line
        quiet = playout([list(h) for h in hands], seed % 4, [], [], 0.0, random.Random(seed))
        assert quiet == greedy_line
    assert differ >= 30


def test_the_same_draws_give_the_same_rollout_whatever_the_rng() -> None:
    """Common random numbers: with ``draws`` the rollout's luck is the draws, one per card,
    not the rng's state, so every candidate of a world meets the same luck; with noise the
    draws do change the line."""
    lines = set()
    for seed in range(20):
        hands = _deal(seed)
        draws = [random.Random(seed).random() for _ in range(36)]
        a = playout([list(h) for h in hands], 0, [], [], 0.5, random.Random(1), draws)
        b = playout([list(h) for h in hands], 0, [], [], 0.5, random.Random(2), draws)
        c = playout([list(h) for h in hands], 0, [], [], 0.5, None, list(draws))
        assert a == b == c and len(a) == 9
        other = [random.Random(seed + 100).random() for _ in range(36)]
        lines.add(a == playout([list(h) for h in hands], 0, [], [], 0.5, None, other))
    assert False in lines


def test_the_partner_is_noisier_than_the_rest() -> None:
    """PARTNER_NOISE: only ``partner_seat`` plays with ``partner_noise``. With the others'
    noise 0 and the partner's 1, draws of 0 make the partner play its lowest card every
    time while the three others keep the greedy line."""
    differ = 0
    for seed in range(30):
        hands = _deal(seed)
        partner = seed % 4
        zeros = [0.0] * 36
        got = playout([list(h) for h in hands], 0, [], [], 0.0, None, zeros, partner, 1.0)
        assert got == _reference_playout([list(h) for h in hands], 0, [], [], partner)
        differ += got != playout([list(h) for h in hands], 0, [], [])
    assert differ >= 10


def test_noisy_playout_needs_an_rng() -> None:
    with pytest.raises(ValueError, match="rng"):
        playout([list(h) for h in _deal(1)], 0, [], [], 0.5)


def test_sampled_worlds_respect_view_and_signals() -> None:
    """Worlds give each other seat exactly its hand size of unseen cards, never a card the
    viewer holds or has seen played, and honour the partner's signals (R15)."""
    m, _ = Match.new(Options(deals=1, first_dealer=3, signals="private"), 9)
    partner_hand = m.hands[2]
    sent = [c for c in ("3o", "3c", "2o", "2c", "9c", "9o", "2b", "2e") if c in partner_hand]
    names = {"3o": "monsieur", "3c": "madame", "2o": "borgne", "2c": "vache",
             "9c": "grand_neuf", "9o": "petit_neuf", "2b": "deux_de_chene",
             "2e": "deux_d_ecrit"}
    for c in sent:
        m.apply(Signal(2, names[c]))
    aces = sum(1 for c in partner_hand if c[0] == "1")
    if aces:
        m.apply(Signal(2, "aces", aces))
    elif not sent:
        m.apply(Signal(2, "useless_hand"))
    v = view(m, 0)
    k = read_view(v)
    rng = random.Random(0)
    for _ in range(200):
        world = sample_world(k, rng)
        assert world is not None
        assert world[0] == v.hand
        seen = set(v.hand)
        for s in (1, 2, 3):
            assert len(world[s]) == v.hand_sizes[s]
            assert not set(world[s]) & seen
            seen |= set(world[s])
        assert set(sent) <= set(world[2])
        majeures_given = {c for c in world[2] if c in names}
        assert majeures_given == set(sent)          # a complete signaller holds no other
        assert sum(1 for c in world[2] if c[0] == "1") == aces


def test_monsieur_signal_places_monsieur() -> None:
    """Partner said "monsieur" (R15): every sampled world puts 3o in the partner's hand."""
    for seed in range(50):
        m, _ = Match.new(Options(deals=1, first_dealer=3), seed)
        if "3o" in m.hands[1]:
            break
    m.apply(Signal(1, "monsieur"))
    k = read_view(view(m, 3))
    assert k.must_have[1] == {"3o"}
    rng = random.Random(1)
    assert all("3o" in sample_world(k, rng)[1] for _ in range(50))  # type: ignore[index]


@st.composite
def _knowledge(draw: st.DrawFn) -> Knowledge:
    """What a seat may know, including signals that contradict each other or the hand
    sizes (a human may send false ones, R16): the sampler must then give up the same way."""
    seat = draw(st.integers(0, 3))
    cards = draw(st.permutations(ALL_CARDS))
    hand_n = draw(st.integers(1, 9))
    hand = list(cards[:hand_n])
    unseen = [c for c in ALL_CARDS if c in set(cards[hand_n:])]
    sizes = [draw(st.integers(max(0, hand_n - 1), hand_n)) for _ in range(4)]
    sizes[seat] = hand_n
    others = [s for s in range(4) if s != seat]
    pick = st.sets(st.sampled_from(unseen), max_size=4)
    return Knowledge(
        seat, hand, [], unseen, sizes,
        must_have={s: draw(pick) for s in others if draw(st.booleans())},
        forbidden={s: draw(st.sets(st.sampled_from(unseen), max_size=12))
                   for s in others if draw(st.booleans())},
        aces_exact={s: draw(st.integers(0, 3)) for s in others if draw(st.booleans())},
    )


@settings(max_examples=300, deadline=None)
@given(_knowledge(), st.integers(0, 2**32))
def test_prepared_sampler_deals_what_the_one_shot_routine_dealt(k: Knowledge, seed: int) -> None:
    """The sampler that sorts out a view's constraints once (for speed) deals the very
    worlds the routine it replaced dealt, drawing the same random numbers (frozen copy in
    server/bots/v1/sampling.py), so a seeded search plays the same cards; the constraints
    are honoured (R15) whenever the routine finds a world."""
    sampler = WorldSampler(k)
    mine, theirs = random.Random(seed), random.Random(seed)
    for _ in range(5):
        world = sampler.sample(mine)
        assert world == v1_sample_world(k, theirs)  # type: ignore[arg-type]
        assert mine.getstate() == theirs.getstate()
        if world is None:
            continue
        for s, cards in k.must_have.items():
            assert cards <= set(world[s])
        for s, cards in k.forbidden.items():
            # A signal's card, or an ace a count placed, wins over a contradicting ban.
            banned = {c for c in cards if c not in ACES or s not in k.aces_exact}
            assert not banned & set(world[s]) - k.must_have.get(s, set())


def test_the_forced_last_trick_is_scored_as_if_it_were_played() -> None:
    """R10-R11: the shortcut that scores the ninth trick from the last four cards gives the
    winners the full loop gives: a rollout fed the same numbers as its draws (shortcut) and
    from its rng (no shortcut, since skipping plays would move the rng) plays the same deal,
    whoever leads and however many cards of the trick are already down."""
    for seed in range(60):
        hands = _deal(seed)
        numbers = [random.Random(seed).random() for _ in range(36)]
        for leader in range(4):
            a = playout([list(h) for h in hands], leader, [], [], 0.5, None, list(numbers))
            b = playout([list(h) for h in hands], leader, [], [], 0.5,
                        _Replay(numbers), None)
            assert a == b and len(a) == 9


class _Replay(random.Random):
    """An rng whose random() returns the given numbers in order."""

    def __init__(self, numbers: list[float]) -> None:
        super().__init__(0)
        self._numbers = iter(numbers)

    def random(self) -> float:
        return next(self._numbers)
