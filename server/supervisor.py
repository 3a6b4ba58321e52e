"""Every background task runs under a supervisor: named, logged when it fails, awaited at exit.

A task nobody awaits is a bug waiting to stall a table (the first version lost a table's
bot to an exception nobody saw). Here a failure is logged with the task's name and counted
for ``/healthz``; the caller decides how to recover (a table's clock restarts itself, a bot
falls back to a legal move). ``close()`` cancels what is left and waits for it, so shutdown
never leaves half-done work behind the lifecycle's back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from typing import Any

log = logging.getLogger(__name__)


class Supervisor:
    def __init__(self, name: str = "server") -> None:
        self.name = name
        self._tasks: dict[asyncio.Task[Any], str] = {}
        self.failures = 0
        self.closed = False

    def spawn(self, name: str, coro: Coroutine[Any, Any, Any], *,
              on_error: Callable[[BaseException], None] | None = None) -> asyncio.Task[Any]:
        """Run ``coro`` as a supervised task; its failure is logged and ``on_error`` called."""
        if self.closed:
            coro.close()
            raise RuntimeError(f"{self.name}: supervisor closed; cannot start {name}")
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks[task] = name
        task.add_done_callback(lambda t: self._done(t, on_error))
        return task

    def _done(self, task: asyncio.Task[Any], on_error: Callable[[BaseException], None] | None,
              ) -> None:
        name = self._tasks.pop(task, task.get_name())
        if task.cancelled():
            return
        exc = task.exception()
        if exc is None:
            return
        self.failures += 1
        log.error("task %s failed", name, exc_info=exc)
        if on_error is not None:
            try:
                on_error(exc)
            except Exception:
                log.exception("recovery of task %s failed", name)

    @property
    def running(self) -> int:
        return len(self._tasks)

    def names(self) -> list[str]:
        return sorted(self._tasks.values())

    async def close(self, grace: float = 5.0) -> None:
        """Cancel every task and wait for them all (up to ``grace`` seconds)."""
        self.closed = True
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait(tasks, timeout=grace)
            for task in tasks:
                if not task.done():
                    log.error("task %s did not stop within %s s", task.get_name(), grace)

    async def __aenter__(self) -> Supervisor:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
