"""What a seat can infer from its own view: the unseen cards and what signals told it.

Everything here is computed from the view dict alone (docs/ARCHITECTURE.md convention 4). The unseen
cards are the 48 of R1 minus the seat's hand, the cards played this deal and its own
discards (R9); they are somewhere in the other three hands, the talon (R8) or the other
discards, and only the hand sizes say how many of them each other seat holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from protocol import TableView
from server.game import ALL_CARDS, SIGNAL_CARD, STRENGTH

from .base import seat_of

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
    that sends an opening (:mod:`.signalling`) is taken to be a bot-like signaller whose
    card signals are complete: it holds no unsignalled carte majeure and exactly the aces it
    announced. A ``going_mordienne`` places the strongest cards (:func:`mordienne_cards`).
    These inferences only bias sampling; a wrong guess costs strength, never legality.
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
    planners: set[int] = set()
    for sig in view.signals:
        src = int(sig.from_seat)
        if src == seat:
            continue
        name = sig.signal
        if name == "going_mordienne":
            planners.add(src)       # a plan, not part of the opening (.signalling)
            continue
        senders.add(src)
        if name in _CARD_OF_SIGNAL:
            card = _CARD_OF_SIGNAL[name]
            if card in unseen_set:
                k.must_have.setdefault(src, set()).add(card)
        elif name == "aces" and isinstance(sig.n, int):
            already = sum(1 for c in k.played_by.get(src, ()) if c in ACES)
            k.aces_exact[src] = max(0, int(sig.n) - already)
        elif name == "useless_hand":
            k.forbidden.setdefault(src, set()).update(MAJEURE_CARDS + ACES)
    for src in planners:
        k.must_have.setdefault(src, set()).update(mordienne_cards(view, k, src))
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


def mordienne_cards(view: TableView, k: Knowledge, sender: int) -> list[str]:
    """The cards a ``going_mordienne`` from ``sender`` (R13, R15) says it holds.

    Our bots send it only with at least two sure winners (:mod:`.signalling`): cards stronger
    than every card the sender cannot see, so also stronger than the viewer's hand and every
    other unseen card, and never played without winning a trick. While the sender has won no
    trick it therefore still holds the strongest unseen cards: the two strongest when they
    stand strictly above the rest and the viewer's hand, else the strongest alone when it
    does, else nothing (a contradiction says the signal came from someone else's rule).
    """
    if any(t.winner == sender for t in view.tricks):
        return []                   # the plan is over: it has won a trick
    ranked = sorted(k.unseen, key=lambda c: -STRENGTH[c])
    mine = max((STRENGTH[c] for c in k.hand), default=0)
    for j in (2, 1):
        if len(ranked) < j:
            continue
        floor = STRENGTH[ranked[j]] if len(ranked) > j else 0
        if STRENGTH[ranked[j - 1]] > max(floor, mine):
            return ranked[:j]
    return []

