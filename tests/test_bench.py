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
    "clock_wake.py": (["--wakes", "500"], {"timeout_us_per_wake",
                                           "baseline_wait_for_us_per_wake", "ratio"}),
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
    "matchmaker.py": (["--queued", "50", "--rounds", "2"],
                      {"form_p50_ms", "one_preset_form_max_ms", "baseline_empty_p50_ms"}),
    "history.py": (["--matches", "50", "--accounts", "20"],
                   {"bytes_per_match", "baseline_bare_set_bytes_per_match"}),
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


def compare_processes(tmp_path: Path, *extra: str) -> dict:  # type: ignore[type-arg]
    """``bench/load.py --compare-processes 2`` at 16 tables for 10 s: one process, then two,
    in the same run; every run with 0 errors and 0 keeper failures."""
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "load.py"), "--tables", "16",
                          "--pace", "full", "--seconds", "10", "--compare-processes", "2",
                          *extra],
                         capture_output=True, text=True, timeout=600, cwd=tmp_path, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    figures: dict = json.loads(run.stdout)  # type: ignore[type-arg]
    for side in ("one", "many"):
        assert figures[side]["errors"] == 0, figures[side]["error_codes"]
        assert figures[side]["keeper_failures"] == 0
        assert figures[side]["commands"] > 500
        # The yardstick that makes absolute CPU figures comparable across days.
        assert figures[side]["machine_ms"]["mean"] > 0
        assert figures[side]["server_cpu_per_play_in_machine_units"] > 0
    return figures


def test_second_process_cost_is_a_ratio_not_a_time(tmp_path: Path) -> None:
    """Issue 32: the two-process cost is held as a ratio of server CPU per command (one
    process, then two, in the same run), never as a time. The issue's target is 1.15.

    With the players spread over the processes (as the kernel spreads ``--workers``'
    connections), this code measures 1.47-1.57 at 64 tables on an idle machine and up to
    1.9 at 16 tables on a loaded one (BENCHMARKS.md, issue 32), so the bound there guards
    against a regression (a second process that rebuilt tables again measured 1.83-1.94 at
    64 tables) rather than claiming the target.

    What a second process costs is its following of the other's tables: with each table's
    four players on one process (``--affinity``) neither hears the other's tables, and the
    ratio measured 1.119 and 1.144 at 64 tables, 1.15 and 1.241 at this test's size, against
    1.516 and 1.544 spread (fifth session). The product gets there by itself with homes
    (protocol 1.6, sixth session): ``--homes`` places every player at random, as a proxy
    balancing connections does, and a player whose table another process runs is told its
    home and moves there: it must move players and rest the tables they left (without
    homes nobody moves, and it fails; a process that went on hearing the tables its players
    left rests none, and it fails), under the same regression bound.

    Until 2026-12-05 the homes run also had to stay 0.1 under the spread one (gaps 0.164
    and 0.835 at this size). That margin was measured with a harness that counted the
    ramp-up's CPU in the window; once the window counts alone, the spread run's ratio fell
    (1.284 in one run) and the gap at this size was 0.099 in one run of four: inside this
    machine's noise at 16 tables for 10 s, so it is no longer asserted here. The
    comparison is made at 64 tables in BENCHMARKS.md (issue 32, seventh session), with
    the control that shares nothing (``--unshared``). Zero errors and zero keeper failures
    in every run."""
    spread = compare_processes(tmp_path)
    assert spread["many"]["affinity"] is False and spread["many"]["homes"] is False
    assert spread["cpu_per_command_ratio"] <= 2.2, spread["cpu_per_command_ratio"]
    homes = compare_processes(tmp_path, "--homes")
    assert homes["many"]["homes"] is True
    # Players did move: three joiners a table, about half of them placed elsewhere.
    assert sum(homes["many"]["moves"].values()) >= 8, homes["many"]["moves"]
    # The processes left behind rest the tables their players left.
    assert sum(p["resting_tables"] for p in homes["many"]["followed"]) > 0
    assert homes["cpu_per_command_ratio"] <= 2.2, homes["cpu_per_command_ratio"]


def test_unshared_processes_see_nothing_of_each_other(tmp_path: Path) -> None:
    """``--unshared`` is the control for the two-process ratio (issue 32): N processes on
    one store, each with a key prefix of its own, so that what they cost over one process
    is the cost of splitting the load alone (smaller batches, more processes on the same
    cores), with no coordination to pay for. It is a control only if each process counts
    itself alone and hears no commit at all."""
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "load.py"), "--tables", "4",
                          "--pace", "full", "--seconds", "3", "--processes", "2",
                          "--unshared"],
                         capture_output=True, text=True, timeout=600, cwd=tmp_path, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    figures = json.loads(run.stdout)
    assert figures["unshared"] is True and figures["affinity"] is False
    assert figures["errors"] == 0 and figures["commands"] > 50
    assert [p["processes"] for p in figures["followed"]] == [1, 1]
    assert [p["events_heard"] for p in figures["followed"]] == [0, 0]
    # Each process ran its own half of the tables: both played.
    assert all(p["owned_tables"] > 0 for p in figures["followed"])
