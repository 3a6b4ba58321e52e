"""R15-R16: partner signals: the vocabulary, who receives them, and who never does."""

from __future__ import annotations

import random

import msgspec
import pytest
from game_kit import random_play

from protocol import SignalInfo, SignalReceived, SignalSent
from protocol.views import SignalSent as ViewSignalSent
from server.game import (
    SIGNAL_CARD,
    SIGNALS,
    ChanterVote,
    Event,
    InvalidAction,
    Match,
    Options,
    Play,
    Private,
    Signal,
    SignalsOff,
    spectator_view,
    view,
)


def _match(signals: str = "private", risk: float = 0.25, seed: int = 1, **kw: object) -> Match:
    m, _ = Match.new(Options(signals=signals, signal_risk=risk, first_dealer=3, **kw), seed)  # type: ignore[arg-type]
    return m


def _private(event: Event) -> Private:
    """A signal is only ever sent to some seats (R16)."""
    assert isinstance(event, Private)
    return event


def test_r15_vocabulary() -> None:
    assert set(SIGNALS) == {
        "monsieur", "madame", "borgne", "vache", "grand_neuf", "petit_neuf", "deux_de_chene",
        "deux_d_ecrit", "aces", "useless_hand", "going_mordienne",
    }
    assert SIGNAL_CARD == {
        "monsieur": "3o", "madame": "3c", "borgne": "2o", "vache": "2c", "grand_neuf": "9c",
        "petit_neuf": "9o", "deux_de_chene": "2b", "deux_d_ecrit": "2e",
    }


def test_r16_signals_off_refused_and_nothing_changes() -> None:
    m = _match("off")
    before = m.to_dict()
    with pytest.raises(SignalsOff) as err:
        m.apply(Signal(0, "monsieur"))
    assert err.value.code == "signals_off"
    assert m.to_dict() == before


@pytest.mark.parametrize("sender", [0, 1, 2, 3])
def test_r16_private_only_partner_receives(sender: int) -> None:
    m = _match("private")
    events = m.apply(Signal(sender, "useless_hand"))
    partner = (sender + 2) % 4
    # R16: the partner gets the signal; the sender hears back only what it sent.
    assert events == [
        Private(SignalReceived(from_seat=sender, signal="useless_hand", n=None), (partner,)),
        Private(SignalSent(signal="useless_hand", n=None), (sender,))]
    for s in range(4):
        got = view(m, s).signals
        if s == partner:
            assert got == [SignalInfo(from_seat=sender, signal="useless_hand", n=None)]
        else:
            assert got == []
    assert view(m, sender).signals_sent == [ViewSignalSent(signal="useless_hand", n=None)]
    assert spectator_view(m).signals == []


@pytest.mark.parametrize("sender", [0, 1, 2, 3])
def test_r16_risky_certain_notice_reaches_both_opponents(sender: int) -> None:
    m = _match("risky", risk=1)
    events = m.apply(Signal(sender, "aces", 3))
    assert isinstance(events[0], Private)
    assert events[0].to == tuple(sorted((sender + k) % 4 for k in (1, 2, 3)))
    for s in range(4):
        seen = view(m, s).signals
        assert seen == ([] if s == sender else [SignalInfo(from_seat=sender, signal="aces", n=3)])
    assert spectator_view(m).signals == []


def test_r16_risky_zero_risk_reaches_only_partner() -> None:
    m = _match("risky", risk=0)
    for i in range(50):
        events = m.apply(Signal(i % 4, "madame"))
        assert isinstance(events[0], Private) and events[0].to == ((i % 4 + 2) % 4,)


def test_r16_risky_notice_is_drawn_from_seed_deterministically() -> None:
    def run(seed: int) -> list[tuple[int, ...]]:
        m = _match("risky", risk=0.25, seed=seed)
        return [_private(m.apply(Signal(i % 4, "vache"))[0]).to for i in range(400)]

    a, b = run(9), run(9)
    assert a == b
    assert run(10) != a
    # Each opponent notices independently with probability 0.25 (400 x 2 draws).
    noticed = sum(len(to) - 1 for to in a)
    assert 120 < noticed < 280
    assert any(len(to) == 3 for to in a) and any(len(to) == 1 for to in a)
    for i, to in enumerate(a):
        assert (i % 4 + 2) % 4 in to and i % 4 not in to


