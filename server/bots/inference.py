"""Inference: weight sampled worlds by how likely they make what the table has seen.

Policy-based inference (Rebstock, Solinas, Buro & Sturtevant 2019): a world (a deal of the
unseen cards, :mod:`.sampling`) is more likely when, holding the cards that world gives them,
the other players would have played the cards they did play. Each card played this deal by
another seat is scored under a *model* of that player giving a probability ``q`` to the card
it chose, made soft by ``softness`` ε: the play counts ``(1 - ε) q + ε / n`` for ``n``
distinct strengths in that hand. ``ε = 1`` is uniform (no inference); small ε trusts the
model. Two models:

- ``"fitted"`` (the default, :func:`card_probability`): choice rates per category of card
  (the cheapest card that beats the trick, a tie, the lowest card, ...) by position in the
  trick and holder, fitted on the plays of searching bots (:data:`WEIGHTS`).
- ``"rule"`` (:func:`model_strength`): the card rule at the core of ``greedy`` and of the
  old ``normal`` level, ``q`` = 1 for its card and 0 for the others. Exact for rule players,
  it misreads searching ones (docs/BOTS.md has the figures).

What a model needs is the player's hand *at the time*: the cards the world gives it now
plus the cards it has played since, and what it could not see then (R1 minus that hand and
the cards already down), so a world is scored in a few microseconds per past card.

Signals (R15-R16) enter the same way. At a ``private`` table every signal comes from the
partner and is taken as true: the sampler enforces it (:mod:`.sampling`). At a ``risky``
table a signal may be a bluff meant for the opponents who notice it, so it is a soft
constraint: a world that agrees with it keeps weight ``1 - r``, one that contradicts it ``r``,
with ``r`` the table's ``signal_risk``.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from protocol import TableView
from server.game import ALL_CARDS, SIGNAL_CARD, STRENGTH

from .base import seat_of
from .knowledge import Knowledge, mordienne_cards

#: Default softness of the play model (arena runs against pimc, docs/BOTS.md).
SOFTNESS = 0.3

_ALL_STRENGTHS = sorted(STRENGTH[c] for c in ALL_CARDS)


@dataclass(frozen=True, slots=True)
class Observation:
    """One card another seat played: who, what was down before it (strengths, in play
    order from ``leader``), the strength it played, and its index in the deal's play order."""

    seat: int
    leader: int
    before: tuple[int, ...]
    played: int
    order: int


def observations(view: TableView) -> tuple[list[Observation], list[list[int]]]:
    """The other seats' plays this deal, and every seat's plays as strengths in order."""
    seat = seat_of(view)
    obs: list[Observation] = []
    plays: list[list[int]] = [[], [], [], []]
    order = 0
    tricks = [(t.leader, list(t.cards)) for t in view.tricks]
    tricks.append((int(view.leader), [c for _, c in view.trick]))
    for leader, cards in tricks:
        before: list[int] = []
        for i, c in enumerate(cards):
            s = (leader + i) % 4
            st = STRENGTH[c]
            if s != seat:
                obs.append(Observation(s, leader, tuple(before), st, order))
            plays[s].append(st)
            before.append(st)
            order += 1
    return obs, plays


def model_strength(hand: Sequence[int], seat: int, leader: int, before: Sequence[int],
                   unseen_ge: int) -> int:
    """The model player's card (as a strength) from an ascending ``hand`` of strengths.

    The core rule of ``normal`` and ``greedy``: leave a trick the partner holds when nobody
    can take it from it (``unseen_ge``: how many cards the player could not see are at
    least as strong as the top, R11), and dump the lowest card without spoiling it; else
    the cheapest card that beats the top; else tie an opponent's top card (R11 spoil);
    else the lowest card (R10).
    """
    top, count, at = 0, 0, -1
    for i, st in enumerate(before):
        if st > top:
            top, count, at = st, 1, i
        elif st == top:
            count += 1
    holder = (leader + at) % 4 if count == 1 else -1
    if holder == (seat + 2) % 4 and (len(before) == 3 or unseen_ge == 0):
        for st in hand:
            if st != top:
                return st
        return hand[0]
    i = bisect_right(hand, top)
    if i < len(hand):
        return hand[i]
    if holder >= 0 and (holder - seat) % 2 == 1:
        j = bisect_left(hand, top)
        if j < len(hand) and hand[j] == top:
            return top
    if holder == (seat + 2) % 4:
        for st in hand:
            if st != top:
                return st
    return hand[0]


