"""What a table clock's wake costs: the idiom it waits with, against ``asyncio.wait_for``.

    python bench/clock_wake.py [--wakes 20000]

A table's clock (``server/table/clock.py``) wakes at every commit of its table: another
task sets its event, and it clears the event and waits again, with a deadline (the next
bot move or timer). ``asyncio.wait_for`` makes a task for every such wait;
``asyncio.timeout`` around the same wait does not (issue 32). Prints CPU microseconds per
wake for both, measured in the same run, and their ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import time
from collections.abc import Awaitable, Callable

Waiter = Callable[[asyncio.Event, float], Awaitable[None]]


async def with_wait_for(wake: asyncio.Event, deadline: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(wake.wait(), deadline)


async def with_timeout(wake: asyncio.Event, deadline: float) -> None:
    """The clock's way (TableClock.run)."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(deadline):
            await wake.wait()


async def per_wake_us(wait: Waiter, wakes: int) -> float:
    wake, done = asyncio.Event(), asyncio.Event()

    async def clock() -> None:
        for _ in range(wakes):
            wake.clear()
            await wait(wake, 30.0)
        done.set()

    async def commits() -> None:
        while not done.is_set():
            wake.set()
            await asyncio.sleep(0)

    start = time.process_time()
    await asyncio.gather(clock(), commits())
    return (time.process_time() - start) / wakes * 1e6


async def main(wakes: int) -> dict[str, float]:
    best: dict[str, float] = {}
    for _ in range(3):              # alternate, keep each idiom's best
        for name, wait in (("wait_for", with_wait_for), ("timeout", with_timeout)):
            us = await per_wake_us(wait, wakes)
            best[name] = min(best.get(name, us), us)
    return {"timeout_us_per_wake": round(best["timeout"], 2),
            "baseline_wait_for_us_per_wake": round(best["wait_for"], 2),
            "ratio": round(best["timeout"] / best["wait_for"], 3)}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wakes", type=int, default=20000)
    print(json.dumps(asyncio.run(main(ap.parse_args().wakes))))
