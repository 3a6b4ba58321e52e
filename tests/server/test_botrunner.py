"""Where bots think (issue 11): worker processes that yield the CPU to the server.

"When the machine has no CPU left for bots, bots slow down (their moves queue), never the
humans' acknowledgements": the bot processes run at a lower priority than the server, so
the kernel serves the event loop first. Measured with bench/load.py --bots (BENCHMARKS.md).
"""

from __future__ import annotations

import asyncio
import os

from server.botrunner import BOT_NICENESS, BotRunner
from server.game import Match, Options, Play, view


async def test_bot_processes_run_below_the_servers_priority() -> None:
    runner = BotRunner(workers=1, timeout_s=30)
    try:
        loop = asyncio.get_running_loop()
        theirs = await loop.run_in_executor(runner.executor, os.nice, 0)
        assert theirs == os.nice(0) + BOT_NICENESS
        # And they still decide: a legal first card for the seat to play (R10).
        m, _ = Match.new(Options(deals=1, first_dealer=3), 7)
        seat = m.to_act
        assert seat is not None
        action = await runner.decide("expert", view(m, seat), "s", 1.0)
        assert isinstance(action, Play) and action.card in m.hands[seat]
    finally:
        runner.close()
