"""R10-R13a: tricks, spoiled tricks, the deal winner, mordienne; pure rules and scripted deals."""

from __future__ import annotations

import pytest
from game_kit import hands_of, make_match, play_script, play_trick, script_for
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import CardPlayed, DealScored, TrickDone, Turn
from server.game import (
    ALL_CARDS,
    STRENGTH,
    Event,
    Match,
    Phase,
    Play,
    left_of,
    rules,
    team_of,
)
from server.game.rules import score_deal, trick_winner

# ---------------------------------------------------------------- R10


def test_r10_every_card_in_hand_is_legal() -> None:
    m = make_match(dealer=3, seed=21)
    leader = m.to_act
    assert leader == 0
    assert sorted(a.card for a in m.legal_actions(leader)) == sorted(m.hands[leader])
    for s in (1, 2, 3):
        assert m.legal_actions(s) == []
    # The leader plays its weakest card; the next seat may play anything, weakest included.
    weakest = min(m.hands[0], key=STRENGTH.__getitem__)
    m.apply(Play(0, weakest))
    assert sorted(a.card for a in m.legal_actions(1)) == sorted(m.hands[1])
    for card in list(m.hands[1]):
        clone = m.clone()
        clone.apply(Play(1, card))        # no duty to follow suit, beat or trump


def test_r10_left_of_dealer_leads_first_trick() -> None:
    for dealer in range(4):
        m = make_match(dealer=dealer)
        assert m.leader == m.to_act == left_of(dealer)


# ---------------------------------------------------------------- R11, pure


@pytest.mark.parametrize(
    ("leader", "cards", "winner"),
    [
        (0, ["3o", "3c", "2o", "2c"], 0),         # Monsieur wins
        (1, ["3c", "3o", "2o", "2c"], 2),         # Monsieur played second by seat 2
        (3, ["4o", "3b", "5c", "Rb"], 2),         # a Roi played fourth by seat 2
        (2, ["1o", "1e", "Rb", "4c"], None),      # two aces tie at the top: spoiled
        (0, ["1o", "1c", "1b", "1e"], None),      # four equal aces
        (0, ["Ro", "4b", "4c", "4e"], 0),         # a tie below the top does not spoil
        (1, ["3b", "3e", "4o", "4c"], None),      # the top is two fours
        (2, ["3b", "4o", "3e", "5c"], 1),         # 5c, the single top, played by seat 1
        (0, ["9b", "9e", "9o", "Vo"], 2),         # Petit-neuf (14) beats 9b/9e (7)
        (3, ["2e", "1o", "1c", "Ro"], 3),         # Deux d'écrit beats the aces
        (0, ["Cc", "Co", "Vb", "Vc"], None),      # two Cavalières
    ],
)
def test_r11_trick_winner(leader: int, cards: list[str], winner: int | None) -> None:
    assert trick_winner(leader, cards) == winner
    assert rules.next_leader(leader, winner) == (leader if winner is None else winner)


def test_r11_winner_does_not_depend_on_play_order() -> None:
    cards_by_seat = ["Ro", "1b", "4c", "9o"]
    for leader in range(4):
        in_order = [cards_by_seat[(leader + i) % 4] for i in range(4)]
        assert trick_winner(leader, in_order) == 3


# ---------------------------------------------------------------- R11, scripted


def _trick_events(events: list[Event]) -> list[TrickDone]:
    return [e for e in events if isinstance(e, TrickDone)]


def test_r11_winner_leads_next_trick() -> None:
    script = script_for([2, 3, 0, 1, 1, 2, 0, 3, 2])
    m = make_match(hands_of(script), dealer=0)
    events = play_trick(m, script[0])
    done = _trick_events(events)[0]
    assert done.leader == 1 and done.winner == 2
    assert [e.seat for e in events if isinstance(e, CardPlayed)] == [1, 2, 3, 0]
    assert done.cards == [script[0][s] for s in (1, 2, 3, 0)]   # in play order
    assert events[-1] == Turn(seat=2, phase=Phase.PLAY)
    assert m.leader == m.to_act == 2


def test_r11_tie_for_top_spoils_trick_and_same_seat_leads_again() -> None:
    script = script_for([None, None, 1, None, 3, 0, None, 2, None])
    m = make_match(hands_of(script), dealer=3)
    events = play_script(m, script)
    done = _trick_events(events)
    leaders = [t.leader for t in done]
    winners = [t.winner for t in done]
    assert winners == [None, None, 1, None, 3, 0, None, 2, None]
    assert leaders == [0, 0, 0, 1, 1, 3, 0, 0, 2]
    assert len(done) == 9                   # R11: a deal is always nine tricks


