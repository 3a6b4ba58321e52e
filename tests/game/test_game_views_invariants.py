"""Views (docs/ARCHITECTURE.md convention 4) and invariants over thousands of seeded random deals.

Hidden cards must never reach a viewer that may not see them: another seat's unplayed
cards, the talon, another seat's discards (R8, R9). Random play checks R10-R14 hold in
every deal, and that the state serializes, replays and clones exactly.
"""

from __future__ import annotations

import json
import random
from typing import Any

import msgspec
import pytest
from game_kit import codes_in, make_match, random_play
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import protocol
from server.game import (
    ALL_CARDS,
    SIGNALS,
    Discard,
    Event,
    Match,
    Options,
    Phase,
    Play,
    Private,
    Signal,
    StateFormatError,
    action_from_dict,
    rules,
    sort_by_strength,
    spectator_view,
    team_of,
    view,
)

options_strategy = st.builds(
    Options,
    deals=st.integers(1, 2),
    mordienne=st.booleans(),
    chanter=st.booleans(),
    partner_draw=st.booleans(),
    first_dealer=st.sampled_from([0, 1, 2, 3, "random"]),
    signals=st.sampled_from(["off", "private", "risky"]),
    signal_risk=st.sampled_from([0.0, 0.25, 1.0]),
)

PUBLIC_WITH_CARDS = (protocol.CardPlayed, protocol.TrickDone, protocol.PartnerDraw)


# ---------------------------------------------------------------- helpers


def _played(m: Match) -> set[str]:
    return {c for t in m.tricks for c in t["cards"]} | set(m.trick)


def _check_cards_in_one_place(m: Match) -> None:
    """A card is never in two places: hands + played + talon + discards = the 48."""
    if m.over:
        return
    everything = [c for h in m.hands for c in h]
    everything += [c for t in m.tricks for c in t["cards"]] + list(m.trick)
    everything += list(m.talon) + [c for d in m.discards for c in d]
    assert len(everything) == 48
    assert set(everything) == set(ALL_CARDS)


def _check_views(m: Match) -> None:
    played = _played(m)
    talon = set(m.talon)
    for seat in range(4):
        v = view(m, seat)
        assert v.viewer == seat
        assert v.hand == sort_by_strength(m.hands[seat])
        assert v.discarded == m.discards[seat]
        seen = codes_in(msgspec.structs.replace(v, draw=[]))
        own = set(m.hands[seat]) | set(m.discards[seat])
        assert seen <= own | played
        hidden = talon - own
        for other in range(4):
            if other != seat:
                hidden |= set(m.hands[other]) | set(m.discards[other])
        assert not seen & hidden
    spect = spectator_view(m)
    assert spect.viewer is None and spect.hand == [] and spect.signals == []
    assert spect.discarded == [] and spect.signals_sent == []
    assert codes_in(msgspec.structs.replace(spect, draw=[])) <= played


def _check_events(m: Match, events: list[Event]) -> None:
    for e in events:
        payload = e.payload if isinstance(e, Private) else e
        # What the engine emits is exactly what the wire carries: it survives the client's
        # validating decoder unchanged (a bad field would be our bug, sent to a client).
        frame = protocol.encode(protocol.Event(table="t", seq=1, event=payload))
        assert protocol.decode_server(frame).event == payload, e  # type: ignore[union-attr]
        cards = codes_in(payload)
        if isinstance(e, Private):
            for r in e.to:
                assert cards <= set(m.hands[r]), e
            if not isinstance(payload, protocol.SignalReceived):
                assert len(e.to) == 1
        elif not isinstance(payload, PUBLIC_WITH_CARDS):
            assert not cards, e


