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
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TypedDict

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
        #: Other work that makes the process busy before its loop runs late (the resumes'
        #: replays, :class:`ReplayBudget`): each says True while it is pressed.
        self.pressures: list[Callable[[], bool]] = []
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

    def late(self) -> bool:
        """The loop itself runs late (the mean of the latest samples)."""
        return self.busy_ms > 0 and self.recent_ms() > self.busy_ms

    def busy(self) -> bool:
        """Too busy for new tables and sessions: the loop runs late, or work known to be
        heavy (replays) has used all the process may give it."""
        return self.busy_ms > 0 and (self.late() or any(p() for p in self.pressures))

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


#: Addresses whose replay buckets are remembered (the oldest are forgotten past it).
ADDRESSES_KEPT = 10_000
#: The process counts as busy this long after its replay budget ran out.
PRESSED_S = 2.0


class _Bucket:
    """A token bucket of events: ``per_second`` sustained, ``burst`` at once."""

    __slots__ = ("burst", "per_second", "stamp", "tokens")

    def __init__(self, per_second: float, burst: float, now: float) -> None:
        self.per_second, self.burst = per_second, burst
        self.tokens, self.stamp = burst, now

    def refill(self, now: float) -> None:
        self.tokens = min(self.burst, self.tokens + max(0.0, now - self.stamp) * self.per_second)
        self.stamp = now


class ReplayStatus(TypedDict):
    """``/healthz``'s ``replays``: what the resumes' replays cost lately."""

    replayed_events: int
    heads_instead: int
    pressed: bool
    resumes_paced_s: float


class ReplayBudget:
    """What resumes may replay, counted in events (issue 30, item 5: resume amplification).

    A resume's replay is the heaviest thing a client can ask for: one command, up to the
    whole event log in frames, made and written at once. Ten connections of one address
    that kept resuming an old ``last_seq`` raised everyone's ping to hundreds of ms while
    the loop-lag check still said not busy. So each replay is paid for in advance, from
    two token buckets: its address's (``per_address`` events a second, twice that at once)
    and the process's (``per_process``). A resume they cannot pay for gets a head (a
    snapshot) instead, which is always correct and costs a few frames; so does every resume
    while the loop runs late (``late``). A replay larger than an address's burst is never
    sent. The process's bucket running dry makes admission control busy
    (:meth:`pressed`, :attr:`LoopLag.pressures`) for :data:`PRESSED_S`. And an address's
    resumes themselves are paced (:meth:`pace`), heads included.
    """

    def __init__(self, per_address: float, per_process: float, *,
                 resumes_per_address: float = 0.0,
                 late: Callable[[], bool] = lambda: False,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.per_address = per_address
        self.per_process = per_process
        self.resumes_per_address = resumes_per_address
        self.late = late
        self.clock = clock
        self._process = _Bucket(per_process, 2 * per_process, clock())
        self._addresses: OrderedDict[str, _Bucket] = OrderedDict()
        self._resumes: OrderedDict[str, _Bucket] = OrderedDict()
        self.paced_s = 0.0
        self._pressed_until = 0.0
        self.replayed = 0
        self.refused = 0

    async def pace(self, address: str) -> None:
        """Wait until ``address`` may resume again: ``resumes_per_address`` a second, four
        times that at once (a client back from a drop resumes all its tables at once).
        Even a resume answered by a head costs a few frames and a view; past the rate the
        address's resumes wait their turn (each connection carries out one command at a
        time, so the wait holds back only the connections that resume so often)."""
        if self.resumes_per_address <= 0:
            return
        now = self.clock()
        bucket = self._resumes.get(address)
        if bucket is None:
            bucket = _Bucket(self.resumes_per_address, 4 * self.resumes_per_address, now)
            self._resumes[address] = bucket
            if len(self._resumes) > ADDRESSES_KEPT:
                self._resumes.popitem(last=False)
        else:
            self._resumes.move_to_end(address)
        bucket.refill(now)
        bucket.tokens -= 1          # reserved now: waiters are served in turn
        if bucket.tokens < 0:
            wait = -bucket.tokens / bucket.per_second
            self.paced_s += wait
            await asyncio.sleep(wait)

    def take(self, address: str, events: int) -> bool:
        """Pay for replaying ``events`` to a connection of ``address``; False (nothing
        paid): send a head instead."""
        if events <= 0:
            return True
        now = self.clock()
        bucket = self._addresses.get(address)
        if bucket is None:
            bucket = _Bucket(self.per_address, 2 * self.per_address, now)
            self._addresses[address] = bucket
            if len(self._addresses) > ADDRESSES_KEPT:
                self._addresses.popitem(last=False)
        else:
            self._addresses.move_to_end(address)
        bucket.refill(now)
        self._process.refill(now)
        if self.late() or bucket.tokens < events:
            self.refused += 1
            return False
        if self._process.tokens < events:
            self.refused += 1
            self._pressed_until = now + PRESSED_S
            return False
        bucket.tokens -= events
        self._process.tokens -= events
        self.replayed += events
        return True

    def pressed(self) -> bool:
        """The process's replay budget ran out lately: admission control counts it."""
        return self.clock() < self._pressed_until

    def summary(self) -> ReplayStatus:
        """For ``/healthz``: events replayed, resumes answered with a head for want of
        budget, and whether the budget is pressed now."""
        return {"replayed_events": self.replayed, "heads_instead": self.refused,
                "pressed": self.pressed(), "resumes_paced_s": round(self.paced_s, 1)}
