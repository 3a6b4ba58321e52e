"""Bots only ever return legal actions, from any reachable state, at every level.

Hypothesis draws seeds and table options (chanter R9 on and off, every signal mode R16,
mordienne R13 on and off); four bots of one level (or a mix) play the deal through the real
engine, which would raise on any illegal action. Signals must be accepted and truthful (R15).
"""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.bots import LEVELS, Budget, choose_action, choose_signals, decide
from server.game import SIGNAL_CARD, ChanterVote, Discard, Match, Options, Play, view

FAST = Budget(steps=300, worlds_cap=4)


def play_out(levels: list[str], seed: int, options: Options) -> Match:
    m, _ = Match.new(options, seed)
    while not m.over:
        for s in range(4):
            v = view(m, s)
            for sig in choose_signals(levels[s], v, random.Random(seed)):
                assert sig.seat == s
                if sig.signal in SIGNAL_CARD:
                    assert SIGNAL_CARD[sig.signal] in v.hand        # R15: truthful
                if sig.signal == "aces":
                    assert sig.n == sum(1 for c in v.hand if c[0] == "1")
                m.apply(sig)
        seat = m.to_act
        assert seat is not None
        v = view(m, seat)
        action = choose_action(levels[seat], v, random.Random(seed * 7 + m.version), FAST)
        assert action.seat == seat
        legal = m.legal_actions(seat)
        if isinstance(action, Discard):
            hand = set(m.hands[seat])
            assert len(set(action.cards)) == 6 and set(action.cards) <= hand
        elif isinstance(action, Play | ChanterVote):
            assert action in legal
        else:  # pragma: no cover - a bot returning a signal as its turn action
            raise AssertionError(action)
        m.apply(action)
    return m


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32),
    levels=st.lists(st.sampled_from(LEVELS), min_size=4, max_size=4),
    chanter=st.booleans(),
    signals=st.sampled_from(("off", "private", "risky")),
    mordienne=st.booleans(),
)
def test_bots_always_play_legal_actions(
    seed: int, levels: list[str], chanter: bool, signals: str, mordienne: bool
) -> None:
    opts = Options(deals=1, chanter=chanter, signals=signals, mordienne=mordienne)  # type: ignore[arg-type]
    m = play_out(levels, seed, opts)
    assert m.over and len(m.deals) == 1


def test_signals_sent_once_per_deal_and_never_when_off() -> None:
    """R15: each signal at most once per deal; R16: none at a table with signals off."""
    m, _ = Match.new(Options(deals=2, signals="private"), 5)
    v = view(m, m.to_act)  # type: ignore[arg-type]
    first = choose_signals("normal", v, random.Random(0))
    assert first, "a bot announces its important cards (or a useless hand)"
    for sig in first:
        m.apply(sig)
    assert choose_signals("normal", view(m, v.viewer), random.Random(0)) == []
    off, _ = Match.new(Options(deals=1, signals="off"), 5)
    for s in range(4):
        assert choose_signals("expert", view(off, s), random.Random(0)) == []
    assert choose_signals("random", v, random.Random(0)) == []


def test_no_action_when_not_to_act() -> None:
    m, _ = Match.new(Options(deals=1), 1)
    other = (m.to_act + 1) % 4  # type: ignore[operator]
    assert decide("normal", view(m, other), random.Random(0)).action is None


def test_chanter_bots_vote_and_discard_legally() -> None:
    """R9: with every seat voting yes the two receivers discard six of their fifteen cards."""
    m, _ = Match.new(Options(deals=1, chanter=True, first_dealer=0), 3)
    while m.phase != "play":
        seat = m.to_act
        assert seat is not None
        action = choose_action("normal", view(m, seat), random.Random(0))
        if isinstance(action, Discard):
            kept = set(m.hands[seat]) - set(action.cards)
            assert len(kept) == 9
        m.apply(action)
    assert all(len(h) == 9 for h in m.hands)
    assert isinstance(choose_action("normal", view(m, m.to_act), random.Random(0)), Play)  # type: ignore[arg-type]


def test_registry() -> None:
    import pytest

    from server.bots import UnknownLevel, get_bot

    assert LEVELS == ("random", "easy", "normal", "expert")
    assert all(get_bot(level).level == level for level in LEVELS)
    with pytest.raises(UnknownLevel):
        get_bot("grandmaster")
    m, _ = Match.new(Options(deals=1), 1)
    other = (m.to_act + 1) % 4  # type: ignore[operator]
    with pytest.raises(ValueError):
        choose_action("normal", view(m, other), random.Random(0))
