"""R14, R14a (match length and result) and the error tree: refused actions change nothing."""

from __future__ import annotations

import pytest
from game_kit import hands_of, make_match, play_script, script_for

from protocol import DealScored, MatchOver
from server.game import (
    BadDiscard,
    CardNotInHand,
    ChanterVote,
    Discard,
    Event,
    InvalidAction,
    InvalidOptions,
    Match,
    MatchIsOver,
    NotYourTurn,
    Options,
    Phase,
    Play,
    RuleError,
    Signal,
    SignalsOff,
    UnknownCard,
    WrongPhase,
    action_from_dict,
)


def _play_scripted_deal(m: Match, outcomes: list[int | None]) -> list[Event]:
    """Replace the current deal's hands with a script giving ``outcomes``, and play it."""
    script = script_for(outcomes)
    m.hands = hands_of(script)
    m.play_hands = hands_of(script)
    return play_script(m, script)


TEAM0_MORDIENNE: list[int | None] = [None] * 7 + [0, 0]
TEAM0_ONE: list[int | None] = [2] + [None] * 8
TEAM1_ONE: list[int | None] = [3] + [None] * 8
NOBODY: list[int | None] = [None] * 9

# ---------------------------------------------------------------- R14


def test_r14_every_deal_is_played_no_early_stop() -> None:
    m = make_match(dealer=0, deals=3)
    _play_scripted_deal(m, TEAM0_MORDIENNE)
    _play_scripted_deal(m, TEAM0_MORDIENNE)
    # Team 1 can no longer catch up, but the third deal is still played.
    assert not m.over and m.deal_number == 3 and m.points == [4, 0]
    events = _play_scripted_deal(m, TEAM1_ONE)
    assert m.over and m.points == [4, 1] and m.result == "team0"
    assert events[-1] == MatchOver(points=[4, 1], result="team0", record={})
    assert len(m.deals) == 3


def test_r14_default_is_five_deals_first_dealer_deals_twice() -> None:
    assert Options().deals == 5
    m = make_match(dealer=2)
    for _ in range(5):
        _play_scripted_deal(m, NOBODY)
    assert m.over and [d["dealer"] for d in m.deals] == [2, 3, 0, 1, 2]


@pytest.mark.parametrize(
    ("deals", "result", "points"),
    [
        ([TEAM0_ONE, TEAM1_ONE, TEAM0_ONE], "team0", [2, 1]),
        ([TEAM1_ONE, TEAM0_MORDIENNE, TEAM1_ONE], "draw", [2, 2]),
        ([TEAM1_ONE, NOBODY, TEAM0_ONE], "draw", [1, 1]),
        ([NOBODY, NOBODY, NOBODY], "draw", [0, 0]),
        ([TEAM0_ONE, TEAM1_ONE, TEAM1_ONE], "team1", [1, 2]),
    ],
)
def test_r14_result(deals: list[list[int | None]], result: str, points: list[int]) -> None:
    m = make_match(dealer=1, deals=3)
    for i, outcomes in enumerate(deals):
        assert m.result is None
        events = _play_scripted_deal(m, outcomes)
        scored = next(e for e in events if isinstance(e, DealScored))
        assert scored.deal_number == i + 1
        assert scored.totals == m.points
    assert m.over and m.result == result and m.points == points
    assert m.to_act is None and m.phase is Phase.MATCH_OVER
    assert all(m.legal_actions(s) == [] for s in range(4))


# ---------------------------------------------------------------- R14a


def test_r14a_target_points_ends_when_a_team_reaches_it() -> None:
    m = make_match(dealer=0, deals=5, target_points=3)
    _play_scripted_deal(m, TEAM0_MORDIENNE)
    assert not m.over and m.points == [2, 0]
    _play_scripted_deal(m, TEAM1_ONE)
    assert not m.over
    _play_scripted_deal(m, TEAM0_ONE)
    assert m.over and m.points == [3, 1] and m.result == "team0"
    assert len(m.deals) == 3


def test_r14a_target_points_ignores_deal_count() -> None:
    m = make_match(dealer=0, deals=1, target_points=1)
    for _ in range(6):                 # spoiled deals score nothing: keep dealing
        _play_scripted_deal(m, NOBODY)
        assert not m.over
    assert m.deal_number == 7
    _play_scripted_deal(m, TEAM1_ONE)
    assert m.over and m.result == "team1" and m.points == [0, 1]


def test_r14a_overshoot_by_mordienne() -> None:
    m = make_match(dealer=0, target_points=1)
    _play_scripted_deal(m, TEAM0_MORDIENNE)
    assert m.over and m.points == [2, 0]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"deals": 0}, {"deals": 51}, {"deals": "5"}, {"deals": True}, {"target_points": 0},
        {"target_points": 2.0}, {"mordienne": 1}, {"chanter": "yes"}, {"partner_draw": None},
        {"signals": "public"}, {"signal_risk": 1.5}, {"signal_risk": -0.1},
        {"signal_risk": True}, {"signal_risk": "0.5"},
    ],
)
def test_options_outside_rules_are_refused(kwargs: dict) -> None:
    with pytest.raises(InvalidOptions):
        Options(**kwargs)


def test_options_round_trip_and_ignore_unknown_keys() -> None:
    o = Options(deals=3, target_points=4, chanter=True, signals="risky", signal_risk=0.5)
    assert Options.from_dict(o.to_dict()) == o
    assert Options.from_dict({**o.to_dict(), "future": 1}) == o
    assert Options.from_dict(None) == Options()


