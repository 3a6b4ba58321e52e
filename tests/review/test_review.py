"""The expert's review (issue 28, Build 2): each decision judged from the seat's own view.

- the replay rebuilds, for every decision, exactly the view the engine showed the seat at
  that moment (compared with the views captured while the match was played);
- the review ignores hidden cards: two records that differ only in cards the seat had not
  seen give the same evaluation of every decision whose view is the same;
- its figures are those of a search: a seat that plays at random loses points the expert
  would not have, and matches it less often;
- ``aluette-record review FILE --seat N`` prints the review as JSON, computed in worker
  processes.
"""

from __future__ import annotations

import copy
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from server import bots
from server.bots.base import Budget
from server.game import (
    STRENGTH,
    ChanterVote,
    Discard,
    Match,
    Options,
    Play,
    Signal,
    fair,
    view,
)
from server.game.errors import RecordError
from server.game.record import export_record, verify_record
from server.review import Review, Settings, decisions, evaluate, review_record
from server.review.replay import discard_text

FAST = Settings(card_worlds=60, vote_worlds=40, discard_worlds=30)


def played(options: Options, *, seed: int = 1, levels: tuple[str, ...] = ("normal",) * 4,
           signal_every: int = 0, fair_seed: bool = True, watch: int = 0
           ) -> tuple[dict[str, Any], list[tuple[dict[str, Any], str]]]:
    """A match played by bots (``levels[seat]``), and ``watch``'s views as it decided,
    with what it chose (the review's form of the choice)."""
    secret, salt = f"{seed + 1:064x}", f"{seed + 2:032x}"       # the same match every run
    contributions: list[str | None] = [None, "ab", None, None]
    match, _ = Match.new(options, fair.derive_seed(secret, salt, contributions))
    rng = random.Random(seed)
    seen: list[tuple[dict[str, Any], str]] = []
    steps = 0
    while not match.over:
        seat = match.to_act
        assert seat is not None
        steps += 1
        if signal_every and steps % signal_every == 0 and match.phase == "play":
            match.apply(Signal(rng.randrange(4), "useless_hand"))
        v = view(match, seat)
        action = bots.choose_action(levels[seat], v, random.Random(rng.random()),
                                    Budget(steps=3000, worlds_cap=40))
        if seat == watch:
            if isinstance(action, Play):
                seen.append((v, action.card))
            elif isinstance(action, ChanterVote):
                seen.append((v, "yes" if action.vote else "no"))
            elif isinstance(action, Discard):
                seen.append((v, discard_text(list(action.cards))))
        match.apply(action)
    record = json.loads(json.dumps(export_record(match, ["Ana", "Bo", "Cy", "Di"])))
    if fair_seed:
        record["fair"] = fair.reveal(secret, salt, contributions)
    return record, seen


@pytest.mark.parametrize("options", [
    Options(deals=2),
    Options(deals=3, chanter=True),
    Options(deals=2, chanter=True, signals="risky", signal_risk=0.5, partner_draw=True),
])
def test_each_decision_is_judged_from_the_view_the_seat_had(options: Options) -> None:
    for watch in range(4):
        record, seen = played(options, seed=watch, signal_every=5, watch=watch)
        verify_record(record)
        found = decisions(record, watch)
        assert [(d.view, d.actual) for d in found] == seen
        assert all(d.view.viewer == watch for d in found)


def test_a_record_that_breaks_the_rules_or_lacks_the_exchanges_is_refused() -> None:
    record, _ = played(Options(deals=1, chanter=True))
    broken = copy.deepcopy(record)
    broken["deals"][0]["tricks"][0][0] = broken["deals"][0]["tricks"][1][0]
    with pytest.raises(RecordError, match=r"deal 1, trick [12], seat"):       # R18
        decisions(broken, 0)
    incomplete = copy.deepcopy(record)
    del incomplete["deals"][0]["chanter"]
    del incomplete["fair"]
    with pytest.raises(RecordError, match="whether the talon was exchanged"):
        decisions(incomplete, 0)
    with pytest.raises(RecordError, match="seat must be 0-3"):
        decisions(record, 4)


