"""Shared bot behaviour outside card play: the chanter (R9). Signals are :mod:`.signalling`.

These are heuristics every non-random level uses; card play is where levels differ.
"""

from __future__ import annotations

from protocol import TableView
from server.game import sort_by_strength

from .base import seat_of
from .knowledge import MAJEURE_CARDS


def chanter_vote(view: TableView) -> bool:
    """R9: the two seats that would take the talon always gain, so they say yes.

    The other two seats keep their hands either way and each team gets one of the two
    receivers (dealer's left and dealer sit side by side, R4-R5), so a seat says yes unless
    its own hand is already strong (three or more cartes majeures): then the talon can only
    arm the seats that would beat its cards.
    """
    seat, dealer = seat_of(view), int(view.dealer)
    if seat in (dealer, (dealer + 1) % 4):
        return True
    return sum(1 for c in view.hand if c in MAJEURE_CARDS) < 3


def chanter_discards(view: TableView) -> list[str]:
    """R9: keep the nine strongest cards (R3), discard the six weakest."""
    hand = sort_by_strength(list(view.hand))
    return hand[-6:]
