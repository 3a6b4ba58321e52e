"""The arena's statistics on known inputs, and a short smoke run of the command."""

from __future__ import annotations

import json
import math

import pytest

from server.bots.arena import main, percentile, share_ci


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
