"""Determinization: deal the unseen cards into the other hands, consistent with the view.

The expert searches over sampled "worlds" (OpenSpiel's ``ResampleFromInfostate``): each
world gives every other seat exactly ``hand_sizes[s]`` of the unseen cards, honours the
signals received (a seat that said "monsieur" holds 3o, R15) and leaves the rest in the
talon or the discards (R8, R9), which nobody plays.

A search samples hundreds of worlds from one view, so :class:`WorldSampler` sorts out the
constraints once (which cards a signal placed, which cards some seat may not hold, and
where each of those may go) and each world then costs two shuffles and one weighted draw
per constrained card. It draws exactly the random numbers the one-shot routine it replaced
drew, in the same order, so a seeded search plays the same cards as before (the frozen
copy of that routine, ``server/bots/v1/sampling.py``, is the reference its tests compare
with).
"""

from __future__ import annotations

import random

from .knowledge import ACES, Knowledge


class WorldSampler:
    """Consistent deals of ``k``'s unseen cards, one :meth:`sample` per world."""

    __slots__ = (
        "_ace_counts",
        "_cap",
        "_contradiction",
        "_free",
        "_free_aces",
        "_hand",
        "_others",
        "_out_room",
        "_placed",
        "_restricted",
        "_seat",
    )

    def __init__(self, k: Knowledge) -> None:
        self._seat = k.seat
        self._hand = list(k.hand)
        others = [s for s in range(4) if s != k.seat]
        self._others = others
        self._cap = {s: k.hand_sizes[s] for s in others}
        # 1. Cards a signal placed: the same in every world.
        self._placed: dict[int, list[str]] = {s: [] for s in others}
        taken: set[str] = set()
        self._contradiction = False
        for s in others:
            for c in sorted(k.must_have.get(s, ())):
                if c in taken or len(self._placed[s]) >= self._cap[s]:
                    self._contradiction = True
                    break
                self._placed[s].append(c)
                taken.add(c)
            if self._contradiction:
                break
        pool = list(k.unseen)
        # 2. Exact ace counts: which aces go where is drawn per world.
        self._free_aces = [c for c in ACES if c in pool and c not in taken]
        self._ace_counts = [(s, k.aces_exact[s]) for s in others if s in k.aces_exact]
        ace_locked = {s for s, _ in self._ace_counts}
        # 3. Cards some seat may not hold, with the seats that may hold them; then the rest.
        #    An ace a count placed is skipped per world; with no count, no ace is placed.
        self._out_room = len(pool) - sum(self._cap.values())
        self._restricted: list[tuple[str, list[int]]] = []
        self._free: list[str] = []
        for c in pool:
            if c in taken:
                continue
            if (c in ACES and ace_locked) or any(c in f for f in k.forbidden.values()):
                allowed = [s for s in others
                           if not (c in ACES and s in ace_locked)
                           and c not in k.forbidden.get(s, ())]
                self._restricted.append((c, allowed))
            else:
                self._free.append(c)

    def sample(self, rng: random.Random) -> list[list[str]] | None:
        """One consistent deal: ``hands[s]`` for the other seats, the viewer's own hand at
        index ``k.seat``. None only if the constraints are contradictory (a human sent a
        false signal); the caller then samples without them (:func:`sample_world_loose`)."""
        if self._contradiction:
            return None
        cap = self._cap
        hands = {s: list(p) for s, p in self._placed.items()}
        free_aces = list(self._free_aces)
        rng.shuffle(free_aces)
        dealt_aces: set[str] = set()
        for s, n in self._ace_counts:
            if n > len(free_aces) or len(hands[s]) + n > cap[s]:
                return None
            for _ in range(n):
                c = free_aces.pop()
                hands[s].append(c)
                dealt_aces.add(c)
        # One constrained card at a time, to a slot in proportion to the room left.
        out_room = self._out_room
        for c, allowed in self._restricted:
            if c in dealt_aces:
                continue
            slots: list[int] = []
            weights: list[int] = []
            for s in allowed:
                room = cap[s] - len(hands[s])
                if room > 0:
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
        # All other cards uniformly: a shuffle sliced into the room left, the rest to the
        # talon and the discards.
        free = list(self._free)
        rng.shuffle(free)
        at = 0
        for s in self._others:
            room = cap[s] - len(hands[s])
            hands[s].extend(free[at : at + room])
            at += room
        if at > len(free):
            return None
        world: list[list[str]] = [[], [], [], []]
        world[self._seat] = list(self._hand)
        for s in self._others:
            world[s] = hands[s]
        return world


def sample_world(k: Knowledge, rng: random.Random) -> list[list[str]] | None:
    """One consistent deal of the unseen cards (:meth:`WorldSampler.sample`); a search that
    samples many worlds from one view prepares a :class:`WorldSampler` once instead."""
    return WorldSampler(k).sample(rng)


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


def _weighted(items: list[int], weights: list[int], rng: random.Random) -> int:
    total = sum(weights)
    r = rng.randrange(total)
    for item, w in zip(items, weights, strict=True):
        if r < w:
            return item
        r -= w
    return items[-1]
