"""Determinization: deal the unseen cards into the other hands, consistent with the view.

The expert searches over sampled "worlds" (OpenSpiel's ``ResampleFromInfostate``): each
world gives every other seat exactly ``hand_sizes[s]`` of the unseen cards, honours the
signals received (a seat that said "monsieur" holds 3o, R15) and leaves the rest in the
talon or the discards (R8, R9), which nobody plays.
"""

from __future__ import annotations

import random

from .knowledge import ACES, Knowledge


def sample_world(k: Knowledge, rng: random.Random) -> list[list[str]] | None:
    """One consistent deal of the unseen cards: ``hands[s]`` for the other seats.

    Index ``k.seat`` holds the viewer's own hand. Returns None only if the constraints are
    contradictory (a human sent a false signal); the caller then samples without them.
    """
    others = [s for s in range(4) if s != k.seat]
    cap = {s: k.hand_sizes[s] for s in others}
    hands: dict[int, list[str]] = {s: [] for s in others}
    pool = list(k.unseen)
    taken: set[str] = set()
    # 1. Cards a signal placed.
    for s in others:
        for c in sorted(k.must_have.get(s, ())):
            if c in taken or len(hands[s]) >= cap[s]:
                return None
            hands[s].append(c)
            taken.add(c)
    # 2. Exact ace counts.
    free_aces = [c for c in ACES if c in pool and c not in taken]
    rng.shuffle(free_aces)
    for s in others:
        n = k.aces_exact.get(s)
        if n is None:
            continue
        if n > len(free_aces) or len(hands[s]) + n > cap[s]:
            return None
        for _ in range(n):
            c = free_aces.pop()
            hands[s].append(c)
            taken.add(c)
    ace_locked = {s for s in others if s in k.aces_exact}
    # 3. Cards some seat may not hold (forbidden by a signal, or aces once a seat's count is
    #    fixed), one by one to a slot in proportion to the room left; then all other cards
    #    uniformly: a shuffle sliced into the room left, the rest to the talon/discards.
    out_room = len(pool) - sum(cap.values())
    restricted: list[str] = []
    free: list[str] = []
    for c in pool:
        if c in taken:
            continue
        (restricted if _is_restricted(k, c, ace_locked) else free).append(c)
    for c in restricted:
        slots: list[int] = []
        weights: list[int] = []
        for s in others:
            room = cap[s] - len(hands[s])
            if room > 0 and _allowed(k, s, c, ace_locked):
                slots.append(s)
                weights.append(room)
        if out_room > 0:
            slots.append(-1)
            weights.append(out_room)
        if not slots:
            return None
        pick = _weighted(slots, weights, rng)
        if pick < 0:
            out_room -= 1
        else:
            hands[pick].append(c)
    rng.shuffle(free)
    at = 0
    for s in others:
        room = cap[s] - len(hands[s])
        hands[s].extend(free[at : at + room])
        at += room
    if at > len(free):
        return None
    world: list[list[str]] = [[], [], [], []]
    world[k.seat] = list(k.hand)
    for s in others:
        world[s] = hands[s]
    return world


def sample_world_loose(k: Knowledge, rng: random.Random) -> list[list[str]]:
    """A world that only respects hand sizes: the fallback when signals contradict."""
    pool = list(k.unseen)
    rng.shuffle(pool)
    world: list[list[str]] = [[], [], [], []]
    world[k.seat] = list(k.hand)
    at = 0
    for s in range(4):
        if s == k.seat:
            continue
        world[s] = pool[at : at + k.hand_sizes[s]]
        at += k.hand_sizes[s]
    return world


def _is_restricted(k: Knowledge, card: str, ace_locked: set[int]) -> bool:
    if card in ACES and ace_locked:
        return True
    return any(card in f for f in k.forbidden.values())


def _allowed(k: Knowledge, seat: int, card: str, ace_locked: set[int]) -> bool:
    if card in ACES and seat in ace_locked:
        return False
    return card not in k.forbidden.get(seat, ())


def _weighted(items: list[int], weights: list[int], rng: random.Random) -> int:
    total = sum(weights)
    r = rng.randrange(total)
    for item, w in zip(items, weights, strict=True):
        if r < w:
            return item
        r -= w
    return items[-1]