def test_r11_two_equal_aces_as_top_tie_spoil_scripted() -> None:
    # Trick 1: seats 0 and 2 play aces, seats 1 and 3 play a Roi and a four: spoiled.
    first = ["1o", "Rb", "1e", "4c"]
    rest = [c for c in ALL_CARDS if c not in first]
    script = [first] + [rest[4 * t : 4 * t + 4] for t in range(8)]
    m = make_match(hands_of(script), dealer=2)
    events = play_trick(m, script[0])
    done = _trick_events(events)[0]
    assert done.winner is None and done.leader == 3
    assert m.to_act == 3 and m.leader == 3


# ---------------------------------------------------------------- R12-R13a, pure


def test_r12_all_spoiled_nobody_scores() -> None:
    s = score_deal([None] * 9)
    assert s.winner is None and s.points == [0, 0] and not s.mordienne
    assert s.trick_counts == [0, 0, 0, 0]


def test_r12_tie_for_most_tricks_goes_to_who_reached_m_first() -> None:
    # Seats 0 and 1 both win two; seat 0 won its first trick earlier, but seat 1 won its
    # second (its M-th) at trick 5, before seat 0's second at trick 9.
    s = score_deal([0, 2, 3, 1, 1, None, None, None, 0])
    assert s.trick_counts == [2, 2, 1, 1]
    assert s.winner == 1 and s.points == [0, 1] and not s.mordienne


def test_r12_partners_never_pooled() -> None:
    # Seats 0 and 2 win 3 + 2 = 5, seat 1 alone wins 4: seat 1 is the deal winner.
    s = score_deal([0, 1, 2, 1, 0, 2, 1, 0, 1])
    assert s.trick_counts == [3, 4, 2, 0]
    assert s.winner == 1 and s.points == [0, 1]


@pytest.mark.parametrize(
    ("winners", "deal_winner", "mordienne"),
    [
        # R13 example: first four to others or spoiled, one seat wins the last five.
        ([1, None, 3, 1, 2, 2, 2, 2, 2], 2, True),
        # The shortest mordienne: seven spoiled, then two in a row.
        ([None] * 7 + [3, 3], 3, True),
        ([1, 1, 2, 2, 3, None, 0, 0, 0], 0, True),
        # Broken: the winner also won an earlier trick (trick 2).
        ([1, 2, 3, 1, 2, 2, 2, 2, 2], 2, False),
        ([2, 1, 3, None, 2, 2, 2, 2, 2], 2, False),
        # Broken: a spoiled trick inside the final run (tricks 6, 7, 9 with 8 spoiled).
        ([1, 2, 3, 1, 2, 0, 0, None, 0], 0, False),
        # Broken: the last trick is spoiled.
        ([1, 2, 3, None, 0, 0, 0, 0, None], 0, False),
        # Broken: only the last trick (k = 1).
        ([None] * 8 + [2], 2, False),
        # The seat with the final run is not the deal winner.
        ([1, 1, 1, None, None, None, None, 3, 3], 1, False),
        # Tie for most: the final run reaches M last, so it never wins the tie.
        ([0, 0, None, None, None, None, None, 3, 3], 0, False),
        # R13a: a sweep of nine.
        ([1] * 9, 1, True),
        # Eight in a row after a spoiled first trick.
        ([None] + [0] * 8, 0, True),
    ],
)
def test_r13_mordienne_cases(
    winners: list[int | None], deal_winner: int, mordienne: bool
) -> None:
    s = score_deal(winners)
    assert s.winner == deal_winner
    assert s.mordienne is mordienne
    points = [0, 0]
    points[team_of(deal_winner)] = 2 if mordienne else 1
    assert s.points == points
    # R13 option off: the same deal always scores 1.
    off = score_deal(winners, mordienne_on=False)
    assert off.winner == deal_winner and not off.mordienne
    assert sum(off.points) == 1 and off.points[team_of(deal_winner)] == 1


def _deal_outcome_as_written(winners: list[int | None], mordienne_on: bool
                             ) -> tuple[int | None, int, list[int]]:
    """R12, R13, R13a spelled out trick by trick, as the rule book words them."""
    counts = [0, 0, 0, 0]
    reached_at = [0, 0, 0, 0]           # the trick at which each seat won its latest trick
    for i, w in enumerate(winners):
        if w is not None:
            counts[w] += 1
            reached_at[w] = i
    most = max(counts)
    if most == 0:
        return None, 0, counts
    # R12: of the seats with the most tricks, the one that reached that many first.
    winner = min((s for s in range(4) if counts[s] == most), key=lambda s: reached_at[s])
    # R13/R13a: its tricks are the last `most` of the nine, in a row, and at least two.
    tail = winners[len(winners) - most:]
    mordienne = (mordienne_on and most >= 2 and len(winners) == 9
                 and all(w == winner for w in tail))
    return winner, 2 if mordienne else 1, counts


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from([None, 0, 1, 2, 3]), min_size=9, max_size=9),
       st.booleans())
