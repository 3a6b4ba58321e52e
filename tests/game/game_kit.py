"""Helpers for scripted deals: build hands that produce chosen trick outcomes, play them.

A *script* is a list of tricks, each trick the four cards **indexed by seat** (not in play
order): with no duty to follow suit (R10) and a winner decided by strength alone (R11), who
led does not change the outcome, so a script plays the same whoever leads.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from server.game import (
    ALL_CARDS,
    STRENGTH,
    Discard,
    Event,
    Match,
    Options,
    Phase,
    Play,
    rules,
)

Script = list[list[str]]


def make_match(
    hands: Sequence[Sequence[str]] | None = None,
    dealer: int = 0,
    seed: int | str = 0,
    **options: Any,
) -> Match:
    """A match whose first deal is dealt by ``dealer``, with ``hands`` replacing the dealt ones.

    When ``hands`` are nine cards each, the talon becomes the twelve cards nobody holds, so
    the 48 cards stay in exactly one place.
    """
    m, _ = Match.new(Options(first_dealer=dealer, **options), seed)
    if hands is not None:
        m.hands = [list(h) for h in hands]
        m.play_hands = [list(h) for h in hands]
        held = {c for h in hands for c in h}
        if len(held) == 36:
            m.talon = [c for c in ALL_CARDS if c not in held]
    return m


def hands_of(script: Script) -> list[list[str]]:
    """Seat s's hand is column s of the script."""
    return [[trick[s] for trick in script] for s in range(4)]


def play_trick(m: Match, by_seat: Sequence[str]) -> list[Event]:
    """Play one trick: whoever is to act plays its card from ``by_seat``, four times."""
    events: list[Event] = []
    for _ in range(4):
        seat = m.to_act
        assert seat is not None
        events += m.apply(Play(seat, by_seat[seat]))
    return events


def play_script(m: Match, script: Script) -> list[Event]:
    events: list[Event] = []
    for trick in script:
        events += play_trick(m, trick)
    return events


def script_for(outcomes: Sequence[int | None]) -> Script:
    """Cards for each trick so that trick t is won by seat ``outcomes[t]`` (None = spoiled).

    A won trick gives its winner the strongest card left and the others the weakest three; a
    spoiled trick gives two seats the weakest pair of equal cards that still beats two
    weaker cards. Every result is checked against R11.
    """
    pool = sorted(ALL_CARDS, key=lambda c: (STRENGTH[c], c))
    script: Script = []
    for t, outcome in enumerate(outcomes):
        trick = ["", "", "", ""]
        if outcome is not None:
            top = pool.pop()
            low = [pool.pop(0) for _ in range(3)]
            assert max(STRENGTH[c] for c in low) < STRENGTH[top]
            trick[outcome] = top
            others = [s for s in range(4) if s != outcome]
        else:
            pair = _spoiling_pair(pool)
            for c in pair:
                pool.remove(c)
            low = [pool.pop(0) for _ in range(2)]
            assert max(STRENGTH[c] for c in low) < STRENGTH[pair[0]]
            # Put the tie on seats that do not follow each other, for variety.
            tie_seats = (t % 4, (t + 2) % 4)
            trick[tie_seats[0]], trick[tie_seats[1]] = pair
            others = [s for s in range(4) if s not in tie_seats]
        for s, c in zip(others, low, strict=True):
            trick[s] = c
        assert rules.trick_winner(0, trick) == outcome, (trick, outcome)
        script.append(trick)
    return script


def _spoiling_pair(pool: list[str]) -> list[str]:
    groups: dict[int, list[str]] = {}
    for c in pool:
        groups.setdefault(STRENGTH[c], []).append(c)
    for strength in sorted(groups):
        cards = groups[strength]
        if len(cards) >= 2 and _two_below(pool, strength):
            return cards[:2]
    raise AssertionError("no spoiling pair left")


def _two_below(pool: list[str], strength: int) -> bool:
    return sum(1 for c in pool if STRENGTH[c] < strength) >= 2


def random_play(m: Match, rng: random.Random, max_actions: int | None = None) -> list[Any]:
    """Play random legal turn actions until the match ends (or ``max_actions``); the log."""
    log: list[Any] = []
    while not m.over and (max_actions is None or len(log) < max_actions):
        seat = m.to_act
        assert seat is not None
        if m.phase is Phase.CHANTER_DISCARD:   # uniform, without listing C(15, 6) discards
            action: Any = Discard(seat, tuple(rng.sample(m.hands[seat], 6)))
        else:
            action = rng.choice(m.legal_actions(seat))
        m.apply(action)
        log.append(action)
    return log


def codes_in(obj: object) -> set[str]:
    """Every card code anywhere inside a nested view/event structure (keys included)."""
    found: set[str] = set()
    stack: list[object] = [msgspec.to_builtins(obj)]   # typed views and events as plain data
    while stack:
        x = stack.pop()
        if isinstance(x, str):
            if x in STRENGTH:
                found.add(x)
        elif isinstance(x, dict):
            stack.extend(x.keys())
            stack.extend(x.values())
        elif isinstance(x, Iterable):
            stack.extend(x)
    return found
