"""The event loop the server runs on: asyncio's own, or uvloop's (issue 32).

uvloop is an extra (``pip install 'aluette-online[uvloop]'``), not a dependency: it
measured about 4% less server CPU per play at human pace and 0-5% less at full pace
(BENCHMARKS.md), not enough to make every installation build or download it. An operator
who asks for it where it is not installed gets a server that runs on asyncio's loop and
says so in its log, never one that does not start.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

log = logging.getLogger(__name__)

#: The values of ``--event-loop``.
EVENT_LOOPS = ("asyncio", "uvloop")

LoopFactory = Callable[[], asyncio.AbstractEventLoop]


def loop_factory(name: str) -> LoopFactory:
    """What makes the loop ``name`` asks for (asyncio's when uvloop is asked for but cannot
    be imported)."""
    if name == "uvloop":
        try:
            import uvloop
        except ImportError as exc:
            log.warning("--event-loop uvloop: uvloop cannot be imported (%s); running on "
                        "asyncio's event loop (pip install 'aluette-online[uvloop]')", exc)
        else:
            return uvloop.new_event_loop
    return asyncio.new_event_loop


def running_loop_name() -> str:
    """Which loop this runs on, read from the loop itself (what the server says it runs
    on is what it runs on, whatever was asked for)."""
    module = type(asyncio.get_running_loop()).__module__
    return "uvloop" if module.split(".")[0] == "uvloop" else "asyncio"
