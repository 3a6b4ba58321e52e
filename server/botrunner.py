"""Where bots think: off the event loop's thread, with a fallback when they fail.

A table asks for a decision with the seat's view only (bots never see the match); the
decision runs in an executor so a search bot never holds up the loop that answers players.
A bot that raises, or returns something the table cannot use, is replaced by the first
legal move, logged, and the table goes on: a bot bug must never stall a table.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import random
from typing import Any

from server import bots
from server.game import Action, Signal

log = logging.getLogger(__name__)


def _decide(level: str, view: dict[str, Any], seed: str, budget_factor: float) -> Action:
    return bots.choose_action(level, view, random.Random(seed),
                              bots.DEFAULT_BUDGET.scaled(budget_factor))


def _signals(level: str, view: dict[str, Any], seed: str) -> list[Signal]:
    return bots.choose_signals(level, view, random.Random(seed))


class BotRunner:
    """Runs bot decisions in a bounded executor (threads by default)."""

    def __init__(self, workers: int = 2,
                 executor: concurrent.futures.Executor | None = None) -> None:
        self._own = executor is None
        self.executor = executor or concurrent.futures.ThreadPoolExecutor(
            max_workers=workers, thread_name_prefix="bot")
        self.decisions = 0
        self.failures = 0

    async def decide(self, level: str, view: dict[str, Any], seed: str,
                     budget_factor: float) -> Action | None:
        """The bot's move, or None if it failed (the caller plays a legal move instead)."""
        loop = asyncio.get_running_loop()
        try:
            action = await loop.run_in_executor(self.executor, _decide, level, view, seed,
                                                budget_factor)
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
