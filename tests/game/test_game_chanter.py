"""R9: the chanter option: a unanimous vote, the talon dealt alternately, six discards each."""

from __future__ import annotations

import pytest
from game_kit import codes_in

from protocol import ChanterDiscarded, ChanterResult, ChanterVoted, TalonDealt, Turn
from server.game import (
    BadDiscard,
    CardNotInHand,
    ChanterVote,
    Discard,
    Event,
    InvalidAction,
    Match,
    NotYourTurn,
    Options,
    Phase,
    Play,
    Private,
    UnknownCard,
    WrongPhase,
    left_of,
    spectator_view,
    view,
)


def _chanter_match(dealer: int = 1, seed: int = 4) -> Match:
    m, events = Match.new(Options(chanter=True, first_dealer=dealer), seed)
    assert m.phase is Phase.CHANTER_VOTE
    assert m.to_act == left_of(dealer)
    assert events[-1] == Turn(seat=left_of(dealer), phase=Phase.CHANTER_VOTE)
    return m


def _vote_all_yes(m: Match) -> list[Event]:
    events: list[Event] = []
    for k in range(1, 5):
        seat = (m.dealer + k) % 4
        assert m.to_act == seat
        events += m.apply(ChanterVote(seat, True))
    return events


@pytest.mark.parametrize("dealer", [0, 1, 2, 3])
def test_r9_unanimity_deals_talon_alternately_then_discards(dealer: int) -> None:
    m = _chanter_match(dealer)
    first = left_of(dealer)
    dealt = [list(h) for h in m.hands]
    talon = list(m.talon)
    assert len(talon) == 12
    events = _vote_all_yes(m)
    # Votes in order from the dealer's left, the dealer last.
    votes = [e.seat for e in events if isinstance(e, ChanterVoted)]
    assert votes == [(dealer + k) % 4 for k in range(1, 5)]
    assert ChanterResult(accepted=True) in events
    # talon[0] to the dealer's left, talon[1] to the dealer, and so on, six each.
    assert m.hands[first] == dealt[first] + talon[0::2]
    assert m.hands[dealer] == dealt[dealer] + talon[1::2]
    assert talon[0] in m.hands[first] and talon[1] in m.hands[dealer]
    assert talon[10] in m.hands[first] and talon[11] in m.hands[dealer]
    for s in range(4):
        if s not in (first, dealer):
            assert m.hands[s] == dealt[s]
    assert m.talon == []
    talon_events = [e for e in events if isinstance(e, Private)
                    and isinstance(e.payload, TalonDealt)]
    assert talon_events == [
        Private(TalonDealt(seat=first, cards=talon[0::2]), (first,)),
        Private(TalonDealt(seat=dealer, cards=talon[1::2]), (dealer,)),
    ]
    # Discard phase: left of the dealer first, then the dealer.
    assert m.phase is Phase.CHANTER_DISCARD and m.to_act == first
    legal = m.legal_actions(first)
    assert len(legal) == 5005 and all(isinstance(a, Discard) for a in legal)  # C(15, 6)
    with pytest.raises(NotYourTurn):
        m.apply(Discard(dealer, tuple(m.hands[dealer][:6])))
    # The first discards the six talon cards it received; the dealer six of its own.
    d1 = tuple(talon[0::2])
    ev1 = m.apply(Discard(first, d1))
    assert ev1 == [
        ChanterDiscarded(seat=first),
        Turn(seat=dealer, phase=Phase.CHANTER_DISCARD),
    ]
    d2 = tuple(dealt[dealer][:6])
    ev2 = m.apply(Discard(dealer, d2))
    assert ev2[0] == ChanterDiscarded(seat=dealer)
    assert ev2[-1] == Turn(seat=first, phase=Phase.PLAY)
    assert m.phase is Phase.PLAY and m.to_act == first == m.leader
    assert [len(h) for h in m.hands] == [9, 9, 9, 9]
    assert m.hands[first] == dealt[first]
    assert m.hands[dealer] == dealt[dealer][6:] + talon[1::2]
    assert m.discards[first] == list(d1) and m.discards[dealer] == list(d2)
    assert m.play_hands == m.hands
    everything = [c for h in m.hands for c in h] + [c for d in m.discards for c in d]
    assert len(set(everything)) == 48


def test_r9_discard_may_mix_talon_and_dealt_cards() -> None:
    m = _chanter_match(dealer=3)
    _vote_all_yes(m)
    first = 0
    hand = m.hands[first]
    mix = (hand[0], hand[1], hand[2], hand[-1], hand[-2], hand[-3])
    m.apply(Discard(first, mix))
    assert sorted(m.discards[first]) == sorted(mix)
    assert not set(mix) & set(m.hands[first])