#: Categories of a card relative to the hand and the trick's top (R11): the cheapest card
#: that beats the top, the strongest card in hand (when it beats and is not the cheapest),
#: the beaters in between, a card that ties the top, the lowest card below it, and the
#: other cards below it. Each distinct strength in a hand is one alternative.
BEAT_LOW, BEAT_MAX, BEAT_MID, TIE, DUMP_LOW, DUMP_MID = range(6)


def situation(seat: int, leader: int, before: Sequence[int]) -> tuple[int, int, int]:
    """(position in the trick, who holds it: 0 nobody/tied, 1 partner, 2 opponent, top)."""
    top, count, at = 0, 0, -1
    for i, st in enumerate(before):
        if st > top:
            top, count, at = st, 1, i
        elif st == top:
            count += 1
    partner_holds = count == 1 and (leader + at) % 4 == (seat + 2) % 4
    rel = 0 if count != 1 else 1 if partner_holds else 2
    return len(before), rel, top


def categories(distinct: Sequence[int], top: int) -> list[int]:
    """The category of each of the ascending ``distinct`` strengths of a hand."""
    out: list[int] = []
    first_beat = bisect_right(distinct, top)
    last = len(distinct) - 1
    for i, st in enumerate(distinct):
        if st > top:
            out.append(BEAT_LOW if i == first_beat else BEAT_MAX if i == last else BEAT_MID)
        elif st == top:
            out.append(TIE)
        else:
            out.append(DUMP_LOW if i == 0 else DUMP_MID)
    return out


#: Choice rate per available alternative, by (position, holder) and category, fitted on the
#: plays of the searching bots (pimc and expert-v1, 240 one-deal games, seed "0":
#: ``aluette-arena --fit-model --deals 240``, docs/BOTS.md). A card
#: of category c is chosen with probability proportional to ``WEIGHTS[pos][rel][c]``.
WEIGHTS: list[list[list[float]]] = [
    [[0.359, 0.149, 0.18, 0.5, 0.5, 0.5],
     [0.5, 0.5, 0.5, 0.5, 0.5, 0.5],
     [0.5, 0.5, 0.5, 0.5, 0.5, 0.5]],
    [[0.5, 0.5, 0.5, 0.5, 0.5, 0.5],
     [0.5, 0.5, 0.5, 0.5, 0.5, 0.5],
     [0.313, 0.024, 0.049, 0.242, 0.679, 0.074]],
    [[0.3, 0.14, 0.179, 0.184, 0.451, 0.081],
     [0.209, 0.1, 0.195, 0.073, 0.559, 0.083],
     [0.34, 0.151, 0.17, 0.317, 0.435, 0.079]],
    [[0.335, 0.026, 0.024, 0.206, 0.569, 0.145],
     [0.19, 0.005, 0.013, 0.12, 0.685, 0.132],
     [0.533, 0.033, 0.017, 0.571, 0.373, 0.064]],
]


def card_probability(hand: Sequence[int], seat: int, leader: int, before: Sequence[int],
                     played: int, weights: list[list[list[float]]] | None = None) -> float:
    """P(the player plays a card of strength ``played`` | its ascending ``hand``)."""
    pos, rel, top = situation(seat, leader, before)
    table = (weights or WEIGHTS)[pos][rel]
    distinct = sorted(set(hand))
    cats = categories(distinct, top)
    total = 0.0
    mine = 0.0
    for st, c in zip(distinct, cats, strict=True):
        w = table[c]
        total += w
        if st == played:
            mine = w
    return mine / total if total > 0 else 1.0 / len(distinct)


def fit_weights(samples: Sequence[tuple[int, int, list[int], int]]) -> list[list[list[float]]]:
    """Choice rates from (pos, rel, categories of the hand's alternatives, chosen index)."""
    chosen = [[[0.0] * 6 for _ in range(3)] for _ in range(4)]
    offered = [[[0.0] * 6 for _ in range(3)] for _ in range(4)]
    for pos, rel, cats, i in samples:
        chosen[pos][rel][cats[i]] += 1
        for c in cats:
            offered[pos][rel][c] += 1
    return [[[round((chosen[p][r][c] + 0.5) / (offered[p][r][c] + 1.0), 3) for c in range(6)]
             for r in range(3)] for p in range(4)]