def _swap_unseen(record: dict[str, Any], seat: int) -> dict[str, Any]:
    """The same match, except that two opponents of ``seat`` held each other's card of one
    late trick of deal 1 (cards of different strengths, neither deciding the trick): a
    different deal, consistent with everything ``seat`` saw until those cards were down."""
    deal = record["deals"][0]
    summary = verify_record({k: v for k, v in record.items() if k != "fair"})["deals"][0]
    x, y = (seat + 1) % 4, (seat + 3) % 4
    for t in range(len(deal["tricks"]) - 1, 0, -1):
        cards, leader = deal["tricks"][t], summary["tricks"][t]["leader"]
        by_seat = {(leader + i) % 4: c for i, c in enumerate(cards)}
        top = max(STRENGTH[c] for c in cards)
        a, b = by_seat[x], by_seat[y]
        if STRENGTH[a] != STRENGTH[b] and max(STRENGTH[a], STRENGTH[b]) < top:
            other = copy.deepcopy(record)
            swap = {a: b, b: a}
            d = other["deals"][0]
            d["hands"] = [[swap.get(c, c) for c in h] for h in d["hands"]]
            d["tricks"] = [[swap.get(c, c) for c in tr] for tr in d["tricks"]]
            del other["fair"]            # the hands no longer follow from the seed
            return other
    raise AssertionError("no trick to swap in")


def test_the_review_ignores_hidden_cards() -> None:
    """Issue 28: the evaluation comes from the seat's view alone. Change the other seats'
    unseen cards, and every decision whose view is unchanged is valued the same."""
    seat = 0
    record, _ = played(Options(deals=2), seed=3)
    other = _swap_unseen(record, seat)
    plain = {k: v for k, v in record.items() if k != "fair"}
    first, second = decisions(plain, seat), decisions(other, seat)
    assert len(first) == len(second) == 18
    same = [(a, b) for a, b in zip(first, second, strict=True) if a.view == b.view]
    assert len(same) >= 10
    hidden_differs = 0
    for a, b in same:
        assert evaluate(a, FAST) == evaluate(b, FAST)
        if a.deal == 1:
            hidden_differs += 1
    assert hidden_differs >= 2          # decisions of deal 1 taken over different deals
    # The two records really are different deals of deal 1.
    assert record["deals"][0]["hands"] != other["deals"][0]["hands"]


def test_random_play_costs_points_the_expert_would_not_lose() -> None:
    options = Options(deals=3)
    levels = ("random", "expert", "expert", "expert")
    record, _ = played(options, seed=11, levels=levels)
    random_seat = review_record(record, 0, workers=0, settings=Settings(150, 60, 60))
    expert_seat = review_record(record, 1, workers=0, settings=Settings(150, 60, 60))
    assert random_seat.points_lost > expert_seat.points_lost
    assert random_seat.share_matched < expert_seat.share_matched
    for r in (random_seat, expert_seat):
        assert r.total_decisions == 27 == sum(d.decisions for d in r.deals)
        assert r.matched == sum(d.matched for d in r.deals)
        for d in r.decisions:
            assert d.lost >= 0 and (d.lost == 0) is d.matched
            assert {c.choice for c in d.choices} >= {d.actual, d.preferred}


def test_chanter_votes_and_discards_are_reviewed() -> None:
    record, _ = played(Options(deals=4, chanter=True), seed=2)
    exchanges = [d for d in record["deals"] if d["chanter"]["exchange"]]
    assert exchanges, "no deal in which all four said yes"
    deal = record["deals"].index(exchanges[0]) + 1
    taker = exchanges[0]["dealer"]
    review = review_record(record, taker, workers=0, settings=FAST)
    kinds = [(d.deal, d.kind) for d in review.decisions]
    assert (deal, "chanter_vote") in kinds and (deal, "discard") in kinds
    discard = next(d for d in review.decisions if d.kind == "discard")
    assert discard.unvalued == 5005 - len(discard.choices)
    assert discard.actual == discard_text(exchanges[0]["chanter"]["discards"][taker])
    vote = next(d for d in review.decisions if d.kind == "chanter_vote")
    assert [c.choice for c in vote.choices] == ["yes", "no"]


def test_the_command_prints_the_review_as_json(tmp_path: Path) -> None:
    record, _ = played(Options(deals=1))
    path = tmp_path / "m.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "client_cli.record_cli", "review", str(path), "--seat", "2",
         "--workers", "2", "--worlds", "40"],
        capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    review = msgspec.json.decode(done.stdout, type=Review)
    assert review.seat == 2 and review.name == "Cy" and review.total_decisions == 9
    assert review.settings["card_worlds"] == 40
    again = subprocess.run(
        [sys.executable, "-m", "client_cli.record_cli", "review", str(path), "--seat", "9"],
        capture_output=True, text=True, timeout=60, check=False)
    assert again.returncode == 2 and "--seat" in again.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("{}", encoding="utf-8")
    refused = subprocess.run(
        [sys.executable, "-m", "client_cli.record_cli", "review", str(bad), "--seat", "0"],
        capture_output=True, text=True, timeout=60, check=False)
    assert refused.returncode == 1 and refused.stderr.startswith(f"{bad}: format must be")
