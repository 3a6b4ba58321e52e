"""Signals chosen for what they tell the partner (issue 12, item 3; R13, R15, R16).

Positions are built through the engine (tests/bots/conftest.py); the bots see only views.
All eight cartes majeures and the four aces are dealt, so the talon (R8) holds nothing
strong and "sure winners" are decided by the hands alone.
"""

from __future__ import annotations

import random

import pytest

from server.bots import choose_signals
from server.bots.inference import PlayModel, relax_for_risky
from server.bots.knowledge import read_view
from server.bots.sampling import sample_world
from server.bots.signalling import chosen_signals, mordienne_plan, sure_winners
from server.game import Match, Play, Signal, view

from .conftest import fill, scripted

# Seat 0 holds Monsieur and Madame (nothing it cannot see is as strong) and Deux d'écrit
# (beaten by five cards it cannot see); seat 2, its partner, Le Borgne and two aces.
HANDS = fill([["3o", "3c", "2e", "1o"], ["2c", "9c", "1c"], ["2o", "1b", "1e"], ["9o", "2b"]])


def _names(sigs: list[Signal]) -> set[tuple[str, int | None]]:
    return {(s.signal, s.n) for s in sigs}


def _signals(m: Match, seat: int) -> set[tuple[str, int | None]]:
    sigs = chosen_signals(view(m, seat))
    assert all(s.seat == seat for s in sigs)
    return _names(sigs)


def test_sure_winners_are_the_cards_nothing_unseen_can_beat_or_tie() -> None:
    """R3, R11: Monsieur and Madame stand above every card seat 0 cannot see (Le Borgne is
    the strongest of those); Deux d'écrit does not."""
    m = scripted(HANDS, [])
    assert sure_winners(view(m, 0)) == ["3o", "3c"]
    assert sure_winners(view(m, 2)) == []          # Monsieur and Madame are out there


def test_private_opening_tells_the_partner_everything() -> None:
    """R16 private: only the partner hears, so the whole opening goes out (R15)."""
    m = scripted(HANDS, [], signals="private")
    assert _signals(m, 0) == {("monsieur", None), ("madame", None), ("deux_d_ecrit", None),
                              ("aces", 1)}
    assert _signals(m, 2) == {("borgne", None), ("aces", 2)}


@pytest.mark.parametrize(("risk", "sent"), [
    (0.25, {("monsieur", None), ("madame", None), ("deux_d_ecrit", None), ("aces", 1)}),
    (0.5, {("monsieur", None), ("madame", None)}),
    (0.9, {("monsieur", None), ("madame", None)}),
    (1.0, set()),
])
def test_risky_opening_weighs_what_the_opponents_may_notice(
        risk: float, sent: set[tuple[str, int | None]]) -> None:
    """R16 risky: each opponent notices with probability r. A card an opponent can beat or
    spoil, or an ace count, goes out while 2r < 1 (the partner gains more than both
    opponents together); a sure winner, which an opponent can only avoid, while r < 1."""
    m = scripted(HANDS, [], signals="risky", signal_risk=risk)
    assert _signals(m, 0) == sent


def test_no_signal_when_off_and_the_opening_only_once() -> None:
    """R16 off: nothing. Otherwise the opening goes out before the seat's first card and is
    not repeated (the view's signals_sent), nor sent after that card."""
    assert _signals(scripted(HANDS, [], signals="off"), 0) == set()
    m = scripted(HANDS, [], signals="private")
    for sig in chosen_signals(view(m, 0)):
        m.apply(sig)
    assert _signals(m, 0) == set()
    m = scripted(HANDS, ["4o"], signals="private")  # seat 0 has played: no opening now
    assert _signals(m, 0) == set()


# Seat 0 holds the three strongest cards: if it loses or spoils the first six tricks and
# nobody else takes three of them, its last three tricks are a mordienne (R13).
PLANNER = fill([["3o", "3c", "2o"], ["2c", "9c", "1c"], ["9o", "2b", "1b"], ["2e", "1o", "1e"]])


def test_going_mordienne_with_enough_sure_winners() -> None:
    """R13: three sure winners outnumber what any other seat gets from six tricks split
    evenly (two), so seat 0 announces the plan; two would not (seven tricks: three)."""
    m = scripted(PLANNER, [], signals="private")
    assert mordienne_plan(view(m, 0))
    assert ("going_mordienne", None) in _signals(m, 0)
    two = fill([["3o", "3c", "9b"], ["2c", "9c", "1c"], ["9o", "2b", "2o"], ["2e", "1o", "1e"]])
    assert not mordienne_plan(view(scripted(two, [], signals="private"), 0))


def test_no_mordienne_plan_when_off_or_after_a_trick_won() -> None:
    """R13: not with mordienne off; and a seat that has won a trick cannot make one."""
    assert not mordienne_plan(view(scripted(PLANNER, [], mordienne=False), 0))
    m = scripted(PLANNER, ["3o", "2c", "9o", "2e"], signals="private")  # seat 0 wins
    v = view(m, 0)
    assert v.tricks[-1].winner == 0
    assert not mordienne_plan(v)


def test_going_mordienne_places_the_strongest_cards_with_the_sender() -> None:
    """R15 private: a partner's going_mordienne tells the partner the two strongest cards it
    cannot see are in the sender's hand while the sender has won no trick; every sampled
    world honours it."""
    m = scripted(PLANNER, [], signals="private")
    m.apply(Signal(0, "going_mordienne"))
    k = read_view(view(m, 2))
    assert k.must_have[0] == {"3o", "3c"}
    rng = random.Random(3)
    for _ in range(50):
        world = sample_world(k, rng)
        assert world is not None and {"3o", "3c"} <= set(world[0])
    # The sender wins a trick: the plan is over and so is what it said about the cards.
    m.apply(Play(0, "2o"))
    for card in ("2c", "9o", "2e"):
        m.apply(Play(m.to_act, card))
    assert not read_view(view(m, 2)).must_have.get(0)


def test_risky_going_mordienne_is_weighed_not_trusted() -> None:
    """R16 risky: a noticed going_mordienne may be a bluff, so the cards it places are a
    weight on the worlds (as for a card signal), not a constraint."""
    m = scripted(PLANNER, [], signals="risky", signal_risk=0.2)
    m.apply(Signal(0, "going_mordienne"))
    v = view(m, 2)
    k = read_view(v)
    assert not relax_for_risky(k, v).must_have
    weighed = {(s, c) for s, c, _agree, _disagree in PlayModel(v, k, softness=1.0).signals}
    assert weighed == {(0, "3o"), (0, "3c")}


def test_bots_send_what_the_policy_chooses() -> None:
    """The table levels signal through this module (server.bots.choose_signals)."""
    m = scripted(PLANNER, [], signals="private")
    for level in ("easy", "normal", "expert"):
        assert _names(choose_signals(level, view(m, 0), random.Random(0))) == _signals(m, 0)
