"""Rolling upgrade (issue 30, item 3): three server processes, each stopped with SIGTERM and
started again in turn while 20 tables play (bench/rolling.py, whose JSON this reads).

The players are the terminal client's network bots: their reconnect and resume are the
client's own. Every process exits 0, every table is still playing at each restart, every
dropped client is back within 5 s by itself, and each finished match's record holds exactly
the moves its seats were acknowledged, in order (0 acknowledged moves lost).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.timeout(420)
def test_three_processes_restarted_in_turn_lose_no_acknowledged_move(tmp_path: Path) -> None:
    tables = 20
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "rolling.py"), "--tables", str(tables),
         "--play-s", "2", "--finish-s", "240"],
        capture_output=True, text=True, timeout=400, cwd=tmp_path, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["not_started"] == [], result
    assert [r["exit_code"] for r in result["restarts"]] == [0, 0, 0], result
    assert all(r["tables_playing"] == tables for r in result["restarts"]), result
    assert result["drops"] >= tables, result          # each restart dropped its clients
    assert result["never_back"] == 0 and result["clients_given_up"] == 0, result
    assert result["back_within_5s"] == 1.0, result
    assert result["matches_finished"] == tables and result["unfinished_bots"] == 0, result
    assert result["acknowledged_moves"] > 0
    assert result["lost_moves"] == 0 and result["unacknowledged_moves"] == 0, result
    assert result["tables_out_of_order"] == 0, result
    assert result["server_tracebacks"] == 0, result
