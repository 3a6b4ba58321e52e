"""The client's table model replays the wire events into exactly the engine's view.

For seeded random matches (with and without chanter, partner draw and risky signals), every
seat's model, fed only the events that seat receives (nothing at all of others' hands and
signals), equals ``server.game.view`` after every action. That is what lets the network
bot hand the model's view to ``server.bots.choose_action``.
"""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest

import protocol
from client_cli.model import TableModel
from protocol import EventPayload, SeatInfo, TableInfo, TableOptions, TableView
from server.game import ChanterVote, Discard, Event, Match, Options, Play, Private, Signal, view
from server.game.views import spectator_view
from server.table.state import ENGINE_OPTIONS


def wire(event: Event) -> EventPayload:
    """An engine event as a client receives it: its payload (the audience stays on the
    server), encoded and decoded as the wire does."""
    payload = event.payload if isinstance(event, Private) else event
    frame = protocol.encode(protocol.Event(table="t", seq=1, event=payload))
    decoded = protocol.decode_server(frame)
    assert isinstance(decoded, protocol.Event) and decoded.event is not None
    assert not isinstance(decoded.event, protocol.UnknownEvent)
    return decoded.event


def sees(event: Event, seat: int | None) -> bool:
    """Whether ``seat`` (None: a spectator) receives ``event``."""
    return not isinstance(event, Private) or (seat is not None and seat in event.to)


def snapshot(match: Match, seat: int | None) -> EventPayload:
    v = view(match, seat) if seat is not None else spectator_view(match)
    return wire(protocol.Snapshot(view=v))


def _rules_only(v: TableView) -> TableView:
    """A view with only the options that change the rules (the server's own options, such
    as the bots' delay, are the lobby's business, not the engine's)."""
    return msgspec.structs.replace(v, options=TableOptions(
        **{k: getattr(v.options, k) for k in ENGINE_OPTIONS}))


def expected(match: Match, seat: int | None) -> TableView:
    return _rules_only(view(match, seat) if seat is not None else spectator_view(match))


def model_view(model: TableModel, seat: int | None) -> TableView:
    assert model.view is not None and model.view.viewer == seat
    return _rules_only(model.view)


def random_action(match: Match, seat: int, rng: random.Random) -> Any:
    return rng.choice(match.legal_actions(seat))


@pytest.mark.parametrize("seed", range(12))
def test_models_follow_the_engine_view(seed: int) -> None:
    rng = random.Random(seed)
    options = Options(deals=2, chanter=seed % 2 == 0, partner_draw=seed % 3 == 0,
                      signals="risky" if seed % 4 else "private", signal_risk=0.5)
    match, opening = Match.new(options, seed)
    viewers: list[int | None] = [0, 1, 2, 3, None]
    # Each viewer joins after the opening events: it starts from a snapshot (seq = N).
    models = {s: TableModel("t", seat=s) for s in viewers}
    if seed % 2:
        # Joined after the start: each viewer begins with a snapshot.
        for s, m in models.items():
            m.apply(snapshot(match, s))
    else:
        # Seated before the start: the lobby info, then the opening events (no snapshot).
        info = TableInfo(table="t", options=TableOptions(
            deals=2, chanter=options.chanter, partner_draw=options.partner_draw,
            signals=options.signals, signal_risk=0.5, bot_delay_ms=0),
            seats=[SeatInfo(kind="bot")] * 4, status="playing")
        for m in models.values():
            m.apply(protocol.TableChanged(table=info))
            for event in opening:
                # R7: the partner draw moves players; the model follows its own player.
                if sees(event, m.seat):
                    m.apply(wire(event))
    for m in models.values():
        assert model_view(m, m.seat) == expected(match, m.seat)
    models = {m.seat: m for m in models.values()}
    while not match.over:
        seat = match.to_act
        assert seat is not None
        if rng.random() < 0.15 and match.phase == "play":
            action: Any = Signal(seat, rng.choice(["monsieur", "useless_hand"]))
        else:
            action = random_action(match, seat, rng)
        if isinstance(action, Discard):
            models[seat].pending_discard = list(action.cards)
        events = match.apply(action)
        for event in events:
            for s, m in models.items():
                if sees(event, s):
                    m.apply(wire(event))
        for s, m in models.items():
            assert model_view(m, s) == expected(match, s), (s, action)
    for m in models.values():
        assert m.view is not None and m.view.result == match.result


def test_the_turn_is_only_what_the_server_announced() -> None:
    """A card played ends the turn; nobody is to act until the server's next ``turn``
    (finding: a model that guessed the next turn made the network bot play an empty hand
    between the ninth trick and the deal's score)."""
    match, _ = Match.new(Options(deals=1, first_dealer=3), 5)
    m = TableModel("t", seat=0)
    m.apply(snapshot(match, 0))
    assert m.my_turn
    card = match.hands[0][0]
    events = match.apply(Play(0, card))
    m.apply(wire(events[0]))                 # card_played, without the turn that follows
    assert m.view is not None and m.view.to_act is None and not m.my_turn
    m.apply(wire(events[1]))                 # turn: seat 1
    assert m.view.to_act == 1


def test_turn_actions_are_consistent() -> None:
    # Sanity for the helpers above: the engine's actions the test uses exist.
    assert Play(0, "3o").card == "3o" and ChanterVote(0, True).vote
