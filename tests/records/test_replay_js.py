"""The browser's replay steps (server/web/static/js/replaysteps.mjs) under node, against the
server's replay of the same records (R18) and the terminal's (client_cli/replay.py): who
led and won each trick, the counts, results and totals, and where each signal shows.
Skipped without node."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from client_cli.replay import Replay
from server.game.record import verify_record

from .snippet import NODE
from .test_fair_v2 import needs_node
from .test_replay import record_of

JS = Path(__file__).resolve().parent / "js"


def signals_by_step(replay: Replay) -> list[list[int]]:
    """[deal, trick, signals shown] for every step of the terminal's replay with signals."""
    out = []
    for i, step in enumerate(replay.steps):
        replay.at = i
        deal = replay.record["deals"][step.deal - 1]
        shown = len(replay._signals(step, deal))
        if shown:
            out.append([step.deal, step.trick, shown])
    return out


@needs_node
def test_the_pages_replay_steps_agree_with_the_server(tmp_path: Path) -> None:
    records = [record_of(seed, deals=2) for seed in range(2)]
    records += [record_of(seed, deals=3, chanter=True, signals="risky", signal_risk=0.5)
                for seed in range(3)]
    records.append(record_of(9, deals=2, signals="private", mordienne=False))
    vectors = [{"record": r, "summary": verify_record(r),
                "signals": signals_by_step(Replay(r))} for r in records]
    assert any(v["signals"] for v in vectors)
    path = tmp_path / "replay.json"
    path.write_text(json.dumps(vectors), encoding="utf-8")
    assert NODE is not None
    done = subprocess.run([NODE, "--test", str(JS / "replay.test.mjs")], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "REPLAY_VECTORS": str(path)},
                          check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout and "# pass 3" in done.stdout
