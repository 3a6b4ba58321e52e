"""The expert: determinized Monte Carlo search (perfect-information Monte Carlo, PIMC).

For one card decision it samples worlds, deals of the unseen cards into the other hands that
agree with the hand sizes and the signals received (:mod:`.sampling`), plays every distinct
candidate card in every world (common random numbers: all candidates face the same worlds)
and finishes the deal with a fast greedy policy for all four seats. It picks the card with
the best mean *team* result: own team's points minus the other team's (R12-R13a), so it will
happily let its partner win or spoil a trick, and it values mordienne at its 2 points.

Everything runs on strengths (R3 is all that decides a trick, R11), not codes. Cards of equal
strength are interchangeable, so candidates are the distinct strengths in hand.
"""

from __future__ import annotations

import random
from bisect import bisect_right

from protocol import TableView
from server.game import STRENGTH
from server.game.rules import TRICKS_PER_DEAL, deal_outcome

from ..base import Budget
from .heuristics import ascending, trick_status
from .knowledge import Knowledge, read_view
from .sampling import sample_world, sample_world_loose


def expert_card(view: TableView, rng: random.Random, budget: Budget) -> str:
    """Choose a card by PIMC within ``budget.steps`` simulated card plays (module docstring)."""
    k = read_view(view)
    hand = ascending(view.hand)
    reps: dict[int, str] = {}
    for c in hand:
        reps.setdefault(STRENGTH[c], c)
    cands = sorted(reps)
    sure = _partner_sure_top(view, k)
    if sure is not None and cands[0] < sure:
        # R11-R12: the partner's card will take this trick whatever happens; overtaking or
        # matching it only spends a card to move (or spoil) a trick within the team.
        cands = [c for c in cands if c < sure]
    if len(cands) == 1:
        return reps[cands[0]]
    seat = k.seat
    leader = int(view.leader)
    trick = [STRENGTH[c] for _, c in view.trick]
    winners: list[int | None] = [t.winner for t in view.tricks]
    mordienne_on = view.options.mordienne
    # Cost of one world: a sample plus one playout per candidate, each as long as the cards
    # left to play. Fixing the total keeps every decision near the same time (p99 ~ p50):
    # early decisions see fewer worlds, late ones (short playouts) more.
    left = sum(view.hand_sizes)
    per_world = len(cands) * max(1, left) + SAMPLE_COST
    n_worlds = max(MIN_WORLDS, min(budget.worlds_cap, budget.steps // per_world))
    totals = [0.0] * len(cands)
    team = seat % 2
    for _ in range(n_worlds):
        world = sample_world(k, rng) or sample_world_loose(k, rng)
        base = [sorted(STRENGTH[c] for c in h) for h in world]
        for i, cs in enumerate(cands):
            hands = [list(h) for h in base]
            hands[seat].remove(cs)
            result = playout(hands, leader, [*trick, cs], list(winners))
            totals[i] += team_value(result, team, mordienne_on)
    best = max(range(len(cands)), key=lambda i: (totals[i], -cands[i]))
    return reps[cands[best]]


def _partner_sure_top(view: TableView, k: Knowledge) -> int | None:
    """The partner's strength if the partner holds the trick and no opponent still to play
    can beat or tie it (R11: no unseen card is as strong); else None."""
    top, holder = trick_status(view)
    if holder != k.partner:
        return None
    pos = len(view.trick)
    opp_after = [(k.seat + i) % 4 for i in range(1, 4 - pos) if i % 2 == 1]
    if opp_after and any(STRENGTH[c] >= top for c in k.unseen):
        return None
    return top


#: A sampled world costs about as much as this many simulated card plays.
SAMPLE_COST = 40
#: Never fewer worlds than this, whatever the budget.
MIN_WORLDS = 4


def playout(
    hands: list[list[int]], leader: int, trick: list[int], winners: list[int | None]
) -> list[int | None]:
    """Finish the deal with the greedy policy (:func:`greedy`) for every seat.

    ``hands`` are ascending strength lists (mutated), ``trick`` the strengths already down
    in play order from ``leader``. Returns the winners of all nine tricks (None = spoiled).
    This loop is the expert's hot path, so :func:`greedy` is inlined here; the two must
    stay in step (tests/bots checks they agree).
    """
    top, count, holder = 0, 0, -1
    for i, st in enumerate(trick):
        if st > top:
            top, count, holder = st, 1, (leader + i) & 3
        elif st == top:
            count += 1
    pos = len(trick)
    while True:
        while pos < 4:
            seat = (leader + pos) & 3
            hand = hands[seat]
            partner = seat ^ 2
            if pos == 0:
                opp_max = hands[(seat + 1) & 3][-1]
                o3 = hands[(seat + 3) & 3][-1]
                if o3 > opp_max:
                    opp_max = o3
                partner_max = hands[partner][-1]
            elif pos == 1:
                opp_max = hands[(seat + 1) & 3][-1]
                partner_max = hands[partner][-1]
            elif pos == 2:
                opp_max = hands[(seat + 1) & 3][-1]
                partner_max = 0
            else:
                opp_max = partner_max = 0
            mine = count == 1 and holder == partner
            if mine and top > opp_max:
                idx = _dump(hand, top)
            else:
                need = top if top > opp_max else opp_max
                if partner_max > need:
                    idx = _dump(hand, top if mine else -1)
                else:
                    idx = bisect_right(hand, need)
                    if idx == len(hand):
                        if count == 1 and not mine and opp_max <= top:
                            j = bisect_right(hand, top - 1)
                            idx = j if j < len(hand) and hand[j] == top else _dump(hand, -1)
                        else:
                            idx = _dump(hand, top if mine else -1)
            st = hand.pop(idx)
            if st > top:
                top, count, holder = st, 1, seat
            elif st == top:
                count += 1
            pos += 1
        if count == 1:
            winners.append(holder)
            leader = holder
        else:
            winners.append(None)        # R11: spoiled, the same seat leads again
        if len(winners) >= TRICKS_PER_DEAL:
            return winners
        top, count, holder, pos = 0, 0, -1, 0


def team_value(winners: list[int | None], team: int, mordienne_on: bool) -> int:
    """``team``'s points minus the other team's for a finished deal (R12, R13, R13a)."""
    winner, points, _counts = deal_outcome(winners, mordienne_on)
    if winner is None:
        return 0
    return points if winner % 2 == team else -points


def greedy(hands: list[list[int]], seat: int, leader: int, trick: list[int]) -> int:
    """Index in ``hands[seat]`` of the card a sharp player who could see the world would play.

    Win with the cheapest card no later opponent can beat or tie; leave the trick to the
    partner when the partner holds it or will take it; spoil (R11) an opponent's trick by
    matching when that is the best left; otherwise dump the lowest card (R10).
    """
    hand = hands[seat]
    pos = len(trick)
    top = max(trick) if trick else 0
    holder = -1
    if trick and trick.count(top) == 1:
        holder = (leader + trick.index(top)) % 4
    partner = (seat + 2) % 4
    opp_max = 0
    partner_max = 0
    for i in range(1, 4 - pos):
        s = (seat + i) % 4
        h = hands[s]
        if h:
            if s == partner:
                partner_max = h[-1]
            elif h[-1] > opp_max:
                opp_max = h[-1]
    if holder == partner and top > opp_max:
        return _dump(hand, top)
    need = top if top > opp_max else opp_max
    if partner_max > need:
        return _dump(hand, top if holder == partner else -1)
    i = bisect_right(hand, need)
    if i < len(hand):
        return i
    if holder >= 0 and holder != partner and opp_max <= top:
        j = bisect_right(hand, top - 1)
        if j < len(hand) and hand[j] == top:
            return j
    return _dump(hand, top if holder == partner else -1)


def _dump(hand: list[int], avoid: int) -> int:
    if hand[0] != avoid or len(hand) == 1:
        return 0
    for i, s in enumerate(hand):
        if s != avoid:
            return i
    return 0

