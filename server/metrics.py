"""``GET /metrics``: this process's figures in the Prometheus text format (issue 30).

Per process: each ``aluette-server`` process (or ``--workers`` child) answers for itself,
and Prometheus sums them across the targets it scrapes (docs/OPERATIONS.md). Nothing here
is module-global: each hub has its own :class:`Metrics` and its own registry, so two hubs
in one test process never mix their counts.

Cheap by construction (bench/load.py's CPU per command is unchanged, BENCHMARKS.md):

- what the server already counts (connections, sessions, tables by status and phase,
  tasks, bot timeouts, resumes, admission refusals) is read **when scraped**, by
  :class:`HubCollector`; the hot path pays nothing for it;
- what must be observed as it happens (a command's outcome and ack latency, a store
  call's latency, a bot decision's time, the loop lag) is one call into a histogram or
  counter child looked up once and cached (:class:`Children`), never a label lookup or an
  allocation per frame.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator, Sized
from typing import Generic, Protocol, TypeVar

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from .botrunner import BotRunner
from .lobby import Lobby
from .looplag import LoopLag
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

C = TypeVar("C", Counter, Histogram)


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
    started_at: float


class Children(Generic[C]):
    """A labelled metric's children, each made once: ``labels()`` takes a lock and builds a
    tuple every call; a command or a store call pays one dict lookup instead."""

    def __init__(self, parent: C) -> None:
        self.parent: C = parent
        self._made: dict[tuple[str, ...], C] = {}

    def __call__(self, *values: str) -> C:
        child = self._made.get(values)
        if child is None:
            child = self._made[values] = self.parent.labels(*values)
        return child


class Metrics:
    """The process's registry and the metrics observed as things happen."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        reg = self.registry
        ProcessCollector(registry=reg)      # process_resident_memory_bytes, open fds, CPU
        GCCollector(registry=reg)
        PlatformCollector(registry=reg)
        self.commands = Children(Counter(
            "aluette_commands", "Commands carried out, by type and outcome (ok or the "
            "error code).", ["type", "outcome"], registry=reg))
        self.ack = Children(Histogram(
            "aluette_command_seconds", "From a command's arrival to its reply being sent.",
            ["type"], buckets=FAST_BUCKETS, registry=reg))
        self.loop_lag = Histogram(
            "aluette_loop_lag_seconds", "How late the event loop woke from a 100 ms sleep.",
            buckets=SLOW_BUCKETS, registry=reg)
        self.store_calls = Children(Histogram(
            "aluette_store_call_seconds", "Store calls by operation (Store method).",
            ["op"], buckets=FAST_BUCKETS, registry=reg))
        self.store_failures = Children(Counter(
            "aluette_store_failures", "Store calls that failed (storage unavailable).",
            ["op"], registry=reg))
        self.bot_decisions = Histogram(
            "aluette_bot_decision_seconds", "A bot decision's time, its wait for a worker "
            "included.", buckets=SLOW_BUCKETS, registry=reg)

    # -- hooks handed to the parts (plain callables: the parts import nothing from here)

    def observe_command(self, kind: str, outcome: str, seconds: float) -> None:
        self.commands(kind, outcome).inc()
        self.ack(kind).observe(seconds)

    def observe_store(self, op: str, seconds: float, ok: bool) -> None:
        self.store_calls(op).observe(seconds)
        if not ok:
            self.store_failures(op).inc()

    def observe_lag(self, lag_ms: float) -> None:
        self.loop_lag.observe(lag_ms / 1000)

    def observe_bot(self, seconds: float) -> None:
        self.bot_decisions.observe(seconds)

    def attach(self, hub: Observed) -> None:
        """Read the hub's own counts at each scrape."""
        self.registry.register(HubCollector(hub))

    def render(self) -> bytes:
        return generate_latest(self.registry)


class HubCollector(Collector):
    """Figures the hub already keeps, read when Prometheus scrapes (free between scrapes)."""

    def __init__(self, hub: Observed) -> None:
        self.hub = hub

    def collect(self) -> Iterator[Metric]:
        hub = self.hub
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