def _check_deal_scored(m: Match, e: protocol.DealScored) -> None:
    deal = m.deals[e.deal_number - 1]
    assert len(deal["tricks"]) == 9                              # R11
    assert all(len(h) == 9 for h in deal["hands"])
    played = [c for t in deal["tricks"] for c in t]
    assert sorted(played) == sorted(c for h in deal["hands"] for c in h)
    assert len(set(played)) == 36
    # Re-derive every trick from the record (R10, R11) and the score (R12, R13).
    leader = (deal["dealer"] + 1) % 4
    winners: list[int | None] = []
    for cards in deal["tricks"]:
        for i, c in enumerate(cards):
            assert c in deal["hands"][(leader + i) % 4]
        w = rules.trick_winner(leader, cards)
        winners.append(w)
        leader = rules.next_leader(leader, w)
    counts = e.trick_counts
    assert counts == [winners.count(s) for s in range(4)]
    assert sum(counts) + winners.count(None) == 9
    points = e.points
    assert points[0] == 0 or points[1] == 0                     # at most one team scores
    assert sum(points) in (0, 1, 2)
    if e.winner is None:
        assert counts == [0, 0, 0, 0] and points == [0, 0]
    else:
        assert counts[e.winner] == max(counts) > 0
        assert points[team_of(e.winner)] == (2 if e.mordienne else 1)
    assert rules.score_deal(winners, m.options.mordienne) == rules.DealScore(
        counts, e.winner, points, e.mordienne
    )


def _random_action(m: Match, rng: random.Random) -> Any:
    """Mostly turn actions; now and then a signal from any seat (R15: any time)."""
    if m.options.signals != "off" and rng.random() < 0.05:
        name = rng.choice(SIGNALS)
        return Signal(rng.randrange(4), name, rng.randint(1, 4) if name == "aces" else None)
    seat = m.to_act
    assert seat is not None
    if m.phase is Phase.CHANTER_DISCARD:
        # A uniform pick among the C(15, 6) legal discards, without listing all 5005.
        return Discard(seat, tuple(rng.sample(m.hands[seat], 6)))
    return rng.choice(m.legal_actions(seat))


def _run(options: Options, seed: int, play_seed: int, check_views: bool) -> tuple[Match, list]:
    m, events = Match.new(options, seed)
    _check_events(m, events)
    rng = random.Random(play_seed)
    log: list[Any] = []
    deals_scored = 0
    while not m.over:
        action = _random_action(m, rng)
        events = m.apply(action)
        log.append(action)
        _check_cards_in_one_place(m)
        _check_events(m, events)
        if check_views:
            _check_views(m)
        for e in events:
            if isinstance(e, protocol.DealScored):
                deals_scored += 1
                _check_deal_scored(m, e)
    assert deals_scored == len(m.deals) == options.deals             # R14
    assert m.points == [sum(d["points"][t] for d in m.deals) for t in (0, 1)]
    assert m.result == rules.match_result(m.points)
    return m, log


# ---------------------------------------------------------------- property tests


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(options_strategy, st.integers(0, 2**40), st.integers(0, 2**40))
def test_r10_r14_invariants_over_random_deals(options: Options, seed: int, play: int) -> None:
    """Thousands of deals: nine tricks, counts + spoiled = 9, at most one team scores 0-2,
    every card in exactly one place, every event shown only to those who may see it."""
    _run(options, seed, play, check_views=False)


def test_r10_r14_invariants_over_2000_seeded_deals() -> None:
    """The same checks over a fixed, seeded sweep: 500 matches of 4 deals each."""
    for seed in range(500):
        options = Options(deals=4, chanter=seed % 5 == 0, mordienne=seed % 7 != 0,
                          partner_draw=seed % 3 == 0, signals="risky")
        _run(options, seed, seed * 7919, check_views=False)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(options_strategy, st.integers(0, 2**40), st.integers(0, 2**40))
def test_views_never_leak_hidden_cards(options: Options, seed: int, play: int) -> None:
    """After every action, no seat's view holds another seat's unplayed cards, the talon or
    another seat's discards; a spectator's view holds only played cards and no signals."""
    _run(options, seed, play, check_views=True)


@settings(max_examples=150, deadline=None)
@given(options_strategy, st.integers(0, 2**40), st.integers(0, 2**40), st.integers(0, 120))
def test_serialization_round_trip_continues_identically(
    options: Options, seed: int, play: int, cut: int
) -> None:
    m, _ = Match.new(options, seed)
    rng = random.Random(play)
    log = random_play(m, rng, max_actions=cut)
    data = json.loads(json.dumps(m.to_dict()))
    restored = Match.from_dict(data)
    assert restored.to_dict() == m.to_dict()
    twin = m.clone()
    assert twin.to_dict() == m.to_dict()
    # Continue all three with the same actions: they stay identical.
    tail: list[Any] = []
    while not m.over:
        seat = m.to_act
        assert seat is not None
        action = rng.choice(m.legal_actions(seat))
        events = m.apply(action)
        assert restored.apply(action) == events
        assert twin.apply(action) == events
        tail.append(action)
    assert restored.to_dict() == m.to_dict() == twin.to_dict()
    # Same seed + same actions -> same match.
    fresh, _ = Match.new(options, seed)
    for action in log + tail:
        fresh.apply(action)
    assert fresh.to_dict() == m.to_dict()
    # Actions survive their plain-data form too.
    again, _ = Match.new(options, seed)
    for action in log + tail:
        again.apply(action_from_dict(json.loads(json.dumps(action.to_dict()))))
    assert again.to_dict() == m.to_dict()


