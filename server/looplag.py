"""How late this process's event loop runs, and whether it is too late to take more work.

A sampler sleeps 100 ms at a time and records how much later than asked it woke: the time
every command waits before it even starts. The last minute of samples feeds ``/healthz``;
the last few decide whether the process is **busy** (issue 11, admission control): past
saturation every table slows down together, so a busy process refuses what would add load
(a new table, a new session) with ``server_busy`` and keeps the games it has fast.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
from collections.abc import Callable

#: The sampler's period.
TICK_S = 0.1
#: Busy is judged on the mean of this many latest samples (about the last second): one
#: garbage-collection pause does not turn new players away for long.
RECENT = 8


class LoopLag:
    def __init__(self, busy_ms: float) -> None:
        #: Mean lag (ms) above which the process is busy; 0 turns admission control off.
        self.busy_ms = busy_ms
        self.samples: collections.deque[float] = collections.deque(maxlen=600)
        #: Told of every sample, in ms (``/metrics``' loop lag histogram).
        self.observe: Callable[[float], None] | None = None

    async def sample_forever(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            start = loop.time()
            await asyncio.sleep(TICK_S)
            self.record((loop.time() - start - TICK_S) * 1000)

    def record(self, lag_ms: float) -> None:
        lag_ms = max(0.0, lag_ms)
        self.samples.append(lag_ms)
        if self.observe is not None:
            self.observe(lag_ms)

    def recent_ms(self) -> float:
        """The mean of the latest samples (0 before the first)."""
        if not self.samples:
            return 0.0
        recent = list(itertools.islice(reversed(self.samples), RECENT))
        return sum(recent) / len(recent)

    def busy(self) -> bool:
        return self.busy_ms > 0 and self.recent_ms() > self.busy_ms

    def retry_after_ms(self) -> int:
        """What to tell a refused client: about the time the backlog needs to clear."""
        return int(min(10_000, max(1_000, 4 * self.recent_ms())))

    def summary(self) -> dict[str, float]:
        """p50, p99 and max over the last minute, for ``/healthz``."""
        lags = sorted(self.samples)
        if not lags:
            return {}
        return {"p50": round(lags[len(lags) // 2], 2),
                "p99": round(lags[min(len(lags) - 1, int(0.99 * len(lags)))], 2),
                "max": round(lags[-1], 2)}
