"""Where bots think: in worker processes, never on the event loop's thread.

A table asks for a decision with the seat's view only (bots never see the match). The
decision runs in a pool of processes (``--bot-workers``), so an expert bot's search
neither holds up the loop that answers players nor competes with it for the interpreter
lock (issue 11: in threads, 50 tables of expert bots cost a human over a second per
move). When the machine has no CPU left, decisions queue: bots slow down, players' replies
do not. A bot that raises, takes longer than ``bot_timeout_s`` (its wait for a worker
included), or whose process dies is logged and replaced by the ``greedy`` yardstick's move
(:data:`FALLBACK_LEVEL`, a rule of thumb cheap enough for the loop's thread), or by the first
legal move if that fails too, and the table goes on: a bot never stalls it. A search also
stops at the server's cap on thinking time (``--bot-think``, ``Budget.seconds``).
``bot_workers=0`` thinks in threads instead (tests that patch a bot in this process).

When more decisions wait than there are workers, each new one thinks with a budget cut in
proportion (:func:`crowded_factor`): a search bot's time is its budget, so a queue of
decisions drains at the pace of a lighter budget instead of the tables' bots all moving at
a fraction of their pace (BENCHMARKS.md: 100 tables of expert bots).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import concurrent.futures.process
import contextlib
import logging
import multiprocessing
import os
import random
import time
from collections.abc import Callable

from protocol import TableView
from server import bots
from server.game import Action, Signal

log = logging.getLogger(__name__)


#: Threads that think when ``bot_workers`` is 0.
THREADS = 2

#: How much lower than the server's the bot processes' CPU priority is (``nice``).
BOT_NICENESS = 10


#: The least share of a table's budget a decision gets however crowded the pool is.
MIN_CROWDED_SHARE = 0.1


def crowded_factor(factor: float, in_flight: int, capacity: int) -> float:
    """The budget factor for a decision submitted with ``in_flight`` decisions (itself
    included) queued or running on ``capacity`` workers: the table's ``factor`` while every
    decision has a worker, else cut by ``capacity / in_flight`` so the queue's total work
    stays what the workers do at full budget, never below :data:`MIN_CROWDED_SHARE` of it."""
    if in_flight <= capacity:
        return factor
    return factor * max(MIN_CROWDED_SHARE, capacity / in_flight)


def _worker_start() -> None:
    """In each bot process: a lower CPU priority than the server's, die with the server
    (Linux), and have the bots loaded.

    The priority is what makes "bots slow down, never the players' replies" hold when the
    machine has no CPU to spare: the kernel gives the server's event loop the cores first
    and the bots what is left (a bot past ``bot_timeout_s`` is replaced by the ``greedy`` move)."""
    with contextlib.suppress(OSError):
        os.nice(BOT_NICENESS)
    with contextlib.suppress(Exception):
        import ctypes
        import signal

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)           # PR_SET_PDEATHSIG
        if os.getppid() == 1:                   # the server died before prctl took hold
            os._exit(0)
    import server.bots  # noqa: F401


def _decide(level: str, view: TableView, seed: str, budget_factor: float,
            think_s: float | None) -> Action:
    return bots.choose_action(level, view, random.Random(seed),
                              bots.DEFAULT_BUDGET.scaled(budget_factor).capped(think_s))


#: The level whose move stands in for a bot that failed or ran out of time: one pass over
#: the seat's view, no search (docs/BOTS.md: rated about as strong as ``normal``).
FALLBACK_LEVEL = "greedy"


def _fallback(view: TableView, seed: str) -> Action | None:
    try:
        return bots.choose_action(FALLBACK_LEVEL, view, random.Random(seed))
    except Exception:
        log.exception("the fallback bot failed too for seat %s", view.viewer)
        return None


def _signals(level: str, view: TableView, seed: str) -> list[Signal]:
    return bots.choose_signals(level, view, random.Random(seed))


class BotRunner:
    """Runs bot decisions in a bounded pool of processes (or threads)."""

    def __init__(self, workers: int = 2, timeout_s: float = 5.0,
                 executor: concurrent.futures.Executor | None = None,
                 think_s: float | None = None) -> None:
        self._own = executor is None
        self.workers = workers
        self.timeout_s = timeout_s
        #: The cap on one search's thinking time (``Budget.seconds``; ``--bot-think``).
        self.think_s = think_s
        self.executor = executor or self._pool()
        self.decisions = 0
        self.failures = 0
        self.timeouts = 0
        #: Decisions whose work is queued or running (one that ran out of time counts until
        #: its worker is free: it still holds it).
        self.in_flight = 0
        #: Decisions that thought with a cut budget because the pool was crowded.
        self.crowded = 0
        #: Told of every decision's seconds, its wait for a worker and any fallback included
        #: (``/metrics``).
        self.observe: Callable[[float], None] | None = None

    @property
    def capacity(self) -> int:
        """How many decisions think at once."""
        return self.workers if self.workers > 0 else THREADS

    def _pool(self) -> concurrent.futures.Executor:
        if self.workers <= 0:
            return concurrent.futures.ThreadPoolExecutor(max_workers=THREADS,
                                                         thread_name_prefix="bot")
        # spawn: a clean process image (never a fork of a process with a running event
        # loop and open sockets), each worker a direct child that dies with the server
        # (a forkserver's children were seen to outlive a SIGKILLed server).
        context = multiprocessing.get_context("spawn")
        return concurrent.futures.ProcessPoolExecutor(
            max_workers=self.workers, mp_context=context, initializer=_worker_start)

    async def decide(self, level: str, view: TableView, seed: str,
                     budget_factor: float) -> Action | None:
        """The bot's move; if it failed or ran out of time, :data:`FALLBACK_LEVEL`'s; None if
        that failed too (the caller plays a legal move instead)."""
        loop = asyncio.get_running_loop()
        start = time.perf_counter()
        self.in_flight += 1
        factor = crowded_factor(budget_factor, self.in_flight, self.capacity)
        if factor < budget_factor:
            self.crowded += 1
        work: concurrent.futures.Future[Action | None] | None = None
        try:
            work = self.executor.submit(_decide, level, view, seed, factor, self.think_s)
            # Counted until the work itself ends, not until this caller stops waiting: a
            # decision that ran out of time still holds its worker, and the next decisions'
            # budgets must see that (crowded_factor).
            work.add_done_callback(lambda _: self._finished(loop))
            action = await asyncio.wait_for(asyncio.wrap_future(work), self.timeout_s)
        except TimeoutError:
            self.timeouts += 1
            log.error("bot %s took over %s s for seat %s; the %s move instead", level,
                      self.timeout_s, view.viewer, FALLBACK_LEVEL)
            return _fallback(view, seed)
        except concurrent.futures.process.BrokenProcessPool:
            self.failures += 1
            log.error("the bot processes died; starting them again")
            if self._own:
                self.executor = self._pool()
            return _fallback(view, seed)
        except Exception:
            self.failures += 1
            log.exception("bot %s failed to decide for seat %s", level, view.viewer)
            return _fallback(view, seed)
        finally:
            if work is None:
                self.in_flight -= 1         # never submitted: nothing will call back
            if self.observe is not None:
                self.observe(time.perf_counter() - start)
        self.decisions += 1
        return action

    def _finished(self, loop: asyncio.AbstractEventLoop) -> None:
        """A decision's work ended (answered, failed, or cancelled while queued); called on
        the pool's thread, so the count changes on the loop's."""
        def done() -> None:
            self.in_flight -= 1
        # A closed loop: the server is gone and nobody counts any more.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(done)

    def signals(self, level: str, view: TableView, seed: str) -> list[Signal]:
        """Signals are a cheap rule of thumb (R15): computed inline."""
        try:
            return _signals(level, view, seed)
        except Exception:
            self.failures += 1
            log.exception("bot %s failed to choose signals", level)
            return []

    def close(self) -> None:
        if self._own:
            self.executor.shutdown(wait=False, cancel_futures=True)