@settings(max_examples=100, deadline=None)
@given(options_strategy, st.integers(0, 2**40), st.integers(0, 2**40), st.integers(0, 120))
def test_a_match_that_takes_its_data_leaves_it_as_given(
    options: Options, seed: int, play: int, cut: int
) -> None:
    """A process adopts a heard document's match without a copy (issue 32: the replica's
    ``from_dict(copy_data=False)``) and changes it only through clones, as the server
    does (``Table.execute``, ``delta.apply``): the document stays as it was heard, and the
    match plays on as a copied one would."""
    m, _ = Match.new(options, seed)
    rng = random.Random(play)
    random_play(m, rng, max_actions=cut)
    data = json.loads(json.dumps(m.to_dict()))
    heard = json.loads(json.dumps(data))
    live = Match.from_dict(data, copy_data=False)
    assert live.to_dict() == m.to_dict()
    while not live.over:
        seat = live.to_act
        assert seat is not None
        action = rng.choice(live.legal_actions(seat))
        after = live.clone()
        assert after.apply(action) == m.apply(action)
        live = after
    assert data == heard
    assert live.to_dict() == m.to_dict()


# ---------------------------------------------------------------- scripted view checks


def test_views_own_hand_only_and_spectator_empty() -> None:
    m = make_match(dealer=0, seed=12)
    for seat in range(4):
        v = view(m, seat)
        assert sorted(v.hand) == sorted(m.hands[seat])
        assert v.hand_sizes == [9, 9, 9, 9]
        for other in range(4):
            if other != seat:
                assert not set(v.hand) & set(m.hands[other])
    assert spectator_view(m).hand == []
    assert codes_in(spectator_view(m)) == set()


def test_views_show_the_trick_in_progress_with_seats() -> None:
    m = make_match(dealer=0, seed=12)
    c1, c2 = m.hands[1][0], m.hands[2][0]
    m.apply(Play(1, c1))
    m.apply(Play(2, c2))
    for v in [spectator_view(m)] + [view(m, s) for s in range(4)]:
        assert v.trick == [(1, c1), (2, c2)]
        assert v.leader == 1 and v.to_act == 3
        assert v.hand_sizes == [9, 8, 8, 9]
    assert c1 not in view(m, 1).hand


@pytest.mark.parametrize("bad", [-1, 4, None, "0", 1.0, True])
def test_view_of_a_non_seat_is_refused(bad: object) -> None:
    m = make_match()
    with pytest.raises(ValueError):
        view(m, bad)  # type: ignore[arg-type]


def test_partner_draw_is_public_in_every_view() -> None:
    m, _ = Match.new(Options(partner_draw=True), 5)
    assert m.draw
    for v in [spectator_view(m)] + [view(m, s) for s in range(4)]:
        assert v.draw == [(s, c) for s, c in m.draw]


def test_clone_is_independent() -> None:
    m = make_match(dealer=3, seed=2)
    twin = m.clone()
    twin.apply(Play(0, twin.hands[0][0]))
    assert m.version == 0 and len(m.hands[0]) == 9 and m.trick == []
    assert twin.version == 1


def test_from_dict_refuses_other_formats_and_corrupt_state() -> None:
    m = make_match()
    data = m.to_dict()
    with pytest.raises(StateFormatError):
        Match.from_dict({**data, "format": 2})
    broken = dict(data)
    del broken["hands"]
    with pytest.raises(StateFormatError):
        Match.from_dict(broken)
    with pytest.raises(StateFormatError):
        Match.from_dict({**data, "phase": "dancing"})


def test_match_over_state_round_trips() -> None:
    m, _ = Match.new(Options(deals=1), 3)
    random_play(m, random.Random(0))
    restored = Match.from_dict(json.loads(json.dumps(m.to_dict())))
    assert restored.over and restored.phase is Phase.MATCH_OVER
    assert restored.result == m.result
