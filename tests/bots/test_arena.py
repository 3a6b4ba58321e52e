"""The arena's statistics on known inputs, and a short smoke run of the command."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest

from server.bots.arena import main, paired_difference, percentile, play_game, share_ci
from server.bots.base import DEFAULT_BUDGET
from server.bots.ladder import elo_gap, ratings


def test_share_ci_balanced_pairs() -> None:
    """Pairs (2,0),(0,2),(1,1),(1,1): R = 4/8 = 0.5; residuals a - R t = 1,-1,0,0; so
    Var = 2 / (4 * 3 * 2^2) = 1/24 and the half-width is 1.96 / sqrt(24)."""
    share, low, high = share_ci([(2, 0), (0, 2), (1, 1), (1, 1)])
    half = 1.96 / math.sqrt(24)
    assert share == 0.5
    assert low == pytest.approx(0.5 - half)
    assert high == pytest.approx(0.5 + half)


def test_share_ci_uneven_totals() -> None:
    """(3,1),(1,1),(2,0): R = 6/8 = 0.75; residuals 0, -0.5, 0.5; mean t = 8/3;
    Var = 0.5 / (3 * 2 * (8/3)^2) = 0.5 / 42.666..."""
    share, low, high = share_ci([(3, 1), (1, 1), (2, 0)])
    se = math.sqrt(0.5 / (3 * 2)) / (8 / 3)
    assert share == 0.75
    assert low == pytest.approx(0.75 - 1.96 * se)
    assert high == pytest.approx(min(1.0, 0.75 + 1.96 * se))


def test_share_ci_degenerate_cases() -> None:
    assert share_ci([(0, 0), (0, 0)]) == (0.5, 0.0, 1.0)          # nobody scored
    assert share_ci([(2, 1)]) == (2 / 3, 0.0, 1.0)                # one sample: no variance
    assert share_ci([(2, 0), (1, 0), (2, 0)]) == (1.0, 1.0, 1.0)  # A took everything


def test_percentile_nearest_rank() -> None:
    values = [float(x) for x in range(1, 101)]
    assert percentile(values, 50) == 50.0
    assert percentile(values, 99) == 99.0
    assert percentile([3.0], 99) == 3.0
    assert percentile([], 50) == 0.0


def test_arena_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--a", "expert", "--b", "normal", "--deals", "2", "--seed", "7",
                 "--budget", "300", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert list(doc) == ["a", "b", "deals", "a_points", "b_points", "a_share", "ci95",
                         "decision_ms"]
    assert doc["a"] == "expert" and doc["b"] == "normal" and doc["deals"] == 2
    assert isinstance(doc["a_points"], int) and isinstance(doc["b_points"], int)
    assert 0.0 <= doc["ci95"][0] <= doc["a_share"] <= doc["ci95"][1] <= 1.0
    assert set(doc["decision_ms"]) == {"expert", "normal"}
    for t in doc["decision_ms"].values():
        assert set(t) == {"p50", "p99"} and 0 <= t["p50"] <= t["p99"]


def test_arena_is_deterministic(capsys: pytest.CaptureFixture[str]) -> None:
    """Same seed, same points: the arena seeds every deal and every bot decision."""
    args = ["--a", "normal", "--b", "random", "--deals", "3", "--seed", "s", "--json"]
    main(args)
    first = json.loads(capsys.readouterr().out)
    main(args)
    second = json.loads(capsys.readouterr().out)
    assert (first["a_points"], first["b_points"]) == (second["a_points"], second["b_points"])


def test_arena_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    main(["--a", "easy", "--b", "random", "--deals", "1", "--chanter", "--signals", "risky"])
    out = capsys.readouterr().out
    assert "A share" in out and "decision ms" in out


def test_ladder_ratings_recover_consistent_elo() -> None:
    """Shares made from known ratings give those ratings back (anchored at the first)."""
    truth = {"random": 0.0, "easy": 130.0, "normal": 250.0, "expert": 420.0}
    shares = {(a, b): 1 / (1 + 10 ** ((truth[b] - truth[a]) / 400))
              for i, a in enumerate(truth) for b in list(truth)[i + 1:]}
    got = ratings(list(truth), shares)
    assert got == pytest.approx(truth, abs=1e-6)


def test_ladder_ratings_are_the_least_squares_fit_of_the_documented_shares() -> None:
    """docs/BOTS.md's first ladder: six intransitive shares, random fixed at 0."""
    shares = {("normal", "greedy"): .5934, ("normal", "easy"): .6075,
              ("normal", "random"): .7752, ("easy", "random"): .7377,
              ("greedy", "easy"): .7570, ("greedy", "random"): .7829}
    got = ratings(["random", "easy", "greedy", "normal"], shares)
    assert {k: round(v) for k, v in got.items()} == {"random": 0, "easy": 131, "greedy": 243,
                                                     "normal": 244}
    assert elo_gap(1.0) == pytest.approx(-elo_gap(0.0)) and math.isfinite(elo_gap(1.0))
    with pytest.raises(ValueError, match="round-robin"):
        ratings(["random", "easy", "normal"], {("random", "easy"): 0.3})


