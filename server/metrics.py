"""``GET /metrics``: this process's figures in the Prometheus text format (issue 30).

Per process: each ``aluette-server`` process (or ``--workers`` child) answers for itself,
and Prometheus sums them across the targets it scrapes (docs/OPERATIONS.md). Nothing here
is module-global: each hub has its own :class:`Metrics` and its own registry, so two hubs
in one test process never mix their counts.

Cheap by construction (about 1 µs per command timed alone; BENCHMARKS.md, issue 30):

- what the server already counts (connections, sessions, tables by status and phase,
  tasks, bot timeouts, resumes, admission refusals) is read **when scraped**, by
  :class:`HubCollector`; the hot path pays nothing for it;
- what must be observed as it happens (a command's outcome and ack latency, a store
  call's latency, a bot decision's time, the loop lag) goes into plain numbers
  (:class:`Histogram`: one ``bisect`` and two additions), turned into prometheus-client's
  metric families only when scraped; nothing is allocated per frame.
"""

from __future__ import annotations

import asyncio
import bisect
import time
from collections import Counter
from collections.abc import Iterator, Sequence, Sized
from typing import Protocol

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    GCCollector,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from .botrunner import BotRunner
from .lobby import Lobby
from .looplag import LoopLag
from .memory import HeapKeeper
from .sessions import Sessions
from .supervisor import Supervisor
from .wire import ConnectionCount

__all__ = ["CONTENT_TYPE_LATEST", "HubCollector", "Metrics"]

#: Seconds: a command's reply, a store call. Most are well under 10 ms on a healthy server.
FAST_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
                2.5, 5.0, float("inf"))
#: Seconds: the event loop's lateness (sampled every 100 ms) and a bot's decision.
SLOW_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
                float("inf"))

class Observed(Protocol):
    """What the collector reads: the hub's parts (server/hub.py)."""

    count: ConnectionCount

    @property
    def clients(self) -> Sized: ...

    sessions: Sessions
    lobby: Lobby
    supervisor: Supervisor
    lag: LoopLag
    bots: BotRunner
    heap: HeapKeeper
    started_at: float


class Histogram:
    """A histogram's buckets and sum as plain numbers: one ``bisect`` and two additions per
    observation (prometheus-client's own takes a lock per bucket and per sum; measured at
    about 9 µs for a command's count and time on a loaded machine, this is under 1 µs)."""

    __slots__ = ("bounds", "counts", "sum")

    def __init__(self, bounds: Sequence[float]) -> None:
        self.bounds = tuple(bounds)
        self.counts = [0] * (len(self.bounds) + 1)      # the last: above every bound
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.sum += value

    def buckets(self) -> list[tuple[str, float]]:
        """Cumulative counts by upper bound, ``+Inf`` last (the exposition's form)."""
        out, running = [], 0
        for bound, n in zip((*map(floatToGoString, self.bounds), "+Inf"), self.counts,
                            strict=True):
            running += n
            out.append((bound, float(running)))
        return out


class Labelled:
    """A histogram per label values, each made on first use."""

    def __init__(self, bounds: Sequence[float]) -> None:
        self.bounds = bounds
        self.children: dict[tuple[str, ...], Histogram] = {}

    def __call__(self, *values: str) -> Histogram:
        child = self.children.get(values)
        if child is None:
            child = self.children[values] = Histogram(self.bounds)
        return child


class Metrics:
    """The process's registry and the figures observed as things happen."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        ProcessCollector(registry=self.registry)  # resident memory, open fds, CPU
        GCCollector(registry=self.registry)
        PlatformCollector(registry=self.registry)
        #: (type, outcome) -> commands carried out
        self.commands: Counter[tuple[str, str]] = Counter()
        self.ack = Labelled(FAST_BUCKETS)
        self.loop_lag = Histogram(SLOW_BUCKETS)
        self.store_calls = Labelled(FAST_BUCKETS)
        self.store_failures: Counter[str] = Counter()
        self.bot_decisions = Histogram(SLOW_BUCKETS)

    # -- hooks handed to the parts (plain callables: the parts import nothing from here)

    def observe_command(self, kind: str, outcome: str, seconds: float) -> None:
        self.commands[kind, outcome] += 1
        self.ack(kind).observe(seconds)

    def observe_store(self, op: str, seconds: float, ok: bool) -> None:
        self.store_calls(op).observe(seconds)
        if not ok:
            self.store_failures[op] += 1

    def observe_lag(self, lag_ms: float) -> None:
        self.loop_lag.observe(lag_ms / 1000)

    def observe_bot(self, seconds: float) -> None:
        self.bot_decisions.observe(seconds)

    def attach(self, hub: Observed) -> None:
        """Read the hub's own counts, and these, at each scrape."""
        self.registry.register(HubCollector(hub, self))

    def render(self) -> bytes:
        return generate_latest(self.registry)

    def families(self) -> Iterator[Metric]:
        commands = CounterMetricFamily("aluette_commands", "Commands carried out, by type "
                                       "and outcome (ok or the error code).",
                                       labels=["type", "outcome"])
        for (kind, outcome), n in sorted(self.commands.items()):
            commands.add_metric([kind, outcome], n)
        yield commands
        yield _histograms("aluette_command_seconds", "From a command's arrival to its reply "
                          "being sent.", "type", self.ack)
        yield _histograms("aluette_store_call_seconds", "Store calls by operation (Store "
                          "method).", "op", self.store_calls)
        failures = CounterMetricFamily("aluette_store_failures", "Store calls that failed "
                                       "(storage unavailable).", labels=["op"])
        for op, n in sorted(self.store_failures.items()):
            failures.add_metric([op], n)
        yield failures
        yield _histogram("aluette_loop_lag_seconds", "How late the event loop woke from a "
                         "100 ms sleep.", self.loop_lag)
        yield _histogram("aluette_bot_decision_seconds", "A bot decision's time, its wait for "
                         "a worker included.", self.bot_decisions)


