"""Card-play heuristics for the beginner and the solid club player (levels easy, normal).

Both reason with what a seat can see: the trick so far, its hand and the unseen pool. The
facts they lean on are R10 (any card is legal, so a seat may always dump its lowest card),
R11 (the single strongest card wins; a tie for the top spoils the trick) and R12 (tricks are
counted per seat, never pooled by partners, so winning a trick the partner already holds
gains nothing).
"""

from __future__ import annotations

from protocol import TableView
from server.game import STRENGTH

from ..base import seat_of
from .knowledge import Knowledge


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


def easy_card(view: TableView) -> str:
    """A beginner: "if I can win the trick, play my best card; otherwise my worst one".

    It does know not to fight its partner for a trick (R12 makes that pointless), but it
    wastes big cards on small tricks and never spoils on purpose.
    """
    seat = seat_of(view)
    hand = ascending(view.hand)
    top, holder = trick_status(view)
    if holder is not None and holder == (seat + 2) % 4:
        return dump_card(hand, top, protect=True)
    if STRENGTH[hand[-1]] > top:
        return hand[-1]
    return hand[0]


class SafetyOdds:
    """P(no opponent still to play in this trick holds a card of strength >= x).

    Hypergeometric over the unseen cards: the opponents yet to play hold ``H`` of them, the
    cards a signal placed in the partner's hand are not threats, and the rest is spread over
    the partner's other cards, the talon and the discards (R8-R9).
    """

    def __init__(self, k: Knowledge, view: TableView) -> None:
        seat = k.seat
        pos = len(view.trick)
        after = [(seat + i) % 4 for i in range(1, 4 - pos)]
        opp_after = [s for s in after if s % 2 != seat % 2]
        self.any_opp = bool(opp_after)
        partner_known = k.must_have.get(k.partner, set())
        known_opp: set[str] = set()
        for s in opp_after:
            known_opp |= k.must_have.get(s, set())
        self.known_opp_max = max((STRENGTH[c] for c in known_opp), default=0)
        self.pool = sorted(
            (STRENGTH[c] for c in k.unseen if c not in partner_known and c not in known_opp),
        )
        draws = sum(k.hand_sizes[s] for s in opp_after)
        self.draws_unknown = max(0, draws - len(known_opp))
        self.population_unknown = max(1, len(self.pool))
        self._cache: dict[int, float] = {}

    def __call__(self, x: int) -> float:
        if not self.any_opp:
            return 1.0
        if x in self._cache:
            return self._cache[x]
        if self.known_opp_max >= x:
            p = 0.0
        else:
            threats = sum(1 for s in self.pool if s >= x)
            n, d = self.population_unknown, min(self.draws_unknown, self.population_unknown)
            p = 1.0
            for i in range(d):
                if n - i <= 0:
                    break
                p *= max(0, n - threats - i) / (n - i)
        self._cache[x] = p
        return p


def normal_card(view: TableView, k: Knowledge) -> str:
    """A solid club player's card (level normal).

    - Leading: lead the cheapest card that will probably stand (it keeps the lead, R11),
      else the lowest card.
    - The partner holds the trick with a card that will probably stand: dump the lowest card
      (R12: partners do not pool tricks, so overtaking gains nothing), never one that ties
      the partner's card (R11 would spoil it).
    - Otherwise take the trick with the *cheapest* card that beats it, keeping top cards
      for later; measured against stricter "only if it will stand" rules, contesting every
      trick cheaply wins clearly more deals.
    - But leave it when the partner, still to play, said it holds an unbeatable card.
    - If no card beats it and an opponent holds the trick, spoil it by matching the top
      card (R11: a tie for the top spoils the trick; the same seat leads again).
    - Else dump the lowest card.
    """
    seat = seat_of(view)
    partner = (seat + 2) % 4
    hand = ascending(view.hand)
    top, holder = trick_status(view)
    safe = SafetyOdds(k, view)
    if not view.trick:
        for c in hand:
            if safe(STRENGTH[c]) >= LEAD_SAFETY:
                return c
        return hand[0]
    if holder == partner and safe(top) >= PARTNER_SAFETY:
        return dump_card(hand, top, protect=True)
    if _partner_will_take(view, k, top):
        return dump_card(hand, top, protect=False)
    for c in hand:
        if STRENGTH[c] > top:
            return c
    if holder is not None and holder % 2 != seat % 2:
        for c in hand:
            if STRENGTH[c] == top:
                return c
    return dump_card(hand, top, protect=holder == partner)


#: Tuned with ``aluette-arena`` (normal vs random and easy).
LEAD_SAFETY = 0.7
PARTNER_SAFETY = 0.3


def _partner_will_take(view: TableView, k: Knowledge, top: int) -> bool:
    """The partner plays after me in this trick and said (R15) it holds a card that beats
    the trick and that no opponent can beat or tie: leave the trick to it (R12)."""
    if len(view.trick) > 1:      # the partner (two seats on) has already played
        return False
    for card in k.must_have.get(k.partner, ()):
        st = STRENGTH[card]
        if st > top and not any(STRENGTH[c] > st for c in k.unseen if c != card):
            return True
    return False
