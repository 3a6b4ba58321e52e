"""Writes the specification's long vectors, which nobody should type by hand:
`python -m tests.spec.write_vectors`, then review the diff like any change of the spec.

- ``model/match_*.json``: whole matches played by the engine (seeded, so the same every
  time), each as one viewer receives it on the wire (a seat, or a spectator who arrives
  mid-match), with what the model must show at the end of every trick and deal: exactly the
  view the engine builds for that viewer (``server.game.view``), whose turn included.
- ``explain/deals.json``: deals whose nine trick winners are drawn at random (ties, spoiled
  tricks, late runs), with what the rules' scorer and client_cli/explain.py make of them
  today (R11-R13a): the hand-written explain/rules.json says each rule, these hold the
  browser to the Python side over many more deals.

The short, hand-written vectors beside them say each rule once; these say that the rules
hold together over a whole match.
"""

from __future__ import annotations

import json
import random
from typing import Any

import msgspec

import protocol
from server.game import ChanterVote, Discard, Match, Options, Private, RuleError, Signal, view
from server.game.views import spectator_view
from server.table.state import ENGINE_OPTIONS

from .fmt import lay_out
from .spec import SPEC


def _wire(payload: Any) -> dict[str, Any]:
    """An event payload as the JSON the vectors write (the msgpack map, as JSON)."""
    out: dict[str, Any] = json.loads(json.dumps(msgspec.to_builtins(payload)))
    return out


def _view(match: Match, seat: int | None) -> dict[str, Any]:
    """The engine's view, with only the options that are the rules' (the table's own
    options, such as a bot's delay, are the lobby's: a snapshot shows their defaults)."""
    v = _wire(view(match, seat) if seat is not None else spectator_view(match))
    v["options"] = {k: v["options"][k] for k in ENGINE_OPTIONS}
    return v


def _shows(match: Match, seat: int | None) -> dict[str, Any]:
    mine = seat is not None and match.to_act == seat and not match.over
    return {"seat": seat, "my_turn": mine, "view": _view(match, seat)}


def _action(match: Match, rng: random.Random) -> Any:
    """A legal move; every seat wants the chanter (so the talon and discards happen), and
    now and then a signal (R15) before a card."""
    seat = match.to_act
    assert seat is not None
    if match.phase == "chanter_vote":
        return ChanterVote(seat, True)
    if match.phase == "play" and match.options.signals != "off" and rng.random() < 0.2:
        return rng.choice([Signal(seat, "monsieur"), Signal(seat, "useless_hand"),
                           Signal(seat, "aces", rng.randint(1, 4))])
    return rng.choice(match.legal_actions(seat))


def match_vector(about: str, options: Options, seed: int, seat: int | None,
                 joins_after: int = 0) -> dict[str, Any]:
    """One match as ``seat`` (None: a spectator) receives it. The viewer sits down before
    the start (the lobby info, then the opening events), or, with ``joins_after``, arrives
    after that many actions and starts from a snapshot."""
    rng = random.Random(seed)
    match, opening = Match.new(options, seed)
    info = {"type": "table_changed", "table": {
        "table": "t", "name": "Spec", "status": "playing",
        "options": {k: getattr(options, k) for k in ENGINE_OPTIONS},
        "seats": [{"kind": "bot", "level": "random"}] * 4}}
    steps: list[dict[str, Any]] = [{"event": info}]
    first_seat = seat
    following = joins_after == 0
    for event in opening:
        if following and _sees(event, seat):
            steps.append({"event": _wire(_seen(event))})
        if isinstance(event, protocol.PartnerDraw) and seat is not None:
            seat = event.seating[seat]      # R7: the draw moves the players
    actions = 0
    while not match.over:
        if not following and actions == joins_after:
            steps.append({"event": {"type": "snapshot", "view": _view(match, seat)},
                          "shows": _shows(match, seat)})
            following = True
        action = _action(match, rng)
        actions += 1
        if following and isinstance(action, Discard) and action.seat == seat:
            steps.append({"discarding": list(action.cards)})
        try:
            events = match.apply(action)
        except RuleError:              # a signal the rules refuse now: play instead
            events = match.apply(rng.choice(match.legal_actions(action.seat)))
        if not following:
            continue
        for event in events:
            if _sees(event, seat):
                steps.append({"event": _wire(_seen(event))})
        if any(isinstance(_seen(e), protocol.TrickDone | protocol.DealScored) for e in events):
            steps[-1]["shows"] = _shows(match, seat)
    steps[-1]["shows"] = _shows(match, seat)
    return {"about": about, "cites": "server.game.view; docs/ARCHITECTURE.md",
            "new": {"table": "t", "seat": 0 if joins_after else first_seat}, "steps": steps}


def _seen(event: Any) -> Any:
    return event.payload if isinstance(event, Private) else event


def _sees(event: Any, seat: int | None) -> bool:
    return not isinstance(event, Private) or (seat is not None and seat in event.to)


MATCHES = {
    "match_seat0": ("A one-deal match as seat 0 sees it from before the start: the model is the "
                    "engine's view after every trick and deal.",
                    Options(deals=1, signals="private", first_dealer=3), 7, 0, 0),
    "match_chanter_draw": ("Two deals with the chanter (R9: we take from the talon and "
                           "discard in both) and a partner draw (R7: our seat moves), risky "
                           "signals (R16), as the player first in seat 0 sees them.",
                           Options(deals=2, chanter=True, partner_draw=True, signals="risky",
                                   signal_risk=0.5), 12, 0, 0),
    "match_spectator": ("A spectator arrives mid-deal (a snapshot without hands) and watches "
                        "to the end of a chanter match: never a hand, never a signal (R16).",
                        Options(deals=2, chanter=True, signals="private"), 5, None, 23),
}


def deals_vector(count: int, seed: int) -> dict[str, Any]:
    from .pydriver import _explain_step

    rng = random.Random(seed)
    steps = []
    for n in range(count):
        weights = rng.choice([(1, 1, 1, 1, 1), (1, 3, 1, 1, 1), (3, 1, 1, 1, 1), (1, 1, 1, 1, 4)])
        winners = rng.choices([None, 0, 1, 2, 3], weights=weights, k=9)
        if n % 5 == 0:                       # a late run: the tail is one seat's
            k = rng.randint(2, 5)
            winners[-k:] = [rng.randint(0, 3)] * k
        deal: dict[str, Any] = {"winners": winners}
        if n % 7 == 0:
            deal["tricks_seen"] = False
        if n % 11 == 0:
            deal["mordienne_on"] = False
        step: dict[str, Any] = {"deal": deal}
        step.update(_explain_step(step))
        steps.append(step)
    return {"about": "Random deals (seeded): the browser's scorer and reasons must be the "
                     "Python side's (written by tests/spec/write_vectors.py).",
            "cites": "docs/RULES.md R11, R12, R13, R13a", "steps": steps}


def main() -> None:
    path = SPEC / "explain" / "deals.json"
    path.write_text(lay_out(deals_vector(100, 29)), encoding="utf-8")
    print("wrote explain/deals.json")
    for name, (about, options, seed, seat, joins_after) in MATCHES.items():
        vector = match_vector(about, options, seed, seat, joins_after)
        (SPEC / "model" / f"{name}.json").write_text(lay_out(vector), encoding="utf-8")
        print(f"wrote model/{name}.json ({len(vector['steps'])} steps)")


if __name__ == "__main__":
    main()
