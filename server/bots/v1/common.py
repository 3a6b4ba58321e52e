"""Shared bot behaviour outside card play: the chanter (R9) and partner signals (R15).

These are heuristics every non-random level uses; card play is where levels differ.
"""

from __future__ import annotations

from protocol import TableView
from server.game import STRENGTH, Signal, sort_by_strength

from ..base import seat_of
from .knowledge import ACES, MAJEURE_CARDS

_SIGNAL_OF_CARD = {
    "3o": "monsieur", "3c": "madame", "2o": "borgne", "2c": "vache",
    "9c": "grand_neuf", "9o": "petit_neuf", "2b": "deux_de_chene", "2e": "deux_d_ecrit",
}


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


def truthful_signals(view: TableView) -> list[Signal]:
    """R15-R16: tell the partner, once per deal, which important cards this seat holds.

    Sent only before the seat plays its first card of the deal, so the hand announced is the
    whole hand and a partner can rely on the announcement being complete: every carte
    majeure held, the number of aces, or "useless_hand" when there is neither. Nothing is
    sent when the table has signals off.
    """
    if view.options.signals == "off" or view.phase != "play":
        return []
    seat = seat_of(view)
    if any(seat == s for s, _ in _played_by_any(view)):
        return []
    already = {(s.signal, s.n) for s in view.signals_sent}
    sent_names = {name for name, _ in already}
    hand = view.hand
    wanted: list[tuple[str, int | None]] = [
        (_SIGNAL_OF_CARD[c], None) for c in sort_by_strength(hand) if c in _SIGNAL_OF_CARD
    ]
    aces = sum(1 for c in hand if c in ACES)
    if aces:
        wanted.append(("aces", aces))
    if not wanted and max((STRENGTH[c] for c in hand), default=0) < STRENGTH["1o"]:
        wanted.append(("useless_hand", None))
    return [Signal(seat, name, n) for name, n in wanted if name not in sent_names]


def _played_by_any(view: TableView) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    for t in view.tricks:
        out.extend(((t.leader + i) % 4, c) for i, c in enumerate(t.cards))
    out.extend((int(s), c) for s, c in view.trick)
    return out