@pytest.mark.parametrize("refuser_offset", [1, 2, 3, 4])
def test_r9_any_refusal_plays_hands_as_dealt(refuser_offset: int) -> None:
    dealer = 2
    m = _chanter_match(dealer)
    dealt = [list(h) for h in m.hands]
    talon = list(m.talon)
    events: list[Event] = []
    for k in range(1, refuser_offset):
        events += m.apply(ChanterVote((dealer + k) % 4, True))
    refuser = (dealer + refuser_offset) % 4
    events += m.apply(ChanterVote(refuser, False))
    assert ChanterResult(accepted=False) in events
    assert not any(isinstance(e, Private) and isinstance(e.payload, TalonDealt)
                   for e in events)
    assert m.phase is Phase.PLAY
    assert m.to_act == left_of(dealer) == m.leader
    assert m.hands == dealt and m.play_hands == dealt and m.talon == talon
    assert m.votes[refuser] is False
    # Later seats never voted.
    for k in range(refuser_offset + 1, 5):
        assert m.votes[(dealer + k) % 4] is None
    # Voting now is the wrong phase.
    with pytest.raises(WrongPhase):
        m.apply(ChanterVote(m.to_act, True))


def test_r9_votes_must_come_in_order() -> None:
    m = _chanter_match(dealer=0)
    for seat in (0, 2, 3):
        before = m.to_dict()
        with pytest.raises(NotYourTurn) as err:
            m.apply(ChanterVote(seat, True))
        assert err.value.code == "not_your_turn"
        assert m.to_dict() == before
    before = m.to_dict()
    with pytest.raises(InvalidAction):
        m.apply(ChanterVote(1, "yes"))  # type: ignore[arg-type]
    assert m.to_dict() == before
    assert m.legal_actions(1) == [ChanterVote(1, True), ChanterVote(1, False)]
    assert m.legal_actions(2) == []


def test_r9_wrong_phase_during_vote_and_discard() -> None:
    m = _chanter_match(dealer=0)
    before = m.to_dict()
    with pytest.raises(WrongPhase) as err:
        m.apply(Play(1, m.hands[1][0]))
    assert err.value.code == "wrong_phase"
    with pytest.raises(WrongPhase):
        m.apply(Discard(1, tuple(m.hands[1][:6])))
    assert m.to_dict() == before
    _vote_all_yes(m)
    before = m.to_dict()
    with pytest.raises(WrongPhase):
        m.apply(Play(1, m.hands[1][0]))
    with pytest.raises(WrongPhase):
        m.apply(ChanterVote(1, True))
    assert m.to_dict() == before


def _bad_discards(m: Match, seat: int) -> list[tuple[type[Exception], tuple[str, ...]]]:
    hand = m.hands[seat]
    other = next(c for s in range(4) if s != seat for c in m.hands[s])
    return [
        (BadDiscard, tuple(hand[:5])),
        (BadDiscard, tuple(hand[:7])),
        (BadDiscard, ()),
        (BadDiscard, (hand[0],) * 6),
        (BadDiscard, (hand[0], hand[0], hand[1], hand[2], hand[3], hand[4])),
        (CardNotInHand, (*hand[:5], other)),
        (UnknownCard, (*hand[:5], "3O")),
        (UnknownCard, (*hand[:5], "10o")),
    ]


def test_r9_bad_discards_raise_and_change_nothing() -> None:
    m = _chanter_match(dealer=0)
    _vote_all_yes(m)
    for seat in (1, 0):
        for error, cards in _bad_discards(m, seat):
            before = m.to_dict()
            with pytest.raises(error) as err:
                m.apply(Discard(seat, cards))
            assert err.value.code == error.code
            assert m.to_dict() == before, (error, cards)
        m.apply(Discard(seat, tuple(m.hands[seat][:6])))
    assert m.phase is Phase.PLAY
    assert BadDiscard.code == "bad_discard"


def test_r9_nobody_else_sees_talon_or_discards() -> None:
    m = _chanter_match(dealer=2)
    first, dealer = 3, 2
    talon = list(m.talon)

    def check() -> None:
        spect = codes_in(spectator_view(m))
        assert not spect & set(talon)
        for s in range(4):
            seen = codes_in(view(m, s))
            # Everything a seat sees is its own hand or its own discards (nothing played yet).
            assert seen == set(m.hands[s]) | set(m.discards[s]), s
            assert not seen & (set(talon) - set(m.hands[s]) - set(m.discards[s]))
        assert not spect

    check()
    _vote_all_yes(m)
    check()
    m.apply(Discard(first, tuple(m.hands[first][-6:])))
    check()
    assert view(m, first).discarded == m.discards[first]
    assert view(m, dealer).discarded == []
    m.apply(Discard(dealer, tuple(m.hands[dealer][:6])))
    check()
    # Public views show only that the discards happened: hand sizes and votes.
    assert spectator_view(m).hand_sizes == [9, 9, 9, 9]
    assert spectator_view(m).chanter_votes == [True, True, True, True]


def test_r9_chanter_in_every_deal_and_record_has_played_hands() -> None:
    m, _ = Match.new(Options(chanter=True, deals=2, first_dealer=0), 8)
    for _deal in range(2):
        _vote_all_yes(m)
        for seat in (left_of(m.dealer), m.dealer):
            m.apply(Discard(seat, tuple(m.hands[seat][:6])))
        held = [list(h) for h in m.hands]
        while m.phase is Phase.PLAY and m.hands[m.to_act]:
            seat = m.to_act
            m.apply(Play(seat, m.hands[seat][0]))
            if m.deals and len(m.deals) == _deal + 1:
                break
        assert m.deals[_deal]["hands"] == held
        assert all(len(h) == 9 for h in m.deals[_deal]["hands"])
    assert m.over