def test_r12_r13_deal_outcome_matches_the_rule_as_written(
    winners: list[int | None], mordienne_on: bool
) -> None:
    """R12, R13, R13a: the scorer's counted shortcut (the bots' search calls it once per
    playout) decides every deal as the trick-by-trick wording does, ties for the most
    tricks included."""
    assert rules.deal_outcome(winners, mordienne_on) == _deal_outcome_as_written(
        winners, mordienne_on)


def test_r13a_sweep_scores_two() -> None:
    for seat in range(4):
        s = score_deal([seat] * 9)
        assert s.trick_counts[seat] == 9 and s.mordienne and sum(s.points) == 2
        assert s.points[team_of(seat)] == 2


def test_r14_match_result() -> None:
    assert rules.match_result([3, 2]) == "team0"
    assert rules.match_result([1, 4]) == "team1"
    assert rules.match_result([2, 2]) == "draw"
    assert rules.match_result([0, 0]) == "draw"


# ---------------------------------------------------------------- R12-R13a, scripted deals


def _play_deal(
    outcomes: list[int | None], dealer: int = 0, **options: object
) -> tuple[Match, DealScored]:
    script = script_for(outcomes)
    m = make_match(hands_of(script), dealer=dealer, deals=1, **options)
    events = play_script(m, script)
    assert [t.winner for t in _trick_events(events)] == outcomes
    scored = [e for e in events if isinstance(e, DealScored)]
    assert len(scored) == 1
    assert m.over and m.phase is Phase.MATCH_OVER
    return m, scored[0]


def test_r12_scripted_all_spoiled() -> None:
    m, scored = _play_deal([None] * 9, dealer=1)
    assert scored.winner is None and scored.points == [0, 0]
    assert scored.trick_counts == [0, 0, 0, 0] and m.points == [0, 0]
    assert m.result == "draw"


def test_r12_scripted_tie_broken_by_reaching_m_first() -> None:
    m, scored = _play_deal([0, 2, 3, 1, 1, None, None, None, 0], dealer=2)
    assert scored.winner == 1 and scored.trick_counts == [2, 2, 1, 1]
    assert m.points == [0, 1] and m.result == "team1"


def test_r12_scripted_partners_not_pooled() -> None:
    m, scored = _play_deal([0, 1, 2, 1, 0, 2, 1, 0, 1], dealer=3)
    assert scored.trick_counts == [3, 4, 2, 0]
    assert scored.winner == 1 and m.points == [0, 1] and m.result == "team1"


@pytest.mark.parametrize("dealer", [0, 3])
def test_r13_scripted_mordienne_scores_two(dealer: int) -> None:
    m, scored = _play_deal([1, None, 3, 1, 2, 2, 2, 2, 2], dealer=dealer)
    assert scored.mordienne is True and scored.winner == 2
    assert m.points == [2, 0]
    assert m.deals[0]["mordienne"] is True


@pytest.mark.parametrize(
    "outcomes",
    [
        [1, 2, 3, 1, 2, 2, 2, 2, 2],          # won an earlier trick
        [1, 2, 3, 1, 2, 0, 0, None, 0],       # spoiled trick inside the final run
        [1, 2, 3, None, 0, 0, 0, 0, None],    # spoiled last trick
        [None] * 8 + [2],                     # only the last trick
    ],
)
def test_r13_scripted_mordienne_broken(outcomes: list[int | None]) -> None:
    m, scored = _play_deal(outcomes)
    assert scored.mordienne is False
    assert sum(m.points) == 1


def test_r13_scripted_option_off_scores_one() -> None:
    m, scored = _play_deal([1, None, 3, 1, 2, 2, 2, 2, 2], mordienne=False)
    assert scored.mordienne is False and m.points == [1, 0]


def test_r13a_scripted_sweep() -> None:
    m, scored = _play_deal([3] * 9, dealer=2)
    assert scored.trick_counts == [0, 0, 0, 9]
    assert scored.mordienne is True and m.points == [0, 2]
    m, scored = _play_deal([3] * 9, dealer=2, mordienne=False)
    assert m.points == [0, 1]


def test_r12_deal_record_keeps_hands_and_tricks_in_play_order() -> None:
    outcomes: list[int | None] = [2, None, 0, 1, 3, 3, None, 2, 0]
    script = script_for(outcomes)
    m = make_match(hands_of(script), dealer=1, deals=1)
    events = play_script(m, script)
    record = m.deals[0]
    assert record["hands"] == hands_of(script)
    assert record["tricks"] == [t.cards for t in _trick_events(events)]
    leader = 2
    for trick, cards in zip(script, record["tricks"], strict=True):
        assert cards == [trick[(leader + i) % 4] for i in range(4)]
        leader = rules.next_leader(leader, trick_winner(leader, cards))
