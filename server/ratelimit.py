"""Per-connection command rate limit (docs/PROTOCOL.md, "Limits").

A token bucket that *refuses* rather than waits: a flooding client gets ``rate_limited``
answers at once, and one that keeps flooding far past the limit is disconnected. (Async
limiter libraries such as aiolimiter make the caller wait instead, which would let a flood
hold server memory, so this small bucket is written here.)
"""

from __future__ import annotations

import time

from protocol import RATE_BURST, RATE_HARD_MULTIPLIER, RATE_PER_SECOND


class RateLimiter:
    def __init__(self, per_second: float = RATE_PER_SECOND, burst: int = RATE_BURST,
                 hard_multiplier: int = RATE_HARD_MULTIPLIER) -> None:
        self.per_second = per_second
        self.burst = burst
        self.tokens = float(burst)
        self.refused = 0.0
        self.hard = burst * (hard_multiplier - 1)
        self.stamp = time.monotonic()

    def allow(self, now: float | None = None) -> bool:
        """Take one token if there is one; refused commands count towards the hard limit."""
        now = time.monotonic() if now is None else now
        elapsed = max(0.0, now - self.stamp)
        self.stamp = now
        self.tokens = min(self.burst, self.tokens + elapsed * self.per_second)
        self.refused = max(0.0, self.refused - elapsed * self.per_second)
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        self.refused += 1
        return False

    @property
    def over_hard_limit(self) -> bool:
        return self.refused > self.hard
