"""The server's cap on a search bot's thinking time (``Budget.seconds``, ``--bot-think``).

The budget's steps decide (determinism); the cap only stops a search that has run out of
wall-clock time, after at least ``MIN_WORLDS`` worlds. Time is the module's clock, replaced
here by one that moves when the test says, so nothing sleeps and nothing depends on the
machine's speed.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from protocol import TableView
from server import bots
from server.bots import expert
from server.bots.base import DEFAULT_BUDGET
from server.game import Match, Options, Play, view


def _first_lead(seed: int) -> TableView:
    m, _ = Match.new(Options(deals=1, first_dealer=3), seed)
    assert m.to_act is not None
    return view(m, m.to_act)


class Clock:
    """A clock that reads 0.0 for its first ``jump_after`` readings (all of them if None),
    then 10.0, and counts how often it was read."""

    def __init__(self, jump_after: int | None) -> None:
        self.readings = 0
        self.jump_after = jump_after

    def __call__(self) -> float:
        self.readings += 1
        if self.jump_after is not None and self.readings > self.jump_after:
            return 10.0
        return 0.0


Install = Callable[[int | None], Clock]


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Install:
    def install(jump_after: int | None) -> Clock:
        c = Clock(jump_after)
        monkeypatch.setattr(expert, "clock", c)
        return c
    return install


def test_without_a_cap_the_expert_never_reads_the_clock(clock: Install) -> None:
    v = _first_lead(0)
    c = clock(None)
    card = expert.expert_card(v, random.Random("s"), DEFAULT_BUDGET)
    assert c.readings == 0                  # the arena's decisions depend on steps alone
    assert card in v.hand


def test_a_cap_never_reached_changes_nothing(clock: Install) -> None:
    v = _first_lead(0)
    plain = expert.expert_card(v, random.Random("s"), DEFAULT_BUDGET)
    c = clock(None)                         # time stands still: the cap is never reached
    capped = expert.expert_card(v, random.Random("s"), DEFAULT_BUDGET.capped(0.08))
    assert capped == plain
    assert c.readings > expert.MIN_WORLDS   # it did look at the clock, world after world


def test_out_of_time_the_expert_plays_its_best_after_a_few_worlds(clock: Install) -> None:
    v = _first_lead(0)
    plain = bots.choose_action("expert", v, random.Random("s"), DEFAULT_BUDGET)
    # A real cap of no time at all: the clock has moved by the first look after MIN_WORLDS.
    hurried = bots.choose_action("expert", v, random.Random("s"), DEFAULT_BUDGET.capped(0.0))
    assert isinstance(hurried, Play) and hurried != plain     # this position tells them apart
    c = clock(1)                            # past the cap from the first look on
    late = expert.expert_card(v, random.Random("s"), DEFAULT_BUDGET.capped(0.08))
    # One reading to set the deadline, one after MIN_WORLDS worlds, and it stopped there:
    # the same card as with no time at all.
    assert c.readings == 2
    assert late == hurried.card


def test_a_scaled_budget_keeps_its_cap() -> None:
    assert DEFAULT_BUDGET.capped(0.08).scaled(0.5).seconds == 0.08
    assert DEFAULT_BUDGET.capped(0.08).capped(None) == DEFAULT_BUDGET