# ---------------------------------------------------------------- errors


def _refused(m: Match, action: object, error: type[RuleError], code: str) -> RuleError:
    before = m.to_dict()
    with pytest.raises(error) as err:
        m.apply(action)  # type: ignore[arg-type]
    assert type(err.value) is error
    assert err.value.code == code
    assert err.value.message and str(err.value) == err.value.message
    assert m.to_dict() == before, "a refused action changed the state"
    return err.value


def test_errors_in_play_phase_change_nothing() -> None:
    m = make_match(dealer=3, seed=13)
    assert m.to_act == 0
    own = m.hands[0][0]
    other = m.hands[1][0]
    talon = m.talon[0]
    _refused(m, Play(1, other), NotYourTurn, "not_your_turn")
    _refused(m, Play(2, m.hands[2][0]), NotYourTurn, "not_your_turn")
    _refused(m, Play(0, other), CardNotInHand, "card_not_in_hand")
    _refused(m, Play(0, talon), CardNotInHand, "card_not_in_hand")
    for bad in ("3O", "10o", "", "xx", "3o ", None, 3):
        _refused(m, Play(0, bad), UnknownCard, "unknown_card")  # type: ignore[arg-type]
    _refused(m, ChanterVote(0, True), WrongPhase, "wrong_phase")
    _refused(m, Discard(0, tuple(m.hands[0][:6])), WrongPhase, "wrong_phase")
    _refused(m, Play(4, own), InvalidAction, "invalid_field")
    _refused(m, Play(-1, own), InvalidAction, "invalid_field")
    _refused(m, "play 3o", InvalidAction, "invalid_field")
    # Mid-trick the same checks hold.
    m.apply(Play(0, own))
    _refused(m, Play(0, m.hands[0][0]), NotYourTurn, "not_your_turn")
    _refused(m, Play(1, own), CardNotInHand, "card_not_in_hand")   # already played


def test_r2_malformed_card_values_are_rule_errors_not_crashes() -> None:
    """R2: anything that is not one of the 48 codes is refused as an unknown card, even
    values that are not strings (a decoded frame may hold a list or a dict)."""
    m = make_match(dealer=3)
    for bad in (["3o"], {"card": "3o"}, ("3", "o")):
        _refused(m, Play(0, bad), UnknownCard, "unknown_card")  # type: ignore[arg-type]
    action = action_from_dict({"type": "play", "seat": 0, "card": ["3o"]})
    _refused(m, action, UnknownCard, "unknown_card")


def test_r9_malformed_discards_are_rule_errors_not_crashes() -> None:
    m, _ = Match.new(Options(chanter=True, first_dealer=3), 2)
    for seat in (0, 1, 2, 3):
        m.apply(ChanterVote(seat, True))
    hand = m.hands[0]
    _refused(m, Discard(0, 5), BadDiscard, "bad_discard")  # type: ignore[arg-type]
    _refused(m, Discard(0, None), BadDiscard, "bad_discard")  # type: ignore[arg-type]
    _refused(m, Discard(0, (*hand[:5], ["3o"])), UnknownCard, "unknown_card")  # type: ignore[arg-type]
    action = action_from_dict({"type": "discard", "seat": 0, "cards": [*hand[:5], {"x": 1}]})
    _refused(m, action, UnknownCard, "unknown_card")


def test_errors_after_match_over_change_nothing() -> None:
    m = make_match(dealer=0, deals=1)
    _play_scripted_deal(m, TEAM0_ONE)
    assert m.over
    for action in (Play(0, "3o"), ChanterVote(1, True), Discard(1, ()), Signal(0, "monsieur"),
                   Play(7, "zz")):
        _refused(m, action, MatchIsOver, "match_over")


def test_error_codes_are_distinct_and_rule_errors() -> None:
    classes = [NotYourTurn, CardNotInHand, UnknownCard, WrongPhase, MatchIsOver, SignalsOff,
               BadDiscard]
    assert all(issubclass(c, RuleError) for c in [*classes, InvalidAction])
    codes = [c.code for c in classes]
    assert len(set(codes)) == len(codes)
    assert InvalidAction.code == "invalid_field"


def test_refused_action_does_not_bump_version_and_accepted_does() -> None:
    m = make_match(dealer=3)
    v = m.version
    with pytest.raises(NotYourTurn):
        m.apply(Play(2, m.hands[2][0]))
    assert m.version == v
    m.apply(Play(0, m.hands[0][0]))
    assert m.version == v + 1


# ---------------------------------------------------------------- actions' plain-data form


@pytest.mark.parametrize(
    "action",
    [Play(2, "3o"), ChanterVote(1, False), Discard(0, ("1o", "1c", "1b", "1e", "Ro", "Rc")),
     Signal(3, "aces", 2), Signal(0, "madame")],
)
def test_actions_round_trip(action: object) -> None:
    assert action_from_dict(action.to_dict()) == action  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "data",
    [{}, {"type": "play"}, {"type": "play", "seat": 0}, {"type": "dance", "seat": 0},
     {"type": "play", "seat": 4, "card": "3o"}, {"type": "play", "seat": "0", "card": "3o"},
     {"type": "discard", "seat": 0, "cards": 5}, {"type": "signal", "seat": True}],
)
def test_malformed_actions_are_invalid(data: dict) -> None:
    with pytest.raises(InvalidAction):
        action_from_dict(data)
