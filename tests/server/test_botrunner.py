"""Where bots think (issue 11): worker processes that yield the CPU to the server.

"When the machine has no CPU left for bots, bots slow down (their moves queue), never the
humans' acknowledgements": the bot processes run at a lower priority than the server, so
the kernel serves the event loop first. Measured with bench/load.py --bots (BENCHMARKS.md).
"""

from __future__ import annotations

import asyncio
import os
import random
import threading

import pytest

from server import botrunner, bots
from server.botrunner import (
    BOT_NICENESS,
    FALLBACK_LEVEL,
    MIN_CROWDED_SHARE,
    BotRunner,
    crowded_factor,
)
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


def test_a_crowded_pool_cuts_each_new_decisions_budget_in_proportion() -> None:
    assert crowded_factor(1.0, 1, 2) == 1.0
    assert crowded_factor(0.5, 2, 2) == 0.5             # every decision has a worker
    assert crowded_factor(1.0, 4, 2) == 0.5
    assert crowded_factor(0.5, 8, 2) == 0.125
    assert crowded_factor(1.0, 1000, 2) == MIN_CROWDED_SHARE     # never below the floor


async def test_decisions_queued_behind_a_busy_worker_think_with_less() -> None:
    """BENCHMARKS.md: 100 tables of expert bots. Six decisions at once on one worker: the
    first has the table's whole budget, the k-th a k-th of it, and each played card is the
    one the expert chooses with that budget (this position's choice changes with each)."""
    # The deal of fair-deal scheme 1 (R8a): a position where the budget changes the card.
    m, _ = Match.new(Options(deals=1, first_dealer=3), 0, draws=1)
    seat = m.to_act
    assert seat is not None
    v = view(m, seat)
    shares = [1.0, 1 / 2, 1 / 3, 1 / 4, 1 / 5, 1 / 6]
    expected = [bots.choose_action("expert", v, random.Random("s"),
                                   bots.DEFAULT_BUDGET.scaled(f)) for f in shares]
    assert len({a.card for a in expected if isinstance(a, Play)}) >= 4   # tells them apart
    runner = BotRunner(workers=1, timeout_s=60)
    try:
        got = await asyncio.gather(*(runner.decide("expert", v, "s", 1.0) for _ in shares))
        assert got == expected
        assert runner.crowded == 5 and runner.in_flight == 0 and runner.decisions == 6
        # Alone again, a decision has the whole budget.
        assert await runner.decide("expert", v, "s", 1.0) == expected[0]
        assert runner.crowded == 5
    finally:
        runner.close()


async def test_a_bot_out_of_time_is_replaced_by_the_greedy_move_not_any_legal_one() -> None:
    """A bot past its time (here: no time at all) still plays a sensible card for its seat:
    the greedy yardstick's, computed from the same view, not the first card in hand."""
    m, _ = Match.new(Options(deals=1, first_dealer=3), 2)
    for _ in range(2):                   # two cards down: the greedy rule has a trick to read
        seat = m.to_act
        assert seat is not None
        m.apply(Play(seat, m.hands[seat][-1]))
    seat = m.to_act
    assert seat is not None
    v = view(m, seat)
    greedy = bots.choose_action(FALLBACK_LEVEL, v, random.Random("s"))
    assert greedy != m.legal_actions(seat)[0]          # the position tells the two apart
    runner = BotRunner(workers=1, timeout_s=0)
    try:
        assert await runner.decide("expert", v, "s", 1.0) == greedy
        assert runner.timeouts == 1 and runner.decisions == 0
    finally:
        runner.close()


async def test_the_pool_caps_a_search_bots_thinking_time() -> None:
    """--bot-think: the worker's search stops when the cap is reached (here at once, so
    after its first few worlds) and plays that search's card, not the uncapped one."""
    # The deal of fair-deal scheme 1 (R8a): a position where the budget changes the card.
    m, _ = Match.new(Options(deals=1, first_dealer=3), 0, draws=1)
    seat = m.to_act
    assert seat is not None
    v = view(m, seat)
    hurried = bots.choose_action("expert", v, random.Random("s"),
                                 bots.DEFAULT_BUDGET.capped(0.0))
    assert hurried != bots.choose_action("expert", v, random.Random("s"))
    runner = BotRunner(workers=1, timeout_s=60, think_s=0.0)
    try:
        assert await runner.decide("expert", v, "s", 1.0) == hurried
    finally:
        runner.close()


async def test_a_decision_out_of_time_counts_as_thinking_until_its_worker_is_free(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A decision that ran out of time is answered with the greedy move at once, but its
    search goes on holding a worker until it ends: it counts in ``in_flight`` (what the next
    decisions' budgets are cut by, crowded_factor, and /healthz's bots_thinking) until
    then, and no longer."""
    started, release = threading.Event(), threading.Event()

    def stuck(*_args: object) -> None:
        started.set()
        release.wait(30)

    monkeypatch.setattr(botrunner, "_decide", stuck)
    m, _ = Match.new(Options(deals=1, first_dealer=3), 2)
    seat = m.to_act
    assert seat is not None
    runner = BotRunner(workers=0, timeout_s=0.05)          # threads: the patch applies
    try:
        action = await runner.decide("expert", view(m, seat), "s", 1.0)
        assert isinstance(action, Play) and runner.timeouts == 1
        assert started.is_set()
        assert runner.in_flight == 1           # still thinking on its worker (bots_thinking)
        release.set()
        # The count drops on the loop once the worker's thread hands the end over
        # (call_soon_threadsafe); there is no event to wait on but the count itself.
        async with asyncio.timeout(10):
            while runner.in_flight:  # noqa: ASYNC110
                await asyncio.sleep(0.005)
    finally:
        release.set()
        runner.close()
