"""Card play for the levels easy (a beginner's rule) and normal (a small search).

They reason with what a seat can see: the trick so far, its hand and the unseen pool. The
facts they lean on are R10 (any card is legal, so a seat may always dump its lowest card),
R11 (the single strongest card wins; a tie for the top spoils the trick) and R12 (tricks are
counted per seat, never pooled by partners, so winning a trick the partner already holds
gains nothing).
"""

from __future__ import annotations

import random

from protocol import TableView
from server.game import STRENGTH

from .base import seat_of
from .knowledge import Knowledge
from .reference import pimc_card
from .sampling import WorldSampler, sample_world_loose


def trick_status(view: TableView) -> tuple[int, int | None]:
    """R11 so far: the top strength in the current trick and who holds it (None if tied)."""
    top, holder, count = 0, None, 0
    for s, c in view.trick:
        st = STRENGTH[c]
        if st > top:
            top, holder, count = st, int(s), 1
        elif st == top:
            count += 1
    return top, (holder if count == 1 else None)


def ascending(hand: list[str]) -> list[str]:
    """Weakest first; the view lists the hand strongest first with a stable order (R3)."""
    return list(reversed(hand))


def dump_card(hand_asc: list[str], top: int, protect: bool) -> str:
    """The cheapest card to throw away (R10). With ``protect`` (the partner holds the trick)
    avoid a card equal to the top one, which would spoil the partner's trick (R11)."""
    if protect:
        for c in hand_asc:
            if STRENGTH[c] != top:
                return c
    return hand_asc[0]


#: How often ``easy`` plays a card at random instead of its rule: a beginner misreads the
#: trick now and then. Chosen with ``normal``'s world count to space the levels evenly
#: (docs/BOTS.md, the ladder): without it ``easy`` sat 121 Elo above ``random`` and 100
#: below ``normal``.
EASY_SLIP = 0.2


def easy_card(view: TableView, rng: random.Random, slip: float = EASY_SLIP) -> str:
    """A beginner: "if I can win the trick, play my best card; otherwise my worst one".

    It does know not to fight its partner for a trick (R12 makes that pointless), but it
    wastes big cards on small tricks, never spoils on purpose, and with probability
    ``slip`` plays any card (R10: every card is legal).
    """
    seat = seat_of(view)
    hand = ascending(view.hand)
    if rng.random() < slip:
        return rng.choice(hand)
    top, holder = trick_status(view)
    if holder is not None and holder == (seat + 2) % 4:
        return dump_card(hand, top, protect=True)
    if STRENGTH[hand[-1]] > top:
        return hand[-1]
    return hand[0]


#: Worlds the normal level searches per card. Fewer worlds, a weaker search: 12 beat the
#: greedy yardstick 0.593 and 9 beat it 0.560 over 400 duplicate deals; 9 keeps it above
#: its 0.55 target and spaces the levels evenly (docs/BOTS.md, the ladder).
NORMAL_WORLDS = 9


def normal_card(view: TableView, k: Knowledge, rng: random.Random) -> str:
    """Level normal: a small determinized search, the ``pimc`` yardstick's routine
    (:func:`.reference.pimc_card`) on :data:`NORMAL_WORLDS` worlds that honour the signals
    received (:mod:`.sampling`, R15), each card rolled out with the greedy rule (R11-R13).

    The rule it replaces (``normal_card`` in the frozen :mod:`.v1.heuristics`) lost to the
    plain greedy yardstick: share 0.486 over 400 duplicate deals (docs/BOTS.md).
    """
    worlds = WorldSampler(k)

    def sampler(r: random.Random) -> list[list[int]]:
        world = worlds.sample(r) or sample_world_loose(k, r)
        return [sorted(STRENGTH[c] for c in h) for h in world]

    return pimc_card(view, rng, NORMAL_WORLDS, sampler)
