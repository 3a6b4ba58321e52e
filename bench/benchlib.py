"""What the benchmarks that run real server processes share: a free port, a percentile,
starting ``aluette-server`` (``python -m server.app``) and stopping it.

bench/ is first on ``sys.path`` when a benchmark runs (``python bench/NAME.py``), so they
import this as ``benchlib``.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pct(values: list[float], q: float) -> float:
    """The ``q`` quantile (0-1) of ``values``, NaN when there are none."""
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def start_server(flags: Sequence[str], log: Path,
                 env: Mapping[str, str] | None = None) -> subprocess.Popen[str]:
    """``python -m server.app FLAGS`` from the repository, its stderr to ``log``; returns
    once it says it is listening (raises SystemExit if it stops first)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "server.app", *flags], cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}, stdout=subprocess.PIPE,
        stderr=open(log, "w"), text=True)  # noqa: SIM115 - the child's
    assert proc.stdout is not None
    while "listening on" not in (line := proc.stdout.readline()):
        if not line:
            raise SystemExit(f"the server did not start: see {log}")
    return proc


def stop_process(proc: subprocess.Popen[str], wait_s: float = 60) -> None:
    """SIGTERM (a graceful stop), then SIGKILL if it has not ended within ``wait_s``."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(wait_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
