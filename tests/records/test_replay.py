"""Replaying a finished match (issue 28, Build 1): every step derived from the record under
the rules, forwards and backwards, with chanter exchanges, signals and who noticed them,
deal results explained, and the review's marks on costly plays; ``aluette-record replay``
drives it from the keyboard or a pipe."""

from __future__ import annotations

import io
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from client_cli.replay import Replay, Step, mark_of
from server.game import ChanterVote, Match, Options, Signal, fair
from server.game.record import RecordError, export_record


def record_of(seed: int = 4, **options: Any) -> dict[str, Any]:
    """A finished match: every chanter vote yes (R9), a risky signal now and then (R16)."""
    secret, salt = f"{seed + 1:064x}", f"{seed + 2:032x}"
    contributions: list[str | None] = ["0a", None, None, None]
    match, _ = Match.new(Options(**options), fair.derive_seed(secret, salt, contributions))
    rng = random.Random(seed)
    steps = 0
    while not match.over:
        steps += 1
        if steps % 6 == 0 and match.options.signals != "off":
            match.apply(Signal(rng.randrange(4), "aces", 2))
        legal = match.legal_actions(match.to_act)
        match.apply(ChanterVote(match.to_act, True) if isinstance(legal[0], ChanterVote)
                    else rng.choice(legal))
    record = json.loads(json.dumps(export_record(match, ["Ana", "Bo", "Cy", "Di"])))
    record["fair"] = fair.reveal(secret, salt, contributions)
    return record


def text(replay: Replay) -> str:
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(replay.render())
    return console.export_text()


def test_steps_go_trick_by_trick_and_deal_by_deal() -> None:
    replay = Replay(record_of(deals=2))
    assert len(replay.steps) == 20 and replay.step == Step(1, 0)
    replay.command("")                            # Enter: the next trick
    assert replay.step == Step(1, 1)
    replay.command("b")
    replay.command("b")                           # never before the first step
    assert replay.step == Step(1, 0)
    replay.command("d")
    assert replay.step == Step(2, 0)
    replay.command("D")
    assert replay.step == Step(1, 0)
    replay.command("g 2 5")
    assert replay.step == Step(2, 5)
    replay.command("last")
    replay.command("n")                           # never past the last
    assert replay.step == Step(2, 9)
    with pytest.raises(ValueError, match="unknown replay command"):
        replay.command("x")
    assert replay.command("q") is False


def test_hands_are_face_up_and_shrink_as_tricks_are_played() -> None:
    record = record_of(deals=1)
    replay = Replay(record, seat=2)
    deal = record["deals"][0]
    first = text(replay)
    for hand in deal["hands"]:
        assert all(card in first for card in hand)
    replay.go(1, 3)
    shown = text(replay)
    assert "trick 3 of 9" in shown and "Trick 3: " in shown
    gone = deal["tricks"][0][0]
    hands = shown[shown.index("Hands, face up"):shown.index("Tricks so far")]
    assert gone not in hands
    assert "you:" in hands and "your partner" in hands     # seat 2 is "you"
    replay.go(1, 9)
    assert "Deal 1 is over" in text(replay) and "Deals proven fair" in text(replay)


def test_chanter_exchanges_and_noticed_signals_are_shown_where_they_happened() -> None:
    record = record_of(deals=2, chanter=True, signals="risky", signal_risk=1.0)
    replay = Replay(record)
    dealt = text(replay)
    assert "Chanter (R9): " in dealt and " took " in dealt and " discarded " in dealt
    block = record["deals"][0]["chanter"]
    for cards in block["discards"]:
        for card in cards:
            assert card in dealt
    seen = 0
    for i in range(len(replay.steps)):
        replay.at = i
        out = text(replay)
        seen += out.count("Signal (R15): ")
        if "Signal (R15): " in out:
            assert "noticed by" in out and "(R16)" in out      # risk 1.0: both noticed
    assert seen == sum(len(d["signals"]) for d in record["deals"]) > 0


def test_a_reviews_costly_plays_are_marked() -> None:
    record = record_of(deals=1)
    card = record["deals"][0]["tricks"][2][0]
    review = {"seat": 1, "decisions": [
        {"kind": "card", "deal": 1, "trick": 3, "lost": 0.3, "preferred": "3o",
         "actual": card},
        {"kind": "card", "deal": 1, "trick": 4, "lost": 0.02, "preferred": "4o",
         "actual": "5o"}]}
    replay = Replay(record, review=review)
    replay.go(1, 3)
    assert f"? Bo played {card}; the expert preferred 3o" in text(replay)
    replay.go(1, 4)
    assert "the expert preferred" not in text(replay)       # 0.02: not worth a mark
    assert [mark_of(x) for x in (0.05, 0.1, 0.25, 0.5)] == ["", "?!", "?", "??"]


def test_a_record_that_breaks_the_rules_is_not_replayed() -> None:
    record = record_of(deals=1)
    record["deals"][0]["tricks"][0][0] = record["deals"][0]["tricks"][1][0]
    with pytest.raises(RecordError):
        Replay(record)


def test_the_command_steps_from_a_pipe_and_prints_everything_with_all(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps(record_of(deals=1)), encoding="utf-8")
    run = [sys.executable, "-m", "client_cli.record_cli", "replay", str(path)]
    piped = subprocess.run(run, input="n\nn\nb\nnonsense\nq\n", capture_output=True,
                           text=True, timeout=60, check=False)
    assert piped.returncode == 0, piped.stderr
    steps = [line for line in piped.stdout.splitlines() if line.startswith("Deal 1 of 1")]
    assert [s.split("[")[-1] for s in steps] == ["1/10]", "2/10]", "3/10]", "2/10]"]
    everything = subprocess.run([*run, "--all"], capture_output=True, text=True, timeout=60,
                                check=False)
    assert everything.returncode == 0
    assert everything.stdout.count("Deal 1 of 1 · dealt by") == 10
    bad = tmp_path / "bad.json"
    bad.write_text("{}", encoding="utf-8")
    refused = subprocess.run([sys.executable, "-m", "client_cli.record_cli", "replay",
                              str(bad)], capture_output=True, text=True, timeout=60,
                             check=False)
    assert refused.returncode == 1 and refused.stderr.startswith(f"{bad}: ")