def _histogram(name: str, doc: str, h: Histogram) -> HistogramMetricFamily:
    return HistogramMetricFamily(name, doc, buckets=h.buckets(), sum_value=h.sum)


def _histograms(name: str, doc: str, label: str, hs: Labelled) -> HistogramMetricFamily:
    family = HistogramMetricFamily(name, doc, labels=[label])
    for values, h in sorted(hs.children.items()):
        family.add_metric(list(values), h.buckets(), h.sum)
    return family


class HubCollector(Collector):
    """Figures the hub already keeps, read when Prometheus scrapes (free between scrapes)."""

    def __init__(self, hub: Observed, metrics: Metrics) -> None:
        self.hub = hub
        self.metrics = metrics

    def collect(self) -> Iterator[Metric]:
        hub = self.hub
        yield from self.metrics.families()
        yield _gauge("aluette_connections", "Open websocket connections (from the TCP "
                     "accept, hello or not).", hub.count.total)
        yield _gauge("aluette_clients", "Connections being served (past the handshake).",
                     len(hub.clients))
        yield _gauge("aluette_sessions", "Players with at least one connection here.",
                     len(hub.sessions.online))
        tables = GaugeMetricFamily("aluette_tables", "Tables held by this process, by "
                                   "status and match phase.", labels=["status", "phase"])
        counts: dict[tuple[str, str], int] = {}
        for table in list(hub.lobby.tables.values()):
            status: str = table.state.status
            match = table.match
            phase = match.phase.name.lower() if match is not None and status == "playing" \
                else "none"
            counts[status, phase] = counts.get((status, phase), 0) + 1
        for (status, phase), n in sorted(counts.items()):
            tables.add_metric([status, phase], n)
        yield tables
        yield _gauge("aluette_tables_owned", "Tables whose lease (bots, timers) this "
                     "process holds.", hub.lobby.owned())
        yield _gauge("aluette_tables_stalled", "Tables whose clock cannot reach the store.",
                     hub.lobby.stalled())
        yield _gauge("aluette_tasks", "asyncio tasks alive in this process.",
                     _all_tasks())
        yield _gauge("aluette_supervised_tasks", "Background tasks under the supervisor.",
                     hub.supervisor.running)
        yield _counter("aluette_task_failures", "Supervised tasks that failed.",
                       hub.supervisor.failures)
        yield _gauge("aluette_loop_lag_recent_seconds", "Mean loop lag of the last second "
                     "(admission control compares it with --busy-lag-ms).",
                     hub.lag.recent_ms() / 1000)
        yield _gauge("aluette_busy", "1 while admission control refuses new tables and "
                     "sessions.", int(hub.lag.busy()))
        bots = hub.bots
        yield _counter("aluette_bot_timeouts", "Bot decisions that ran out of time (the "
                       "greedy move was played).", bots.timeouts)
        yield _counter("aluette_bot_failures", "Bot decisions that failed.", bots.failures)
        yield _gauge("aluette_bots_thinking", "Bot decisions queued or running.",
                     bots.in_flight)
        yield _counter("aluette_bot_crowded", "Bot decisions made with a cut budget (the "
                       "pool was crowded).", bots.crowded)
        wire = hub.count
        refused = CounterMetricFamily("aluette_admission_refusals", "What admission control "
                                      "and the limits refused, by reason.", labels=["reason"])
        for reason, n in sorted(wire.refusals.items()):
            refused.add_metric([reason], n)
        yield refused
        resumes = CounterMetricFamily("aluette_resumes", "Resumes, by how the client was "
                                      "brought up to date.", labels=["kind"])
        resumes.add_metric(["replay"], wire.resumes_replayed)
        resumes.add_metric(["snapshot"], wire.resumes_snapshot)
        yield resumes
        yield _counter("aluette_resume_replayed_events", "Events sent again by resumes.",
                       wire.replayed_events)
        heap = hub.heap
        yield _counter("aluette_full_gc", "Full garbage collections after a sweep "
                       "(--full-gc).", heap.collections)
        yield _counter("aluette_full_gc_collected", "Unreachable objects they freed.",
                       heap.collected)
        yield _counter("aluette_full_gc_seconds", "Their time on the event loop.",
                       heap.collect_seconds)
        yield _gauge("aluette_full_gc_longest_seconds", "The longest of them.",
                     heap.longest_collect_s)
        yield _counter("aluette_heap_trims", "Returns of the C heap's free pages to the "
                       "system (--malloc-trim).", heap.trims)
        yield _counter("aluette_heap_trimmed_bytes", "Resident bytes those returns gave back.",
                       heap.released)
        yield _gauge("aluette_uptime_seconds", "Seconds since this process started.",
                     time.time() - hub.started_at)


def _all_tasks() -> int:
    try:
        return len(asyncio.all_tasks())
    except RuntimeError:          # scraped outside the loop (a test)
        return 0


def _gauge(name: str, doc: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, doc, value=value)


def _counter(name: str, doc: str, value: float) -> CounterMetricFamily:
    return CounterMetricFamily(name, doc, value=value)

