"""``aluette-record`` as a newcomer meets it (issue 14, item 5): `verify` and `show` say the
result in the same words, and `verify --json ... | head` ends without a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from client_cli.record_cli import EXIT_BROKEN_PIPE, main

from .builders import build_deal, build_record

S = None  # a spoiled trick


@pytest.mark.parametrize(("winners", "words"), [
    ([0] * 9, "team 0 wins"),          # R13a: a sweep, 2 points to team 0
    ([1] * 9, "team 1 wins"),
    ([S] * 9, "a draw"),               # R12: nobody scores, R14: equal totals draw
])
def test_verify_and_show_name_the_result_alike(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               winners: list[int | None], words: str) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps(build_record([build_deal(3, winners)])))
    assert main(["verify", "--allow-unproven", str(path)]) == 0
    verified = capsys.readouterr().out
    assert main(["show", str(path)]) == 0
    shown = capsys.readouterr().out
    assert verified.splitlines()[-1].endswith(f": {words}")
    assert shown.splitlines()[-1].endswith(f": {words}")
    assert "team0" not in verified and "team1" not in verified and "result:" not in verified


def test_verify_into_a_pipe_closed_early_has_no_traceback(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps(build_record([build_deal(3, [1, S, 2, 2, 0, S, 3, 3, 3])])))
    # Far more output than a pipe buffers, so the writer meets the closed pipe.
    proc = subprocess.Popen(
        [sys.executable, "-m", "client_cli.record_cli", "verify", "--json", "--allow-unproven",
         *[str(path)] * 400],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()            # what `head -1` reads ...
    proc.stdout.close()                       # ... before it exits
    err = proc.stderr.read().decode()
    proc.wait(30)
    assert json.loads(first)["result"] == "team1"
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert proc.returncode == EXIT_BROKEN_PIPE


def test_show_says_one_trick_in_the_singular(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps(build_record([build_deal(3, [2, S, S, S, S, S, S, S, S])])))
    assert main(["show", str(path)]) == 0
    assert "wins the deal with 1 trick, team 0 scores 1" in capsys.readouterr().out