def test_r16_sender_view_does_not_reveal_who_noticed() -> None:
    """The sender's (and partner's) view is the same whether or not opponents noticed."""
    views = {}
    for risk in (0, 1):
        m = _match("risky", risk=risk, seed=4)
        m.apply(Signal(1, "going_mordienne"))
        m.apply(Signal(3, "aces", 1))
        views[risk] = (view(m, 1), view(m, 3))
        for v in views[risk]:
            for entry in [*v.signals, *v.signals_sent]:
                assert "to" not in msgspec.structs.asdict(entry)
    assert views[0][0].signals_sent == [ViewSignalSent(signal="going_mordienne", n=None)]
    # Options differ (signal_risk), everything else is identical.
    for a, b in zip(views[0], views[1], strict=True):
        assert a.options != b.options
        assert msgspec.structs.replace(a, options=b.options) == b


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_r15_aces_with_n(n: int) -> None:
    m = _match()
    assert _private(m.apply(Signal(0, "aces", n))[0]).payload == SignalReceived(
        from_seat=0, signal="aces", n=n)


@pytest.mark.parametrize(
    "signal",
    [Signal(0, "aces"), Signal(0, "aces", 0), Signal(0, "aces", 5), Signal(0, "aces", -1),
     Signal(0, "aces", True), Signal(0, "aces", "2"), Signal(0, "aces", 2.0),
     Signal(0, "monsieur", 1), Signal(0, "useless_hand", 0), Signal(0, "wink"),
     Signal(0, "Monsieur"), Signal(0, ""), Signal(5, "madame"), Signal(-1, "madame")],  # type: ignore[arg-type]
)
def test_r15_bad_signals_are_invalid_and_change_nothing(signal: Signal) -> None:
    m = _match()
    before = m.to_dict()
    with pytest.raises(InvalidAction) as err:
        m.apply(signal)
    assert err.value.code == "invalid_field"
    assert m.to_dict() == before


@pytest.mark.parametrize("name", [s for s in SIGNALS if s != "aces"])
def test_r15_other_signals_take_no_n(name: str) -> None:
    m = _match()
    assert m.apply(Signal(2, name))[0] == Private(
        SignalReceived(from_seat=2, signal=name, n=None), (0,))  # type: ignore[arg-type]


def test_r15_signals_at_any_time_out_of_turn_and_in_chanter_vote() -> None:
    m = _match(chanter=True)
    assert m.to_act == 0
    before_turn = m.to_act
    m.apply(Signal(2, "monsieur"))            # not seat 2's turn, chanter vote phase
    assert m.to_act == before_turn
    m.apply(ChanterVote(0, False))
    m.apply(Signal(1, "borgne"))
    m.apply(Play(0, m.hands[0][0]))
    m.apply(Signal(3, "grand_neuf"))          # mid-trick
    assert m.to_act == 1
    assert [s["from_seat"] for s in m.signals] == [2, 1, 3]


def test_r15_signals_are_not_checked_for_truth() -> None:
    m = _match()
    liar = next(s for s in range(4) if "3o" not in m.hands[s])
    m.apply(Signal(liar, "monsieur"))
    assert view(m, (liar + 2) % 4).signals[0].signal == "monsieur"


def test_r16_signals_in_view_belong_to_the_current_deal() -> None:
    m = _match(deals=2)
    m.apply(Signal(0, "vache"))
    assert len(view(m, 2).signals) == 1
    rng = random.Random(0)
    while m.deal_number == 1:
        random_play(m, rng, max_actions=1)
    assert view(m, 2).signals == [] and view(m, 0).signals_sent == []
    assert m.signals[0]["deal"] == 1       # still kept in the state


def test_r16_spectators_never_receive_signals_in_a_whole_match() -> None:
    m = _match("risky", risk=1, deals=2)
    rng = random.Random(3)
    while not m.over:
        m.apply(Signal(rng.randrange(4), rng.choice(["madame", "useless_hand"])))
        assert spectator_view(m).signals == []
        random_play(m, rng, max_actions=1)
    assert len(m.signals) > 50
