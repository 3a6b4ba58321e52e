"""Which partner signals (R15) a bot sends, and when: chosen for what they tell the partner.

A signal is worth what the partner can do with it and costs what the opponents who notice it
can do with it (R16). Two moments:

- **The opening**, before the seat's first card of a deal: each carte majeure held, the
  number of aces, or ``useless_hand`` when there is neither. The partner's search samples
  only worlds that honour it (:mod:`.knowledge`), and because the opening is sent whole
  before any card is played, the partner may also read what it leaves out.
- **going_mordienne** (R13), during play, once: the seat has won no trick yet and holds
  enough *sure winners* (cards stronger than every card it cannot see, so nothing can beat
  or spoil them, R11) to take the last tricks and outnumber every other seat
  (:func:`mordienne_plan`). Nothing can stop such cards, so what the signal tells is where
  the strongest cards are: while the sender has won no trick they are still in its hand,
  which the partner's sampler uses (:func:`.knowledge.read_view`).

Who hears decides what is sent (R16). At a ``private`` table only the partner does, so
telling everything costs nothing. At a ``risky`` table each of the two opponents also
notices a signal with probability ``r`` (the table's ``signal_risk``), so a signal is sent
only when what it tells the partner outweighs what it gives away in expectation:
``1 > 2 r × leak``, where ``leak`` (:data:`LEAK`) is what the signal is worth to an
opponent relative to the partner. A sure winner leaks least: an opponent who knows where
it is can only keep its strong cards out of its way, never beat it. Any other card can be
overtaken or spoiled by an opponent who knows it is there, and a count of aces or a weak
hand tells the opponents as much as the partner.
"""

from __future__ import annotations

from math import ceil

from protocol import TableView
from server.game import SIGNAL_CARD, STRENGTH, Signal, sort_by_strength
from server.game.rules import TRICKS_PER_DEAL

from .base import seat_of
from .knowledge import ACES, cards_played, read_view

#: R15's card signals, looked up by card (the vocabulary is server.game's SIGNAL_CARD).
_SIGNAL_OF_CARD = {card: signal for signal, card in SIGNAL_CARD.items()}

#: What a signal is worth to an opponent who notices it, relative to the partner (module
#: docstring). At a risky table a signal goes out when ``2 * signal_risk * LEAK < 1``.
LEAK = {
    "sure_winner": 0.5,      # a card no card the sender cannot see can beat or tie
    "card": 1.0,             # any other carte majeure: it can be overtaken or spoiled
    "aces": 1.0,
    "useless_hand": 1.0,
    "going_mordienne": 0.5,  # only sure winners stand behind it
}

#: A mordienne needs k >= 2 tricks in a row (R13).
MIN_RUN = 2


def chosen_signals(view: TableView) -> list[Signal]:
    """The signals this seat sends now (module docstring); none when signals are off."""
    opts = view.options
    mode = opts.signals
    if mode == "off" or view.phase != "play" or not view.hand:
        return []
    seat = seat_of(view)
    risk = opts.signal_risk if mode == "risky" else 0.0
    sent = {(s.signal, s.n) for s in view.signals_sent}
    sent_names = {name for name, _ in sent}
    wanted: list[tuple[str, int | None, str]] = []
    if not any(s == seat for s, _ in cards_played(view)):
        wanted.extend(_opening(view))
    if "going_mordienne" not in sent_names and mordienne_plan(view):
        wanted.append(("going_mordienne", None, "going_mordienne"))
    return [
        Signal(seat, name, n) for name, n, kind in wanted
        if name not in sent_names and 2.0 * risk * LEAK[kind] < 1.0
    ]


def _opening(view: TableView) -> list[tuple[str, int | None, str]]:
    """(signal, n, kind of leak) for the whole hand, before the seat's first card."""
    hand = view.hand
    sure = set(sure_winners(view))
    out: list[tuple[str, int | None, str]] = [
        (_SIGNAL_OF_CARD[c], None, "sure_winner" if c in sure else "card")
        for c in sort_by_strength(hand) if c in _SIGNAL_OF_CARD
    ]
    aces = sum(1 for c in hand if c in ACES)
    if aces:
        out.append(("aces", aces, "aces"))
    if not out and max((STRENGTH[c] for c in hand), default=0) < STRENGTH["1o"]:
        out.append(("useless_hand", None, "useless_hand"))
    return out


def sure_winners(view: TableView) -> list[str]:
    """Cards in hand stronger than every card this seat cannot see (R3, R11): played, each
    takes its trick whatever the others hold. Strongest first."""
    unseen = read_view(view).unseen
    above = max((STRENGTH[c] for c in unseen), default=0)
    return [c for c in sort_by_strength(view.hand) if STRENGTH[c] > above]


def mordienne_plan(view: TableView) -> bool:
    """R13: can this seat still make a mordienne with the cards it is sure of?

    It has won no trick this deal, mordienne is on, and its sure winners (at least
    :data:`MIN_RUN`) are more than any other seat can reach:
    that seat's tricks so far plus a third (rounded up) of the tricks before the run,
    the share it gets if the others split them evenly.
    """
    if not view.options.mordienne:
        return False
    seat = seat_of(view)
    counts = [0, 0, 0, 0]
    for t in view.tricks:
        if t.winner is not None:
            counts[int(t.winner)] += 1
    if counts[seat]:
        return False
    left = TRICKS_PER_DEAL - len(view.tricks)
    run = len(sure_winners(view))
    if run < MIN_RUN:           # never more than the tricks left: they are cards in hand
        return False
    others = max(counts[s] for s in range(4) if s != seat)
    return run > others + ceil((left - run) / 3)
