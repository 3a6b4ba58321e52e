"""The terminal client's task scope: every task the prompt starts lives in it.

A task nobody awaits is a bug waiting to stall a table (docs/ARCHITECTURE.md, the lessons),
and a task lives in a scope that ends with what it serves. The client cannot use the
server's :class:`server.supervisor.Supervisor` (it reaches the server through the wire only),
so this is its own small one: each task is named and tagged with what it serves (a table
id, the play-now wait); a failure is logged with its name; :meth:`TaskScope.end` cancels a
table's or the wait's tasks when that ends, and :meth:`TaskScope.close` everything when the
program does.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

#: What a task serves when only the program's end ends it.
PROGRAM = ""


class TaskScope:
    """The App's tasks, each serving the program, a table or the wait."""

    def __init__(self, name: str = "aluette") -> None:
        self.name = name
        self._tasks: dict[asyncio.Task[Any], str] = {}    # task -> what it serves
        self.failures = 0
        self.closed = False

    def spawn(self, name: str, work: Coroutine[Any, Any, T], *,
              serves: str = PROGRAM) -> asyncio.Task[T]:
        """Run ``work`` as a task of this scope: its failure is logged, and it is cancelled
        by ``end(serves)`` or ``close()``. A closed scope starts nothing."""
        if self.closed:
            work.close()
            raise RuntimeError(f"{self.name}: task scope closed; cannot start {name}")
        task = asyncio.get_running_loop().create_task(work, name=f"{self.name}: {name}")
        self._tasks[task] = serves
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.pop(task, None)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            self.failures += 1
            log.error("task %s failed", task.get_name(), exc_info=exc)

    def end(self, serves: str) -> None:
        """What ``serves`` names is over (a table left, the wait done): cancel its tasks."""
        for task, what in list(self._tasks.items()):
            if what == serves:
                task.cancel()

    def running(self, serves: str | None = None) -> list[asyncio.Task[Any]]:
        """The tasks not yet done (those serving ``serves``, if given)."""
        return [task for task, what in self._tasks.items()
                if serves is None or what == serves]

    async def close(self, grace: float = 2.0) -> None:
        """The program ends: cancel every task and wait for them (up to ``grace`` s)."""
        self.closed = True
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=grace)
