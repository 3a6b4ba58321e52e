"""Every benchmark runs with one command and prints its figures as JSON (slow: CI only)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow

BENCHES = {
    "engine.py": (["--seconds", "0.3"], {"engine_deals_per_s", "lean_deals_per_s",
                                          "baseline_deals_per_s"}),
    "codec.py": ([], {"us_per_message", "baseline_us_per_message", "overhead_ratio"}),
    "store.py": (["--iterations", "50", "--seconds", "0.3", "--tables", "4"],
                 {"commit_p50_us", "set_p50_us", "ratio"}),
    "network.py": (["--plays", "20"], {"play_p50_us", "ping_p50_us", "play_to_ping_ratio"}),
    "bots.py": (["--deals", "1", "--think-ms", "80"], {"think_ms", "levels"}),
    "bot_regret.py": (["--pairs", "1", "--rollouts", "10", "--workers", "1"],
                      {"positions", "regret", "minus_default", "by_tricks"}),
    "ceiling.py": (["--deals", "2", "--workers", "1"], {"deals", "b", "variants"}),
    "review.py": (["--matches", "1", "--deals", "1", "--worlds", "40"],
                  {"review_s", "agreement", "baseline_bot_s"}),
    "review_load.py": (["--reviews", "2", "--plays", "40"],
                       {"baseline", "while_reviewing", "reviews_made_meanwhile"}),
    "login.py": (["--in-flight", "4", "--rounds", "1", "--memory-kib", "1024",
                  "--time-cost", "1"], {"login_p99_ms", "loop_lag_during_logins", "baseline"}),
}


@pytest.mark.parametrize("name", sorted(BENCHES))
def test_benchmark_prints_json(name: str, tmp_path: Path) -> None:
    args, keys = BENCHES[name]
    run = subprocess.run([sys.executable, str(ROOT / "bench" / name), *args],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path, check=False)
    assert run.returncode == 0, run.stderr
    figures = json.loads(run.stdout)
    assert keys <= set(figures)
    assert all(v is not None for v in figures.values())


def test_no_benchmark_shadows_a_package() -> None:
    """bench/ is first on sys.path when a benchmark runs: a file named like one of the
    project's packages would hide it from every import (the engine imports protocol)."""
    packages = {"server", "client_cli", "protocol"}
    assert not packages & {p.stem for p in (ROOT / "bench").glob("*.py")}
