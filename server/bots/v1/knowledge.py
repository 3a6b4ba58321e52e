"""What a seat can infer from its own view: the unseen cards and what signals told it.

Everything here is computed from the view dict alone (docs/ARCHITECTURE.md convention 4). The unseen
cards are the 48 of R1 minus the seat's hand, the cards played this deal and its own
discards (R9); they are somewhere in the other three hands, the talon (R8) or the other
discards, and only the hand sizes say how many of them each other seat holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from protocol import TableView
from server.game import ALL_CARDS, SIGNAL_CARD

from ..base import seat_of

ACES = ("1o", "1c", "1b", "1e")
ACE_STRENGTH = 11
#: The eight unique cartes majeures (R3), strongest first.
MAJEURE_CARDS = ("3o", "3c", "2o", "2c", "9c", "9o", "2b", "2e")
_CARD_OF_SIGNAL = dict(SIGNAL_CARD)


@dataclass(slots=True)
class Knowledge:
    """The facts a seat's view implies, in the form the bots' search and heuristics need."""

    seat: int
    hand: list[str]
    played: list[str]
    unseen: list[str]                      # in ALL_CARDS order, so sampling is deterministic
    hand_sizes: list[int]
    must_have: dict[int, set[str]] = field(default_factory=dict)
    forbidden: dict[int, set[str]] = field(default_factory=dict)
    aces_exact: dict[int, int] = field(default_factory=dict)
    played_by: dict[int, list[str]] = field(default_factory=dict)

    @property
    def partner(self) -> int:
        return (self.seat + 2) % 4


def cards_played(view: TableView) -> list[tuple[int, str]]:
    """(seat, card) for every card down this deal: finished tricks, then the current one."""
    out: list[tuple[int, str]] = []
    for t in view.tricks:
        lead = t.leader
        out.extend(((lead + i) % 4, c) for i, c in enumerate(t.cards))
    out.extend((int(s), c) for s, c in view.trick)
    return out


def read_view(view: TableView) -> Knowledge:
    """Derive the unseen pool and the signal constraints (R15) from one seat's view.

    Signals are gestures, not proofs (R16), but our bots send only true ones, so a card
    signal from seat s means s holds that card unless it has been played since. A partner
    that signals at all is taken to be a bot-like signaller whose card signals are complete:
    it holds no unsignalled carte majeure and exactly the aces it announced. That inference
    is only used to bias sampling; a wrong guess costs strength, never legality.
    """
    seat = seat_of(view)
    hand = list(view.hand)
    seen_plays = cards_played(view)
    played = [c for _, c in seen_plays]
    gone = set(hand) | set(played) | set(view.discarded)
    unseen = [c for c in ALL_CARDS if c not in gone]
    k = Knowledge(seat, hand, played, unseen, list(view.hand_sizes))
    for s, c in seen_plays:
        k.played_by.setdefault(s, []).append(c)
    unseen_set = set(unseen)
    senders: set[int] = set()
    for sig in view.signals:
        src = int(sig.from_seat)
        if src == seat:
            continue
        senders.add(src)
        name = sig.signal
        if name in _CARD_OF_SIGNAL:
            card = _CARD_OF_SIGNAL[name]
            if card in unseen_set:
                k.must_have.setdefault(src, set()).add(card)
        elif name == "aces" and isinstance(sig.n, int):
            already = sum(1 for c in k.played_by.get(src, ()) if c in ACES)
            k.aces_exact[src] = max(0, int(sig.n) - already)
        elif name == "useless_hand":
            k.forbidden.setdefault(src, set()).update(MAJEURE_CARDS + ACES)
    partner = k.partner
    if partner in senders:
        have = k.must_have.get(partner, set())
        k.forbidden.setdefault(partner, set()).update(
            c for c in MAJEURE_CARDS if c not in have
        )
        k.aces_exact.setdefault(partner, 0)
    # Drop constraints the public record has made impossible (a signaller played its card).
    for s, cards in list(k.must_have.items()):
        k.must_have[s] = {c for c in cards if c in unseen_set}
    for s, n in list(k.aces_exact.items()):
        avail = sum(1 for c in ACES if c in unseen_set)
        k.aces_exact[s] = min(n, avail, k.hand_sizes[s])
    return k