def test_arena_ladder_plays_every_pair(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--ladder", "random,easy,greedy", "--deals", "3", "--signals", "off"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [(p["a"], p["b"]) for p in doc["pairs"]] == [("random", "easy"), ("random", "greedy"),
                                                       ("easy", "greedy")]
    assert doc["elo"]["random"] == 0 and set(doc["elo"]) == {"random", "easy", "greedy"}
    with pytest.raises(SystemExit):
        main(["--ladder", "random,nobody"])


def test_arena_plays_matches_of_several_deals(capsys: pytest.CaptureFixture[str]) -> None:
    """--match-deals N: each duplicate game is an N-deal match (R14), so a bot's match
    objective counts; the matches each side won are counted (two per duplicate pair)."""
    times: dict[str, list[float]] = {}
    play_game(["random"] * 4, "s", 0, {"deals": 2, "signals": "off"}, DEFAULT_BUDGET, times)
    assert len(times["random"]) == 2 * 36          # two deals of nine tricks (R11, R14)
    assert main(["--a", "normal", "--b", "random", "--deals", "3", "--match-deals", "2",
                 "--signals", "private", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["match_deals"] == 2
    won = doc["matches_won"]
    assert set(won) == {"a", "b"} and won["a"] + won["b"] <= 6
    with pytest.raises(SystemExit):
        main(["--a", "normal", "--b", "random", "--match-deals", "0"])


def test_paired_difference_of_the_same_deals() -> None:
    """Two runs on the same duplicate deals: the difference of A's shares, with an interval
    from the per-deal differences (a deal's luck cancels), zero-width when nothing moved."""
    old = [(3.0, 1.0), (0.0, 2.0), (1.0, 1.0), (2.0, 0.0)]
    assert paired_difference(old, old) == (0.0, 0.0, 0.0)
    new = [(3.0, 1.0), (1.0, 1.0), (1.0, 1.0), (2.0, 0.0)]      # one deal went better
    d, low, high = paired_difference(new, old)
    assert d == pytest.approx(share_ci(new)[0] - share_ci(old)[0])
    assert low < d < high
    assert paired_difference(old, new) == pytest.approx((-d, -high, -low))
    # Deals whose luck varies a lot, one in ten played a point better: the per-deal luck
    # cancels, so the paired interval is far narrower than either run's own.
    rng = random.Random(1)
    many_old = [(float(rng.randint(0, 4)), float(rng.randint(0, 4))) for _ in range(400)]
    many_new = [(a + (i % 10 == 0), b) for i, (a, b) in enumerate(many_old)]
    _, lo_d, hi_d = paired_difference(many_new, many_old)
    _, lo_s, hi_s = share_ci(many_new)
    assert lo_d > 0.0 and hi_d - lo_d < (hi_s - lo_s) / 2
    with pytest.raises(ValueError, match="same deals"):
        paired_difference(new, old[:3])


def test_arena_compares_with_a_saved_run(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """--save keeps every deal's points; --against replays the same deals with another A
    and reports A's share now minus then, paired; other deals are refused."""
    saved = tmp_path / "greedy.json"
    common = ["--b", "random", "--deals", "4", "--seed", "7", "--signals", "off", "--json"]
    assert main(["--a", "greedy", *common, "--save", str(saved)]) == 0
    then = json.loads(capsys.readouterr().out)
    assert len(json.loads(saved.read_text())["pairs"]) == 4
    assert main(["--a", "easy", *common, "--against", str(saved)]) == 0
    now = json.loads(capsys.readouterr().out)
    against = now["against"]
    assert against["a_share"] == then["a_share"]
    assert against["difference"] == pytest.approx(now["a_share"] - then["a_share"], abs=1e-4)
    assert against["ci95"][0] <= against["difference"] <= against["ci95"][1]
    with pytest.raises(SystemExit):
        main(["--a", "easy", "--b", "random", "--deals", "5", "--seed", "7", "--against",
              str(saved)])
    assert "same deals" in capsys.readouterr().err
    with pytest.raises(SystemExit):                   # the same deals, other rules (R16)
        main(["--a", "easy", "--b", "random", "--deals", "4", "--seed", "7", "--signals",
              "private", "--against", str(saved)])
    assert "same rules" in capsys.readouterr().err
    saved.write_text('{"pairs": [[1, 0]]}')            # not what --save writes
    with pytest.raises(SystemExit):
        main(["--a", "easy", *common, "--against", str(saved)])
    assert "not a run saved by --save" in capsys.readouterr().err
