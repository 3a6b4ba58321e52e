"""Where bots think: in worker processes, never on the event loop's thread.

A table asks for a decision with the seat's view only (bots never see the match). The
decision runs in a pool of processes (``--bot-workers``), so an expert bot's search
neither holds up the loop that answers players nor competes with it for the interpreter
lock (issue 11: in threads, 50 tables of expert bots cost a human over a second per
move). When the machine has no CPU left, decisions queue: bots slow down, players' replies
do not. A bot that raises, takes longer than ``bot_timeout_s``, or whose process dies is
replaced by the first legal move, logged, and the table goes on: a bot never stalls it.
``bot_workers=0`` thinks in threads instead (tests that patch a bot in this process).
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
from typing import Any

from server import bots
from server.game import Action, Signal

log = logging.getLogger(__name__)


#: How much lower than the server's the bot processes' CPU priority is (``nice``).
BOT_NICENESS = 10


def _worker_start() -> None:
    """In each bot process: a lower CPU priority than the server's, die with the server
    (Linux), and have the bots loaded.

    The priority is what makes "bots slow down, never the players' replies" hold when the
    machine has no CPU to spare: the kernel gives the server's event loop the cores first
    and the bots what is left (a bot past ``bot_timeout_s`` is replaced by a legal move)."""
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


def _decide(level: str, view: dict[str, Any], seed: str, budget_factor: float) -> Action:
    return bots.choose_action(level, view, random.Random(seed),
                              bots.DEFAULT_BUDGET.scaled(budget_factor))


def _signals(level: str, view: dict[str, Any], seed: str) -> list[Signal]:
    return bots.choose_signals(level, view, random.Random(seed))


class BotRunner:
    """Runs bot decisions in a bounded pool of processes (or threads)."""

    def __init__(self, workers: int = 2, timeout_s: float = 5.0,
                 executor: concurrent.futures.Executor | None = None) -> None:
        self._own = executor is None
        self.workers = workers
        self.timeout_s = timeout_s
        self.executor = executor or self._pool()
        self.decisions = 0
        self.failures = 0
        self.timeouts = 0

    def _pool(self) -> concurrent.futures.Executor:
        if self.workers <= 0:
            return concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="bot")
        # spawn: a clean process image (never a fork of a process with a running event
        # loop and open sockets), each worker a direct child that dies with the server
        # (a forkserver's children were seen to outlive a SIGKILLed server).
        context = multiprocessing.get_context("spawn")
        return concurrent.futures.ProcessPoolExecutor(
            max_workers=self.workers, mp_context=context, initializer=_worker_start)

    async def decide(self, level: str, view: dict[str, Any], seed: str,
                     budget_factor: float) -> Action | None:
        """The bot's move, or None if it failed (the caller plays a legal move instead)."""
        loop = asyncio.get_running_loop()
        try:
            action = await asyncio.wait_for(
                loop.run_in_executor(self.executor, _decide, level, view, seed, budget_factor),
                self.timeout_s)
        except TimeoutError:
            self.timeouts += 1
            log.error("bot %s took over %s s for seat %s; a legal move instead", level,
                      self.timeout_s, view.get("viewer"))
            return None
        except concurrent.futures.process.BrokenProcessPool:
            self.failures += 1
            log.error("the bot processes died; starting them again")
            if self._own:
                self.executor = self._pool()
            return None
        except Exception:
            self.failures += 1
            log.exception("bot %s failed to decide for seat %s", level, view.get("viewer"))
            return None
        self.decisions += 1
        return action

    def signals(self, level: str, view: dict[str, Any], seed: str) -> list[Signal]:
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