class PlayModel:
    """Scores worlds against the plays seen so far (module docstring)."""

    def __init__(self, view: TableView, k: Knowledge, softness: float = SOFTNESS,
                 model: str = "fitted") -> None:
        self.softness = softness
        self.fitted = model == "fitted"
        self.obs, self.plays = observations(view)
        self.seat = k.seat
        # Every card down this deal, in play order (strengths).
        order: list[int] = []
        tricks = [list(t.cards) for t in view.tricks] + [[c for _, c in view.trick]]
        for cards in tricks:
            order.extend(STRENGTH[c] for c in cards)
        # Per observation: the trick's top before the play, and how many cards at least that
        # strong were not yet down (the world decides how many of those were in the hand).
        self._tops: list[tuple[int, int]] = []
        for o in self.obs:
            top = max(o.before) if o.before else 0
            down = sum(1 for st in order[: o.order] if st >= top)
            self._tops.append((top, _count_ge(_ALL_STRENGTHS, top) - down))
        # For each observation, the cards that seat has played from then on: they were
        # still in its hand when it chose (the observations come in play order).
        self._later: list[list[int]] = []
        done = [0, 0, 0, 0]
        for o in self.obs:
            self._later.append(self.plays[o.seat][done[o.seat]:])
            done[o.seat] += 1
        self.signals = _soft_signals(view, k)

    def log_weight(self, world: list[list[str]]) -> float:
        """log P(plays seen, soft signals | world) up to a constant."""
        eps = self.softness
        total = 0.0
        if eps < 1.0:
            base = [sorted(STRENGTH[c] for c in h) for h in world]
            for o, later, (top, outside_ge) in zip(self.obs, self._later, self._tops,
                                                    strict=True):
                hand = sorted(base[o.seat] + later) if later else base[o.seat]
                n = len(set(hand))
                if n <= 1:
                    continue
                if self.fitted:
                    q = card_probability(hand, o.seat, o.leader, o.before, o.played)
                else:
                    # Cards the player could not see then, at least as strong as the top:
                    # all such cards, minus those down before its turn and those in its hand.
                    unseen_ge = outside_ge - _count_ge(hand, top)
                    choice = model_strength(hand, o.seat, o.leader, o.before, unseen_ge)
                    q = 1.0 if choice == o.played else 0.0
                total += math.log((1.0 - eps) * q + eps / n)
        for seat, card, agree, disagree in self.signals:
            total += agree if card in world[seat] else disagree
        return total


def _count_ge(sorted_vals: Sequence[int], x: int) -> int:
    return len(sorted_vals) - bisect_left(sorted_vals, x)


def _soft_signals(view: TableView, k: Knowledge) -> list[tuple[int, str, float, float]]:
    """R16 risky: (seat, card, log(1 - r), log r) for each card a signal still places (a card
    signal, R15, or the strongest cards behind a ``going_mordienne``)."""
    opts = view.options
    if opts.signals != "risky":
        return []
    r = min(max(opts.signal_risk, 0.01), 0.99)
    out: list[tuple[int, str, float, float]] = []
    unseen = set(k.unseen)
    for sig in view.signals:
        src = int(sig.from_seat)
        if src == k.seat:
            continue
        if sig.signal == "going_mordienne":
            cards = mordienne_cards(view, k, src)
        else:
            card = SIGNAL_CARD.get(sig.signal)
            cards = [card] if card is not None and card in unseen else []
        out.extend((src, c, math.log(1.0 - r), math.log(r)) for c in cards)
    return out


def relax_for_risky(k: Knowledge, view: TableView) -> Knowledge:
    """At a risky table (R16) signals are not facts: drop the hard constraints they put on
    sampling (they are weighed by :class:`PlayModel` instead)."""
    if view.options.signals != "risky":
        return k
    return Knowledge(k.seat, k.hand, k.played, k.unseen, k.hand_sizes, played_by=k.played_by)


def location_belief(worlds: list[list[list[str]]], log_weights: list[float] | None,
                    seat: int) -> dict[str, list[float]]:
    """P(card is in seat s's hand) for s = 0..3, plus index 4 = nobody's hand (the talon or
    the discards, R8-R9), over weighted worlds (uniform when ``log_weights`` is None)."""
    if log_weights is None:
        ws = [1.0] * len(worlds)
    else:
        top = max(log_weights)
        ws = [math.exp(lw - top) for lw in log_weights]
    total = sum(ws)
    belief: dict[str, list[float]] = {}
    for w, world in zip(ws, worlds, strict=True):
        for s in range(4):
            if s == seat:
                continue
            for c in world[s]:
                belief.setdefault(c, [0.0] * 5)[s] += w / total
    for probs in belief.values():
        probs[4] = max(0.0, 1.0 - sum(probs[:4]))
    return belief


__all__ = [
    "SOFTNESS", "WEIGHTS", "Observation", "PlayModel", "card_probability", "categories",
    "fit_weights", "location_belief", "model_strength", "observations", "relax_for_risky",
    "situation",
]
