"""Reference opponents for the arena: fixed yardsticks, deliberately simple (issue 12).

``greedy`` and ``pimc`` are not levels a table offers; they exist so that strength is
measured against something that does not change when our own levels do (docs/BOTS.md).
Both are pure functions of the seat's view (docs/ARCHITECTURE.md convention 4).

- ``greedy`` (:func:`greedy_card`): play the lowest card when the partner holds the trick
  unbeatably (no unseen card can beat or tie it, R11) or this is the last card of the trick;
  else the cheapest card that beats the current top; else, when an opponent holds the trick,
  a card equal to its top card, which spoils the trick (R11); else the lowest card. "Lowest"
  skips a card that would tie the partner's winning card (that would spoil it, R11).
- ``pimc`` (:func:`pimc_card`): plain perfect-information Monte Carlo. 40 worlds sampled
  uniformly from the unseen cards (respecting hand sizes, ignoring signals); each candidate
  card is rolled out to the end of the deal with the greedy rule for all four seats (inside
  a sampled world "unbeatably" means no later opponent holds a card as strong); the
  candidate with the best total team score difference (R12, R13) wins, the cheaper card on
  a tie.
"""

from __future__ import annotations

import random
from bisect import bisect_right
from collections.abc import Callable

from protocol import TableView
from server.game import ALL_CARDS, STRENGTH
from server.game.rules import TRICKS_PER_DEAL, deal_outcome

from .base import seat_of

#: Worlds sampled per pimc decision (the issue's definition of the yardstick).
PIMC_WORLDS = 40


def _ascending(hand: list[str]) -> list[str]:
    return sorted(hand, key=lambda c: STRENGTH[c])


def _trick_top(view: TableView) -> tuple[int, int | None]:
    """R11 so far: (top strength, holder seat or None when nobody or a tie holds it)."""
    top, holder, count = 0, None, 0
    for s, c in view.trick:
        st = STRENGTH[c]
        if st > top:
            top, holder, count = st, int(s), 1
        elif st == top:
            count += 1
    return top, (holder if count == 1 else None)


def unseen_cards(view: TableView) -> list[str]:
    """R1 minus what this seat has seen: its hand, every card played, its own discards."""
    gone = set(view.hand) | set(view.discarded)
    for t in view.tricks:
        gone.update(t.cards)
    gone.update(c for _, c in view.trick)
    return [c for c in ALL_CARDS if c not in gone]


def _lowest(hand_asc: list[str], avoid: int) -> str:
    for c in hand_asc:
        if STRENGTH[c] != avoid:
            return c
    return hand_asc[0]


def greedy_card(view: TableView) -> str:
    """The ``greedy`` reference opponent's card (module docstring); ``view.hand`` must
    not be empty."""
    seat = seat_of(view)
    partner = (seat + 2) % 4
    hand = _ascending(list(view.hand))
    top, holder = _trick_top(view)
    last = len(view.trick) == 3
    if holder == partner and (
        last or not any(STRENGTH[c] >= top for c in unseen_cards(view))
    ):
        return _lowest(hand, top)
    for c in hand:
        if STRENGTH[c] > top:
            return c
    if holder is not None and holder % 2 != seat % 2:
        for c in hand:
            if STRENGTH[c] == top:
                return c
    return _lowest(hand, top if holder == partner else -1)


def greedy_index(hands: list[list[int]], seat: int, leader: int, trick: list[int]) -> int:
    """The greedy rule inside a sampled world: index into ``hands[seat]`` (ascending
    strengths). "Unbeatably" uses the world: no opponent still to play holds a card as
    strong as the partner's (R11)."""
    hand = hands[seat]
    pos = len(trick)
    top, count, at = 0, 0, -1
    for i, st in enumerate(trick):
        if st > top:
            top, count, at = st, 1, i
        elif st == top:
            count += 1
    holder = (leader + at) % 4 if count == 1 else -1
    partner = (seat + 2) % 4
    if holder == partner:
        opp_max = 0
        for i in range(1, 4 - pos):
            s = (seat + i) % 4
            if s != partner and hands[s] and hands[s][-1] > opp_max:
                opp_max = hands[s][-1]
        if pos == 3 or opp_max < top:
            return _dump(hand, top)
    i = bisect_right(hand, top)
    if i < len(hand):
        return i
    if holder >= 0 and holder % 2 != seat % 2:
        j = bisect_right(hand, top - 1)
        if j < len(hand) and hand[j] == top:
            return j
    return _dump(hand, top if holder == partner else -1)


def _dump(hand: list[int], avoid: int) -> int:
    for i, s in enumerate(hand):
        if s != avoid:
            return i
    return 0


def greedy_rollout(
    hands: list[list[int]], leader: int, trick: list[int], winners: list[int | None]
) -> list[int | None]:
    """Finish the deal with :func:`greedy_index` for every seat; the nine tricks' winners
    (None = spoiled, R11: the same seat leads again). ``hands`` are mutated."""
    trick = list(trick)
    while len(winners) < TRICKS_PER_DEAL:
        while len(trick) < 4:
            seat = (leader + len(trick)) % 4
            trick.append(hands[seat].pop(greedy_index(hands, seat, leader, trick)))
        top = max(trick)
        if trick.count(top) == 1:
            leader = (leader + trick.index(top)) % 4
            winners.append(leader)
        else:
            winners.append(None)
        trick = []
    return winners


def uniform_world(view: TableView, rng: random.Random) -> list[list[int]]:
    """One world: the unseen cards shuffled and dealt by hand size (R8), as ascending
    strength lists; the viewer's own hand at its index."""
    seat = seat_of(view)
    pool = unseen_cards(view)
    rng.shuffle(pool)
    world: list[list[int]] = [[], [], [], []]
    at = 0
    for s in range(4):
        if s == seat:
            world[s] = sorted(STRENGTH[c] for c in view.hand)
        else:
            n = int(view.hand_sizes[s])
            world[s] = sorted(STRENGTH[c] for c in pool[at : at + n])
            at += n
    return world


def pimc_card(view: TableView, rng: random.Random, worlds: int = PIMC_WORLDS,
              sampler: Callable[[random.Random], list[list[int]]] | None = None) -> str:
    """The ``pimc`` reference opponent's card (module docstring).

    ``sampler`` replaces the uniform worlds (the ``normal`` level samples worlds that honour
    the signals it received); the yardstick itself always uses :func:`uniform_world`.
    """
    seat = seat_of(view)
    hand = _ascending(list(view.hand))
    reps: dict[int, str] = {}
    for c in hand:
        reps.setdefault(STRENGTH[c], c)
    cands = sorted(reps)
    if len(cands) == 1:
        return reps[cands[0]]
    leader = int(view.leader)
    trick = [STRENGTH[c] for _, c in view.trick]
    done: list[int | None] = [t.winner for t in view.tricks]
    mordienne = view.options.mordienne
    team = seat % 2
    totals = [0] * len(cands)
    for _ in range(worlds):
        world = sampler(rng) if sampler is not None else uniform_world(view, rng)
        for i, st in enumerate(cands):
            hands = [list(h) for h in world]
            hands[seat].remove(st)
            winners = greedy_rollout(hands, leader, [*trick, st], list(done))
            w, pts, _ = deal_outcome(winners, mordienne)
            if w is not None:
                totals[i] += pts if w % 2 == team else -pts
    best = max(range(len(cands)), key=lambda i: (totals[i], -cands[i]))
    return reps[cands[best]]
