"""The arena's statistics on known inputs, and a short smoke run of the command."""

from __future__ import annotations

import json
import math

import pytest

from server.bots.arena import main, percentile, play_game, share_ci
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
