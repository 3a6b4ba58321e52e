"""The expert: determinized Monte Carlo search (perfect-information Monte Carlo, PIMC).

For one card decision it samples worlds, deals of the unseen cards into the other hands that
agree with the hand sizes and the signals received (:mod:`.sampling`), plays every distinct
candidate card in every world (common random numbers: all candidates face the same worlds)
and finishes the deal with a fast greedy policy for all four seats, each of which plays a
random card now and then (:data:`ROLLOUT_NOISE`, its partner more often:
:data:`PARTNER_NOISE`), every candidate of a world with the same random draws. It picks the
card with the best mean *team* result: own team's points minus the other team's
(R12-R13a), so it will happily let its partner win or spoil a trick, and it values
mordienne at its 2 points.

Everything runs on strengths (R3 is all that decides a trick, R11), not codes. Cards of equal
strength are interchangeable, so candidates are the distinct strengths in hand.
"""

from __future__ import annotations

import math
import random
import time
from bisect import bisect_right

from protocol import TableView
from server.game import STRENGTH
from server.game.rules import TRICKS_PER_DEAL, deal_outcome

from .base import Budget, seat_of
from .heuristics import ascending, trick_status
from .inference import PlayModel, relax_for_risky
from .knowledge import Knowledge, read_view
from .sampling import WorldSampler, sample_world_loose

#: The play model's softness in the expert's own search. 1.0: plays do not weigh the worlds.
#: Measured with aluette-arena (docs/BOTS.md), weighting by the plays made the expert weaker,
#: not stronger: 0.476 against expert-v1 over 400 duplicate deals with ε = 0.3 and worlds
#: resampled by weight, 0.486 over 200 with ε = 0.5 and weighted averages (1.0: 0.500).
PLAY_SOFTNESS = 1.0


#: Probability that a seat in the expert's rollouts plays a random card instead of the
#: greedy one. The greedy rollout plays with every hand open, so it credits the other seats
#: with a precision no real player has (each knows only its own hand); a little noise makes
#: the rollout's opponents and partner as fallible as real ones. Measured with
#: aluette-arena against pimc (docs/BOTS.md): a perfect-information version scored 0.41 with
#: exact greedy rollouts of the true deal and 0.60-0.62 with noise 0.2-0.3; the expert's
#: own search, 150 worlds, 0.504 at 0, 0.532 at 0.1, 0.551 at 0.2, 0.545 at 0.3.
ROLLOUT_NOISE = 0.25
#: The searching seat's partner plays at random more often in its rollouts. Trusting the
#: partner to find the greedy line with every hand open is the costliest of the rollout's
#: illusions (docs/BOTS.md: exact partner 0.51 against pimc, noisy partner 0.54-0.55).
PARTNER_NOISE = 0.4


def expert_card(view: TableView, rng: random.Random, budget: Budget,
                softness: float = PLAY_SOFTNESS, noise: float = ROLLOUT_NOISE) -> str:
    """Choose a card by PIMC within ``budget.steps`` simulated card plays (module docstring).

    ``softness`` is the play model's ε (:mod:`.inference`): below 1.0 each searched world
    counts in proportion to how likely it makes the plays seen. Signals at a risky table
    (R16) are weighed whatever the softness.
    """
    # The server's cap on thinking time (Budget.seconds): read the clock only when there is
    # one, so the arena's and the tests' decisions depend on the budget's steps alone.
    deadline = None if budget.seconds is None else clock() + budget.seconds
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
    model = PlayModel(view, k, softness)
    infer = (softness < 1.0 and bool(model.obs)) or bool(model.signals)
    if infer:
        per_world += WEIGH_COST
    n_worlds = max(MIN_WORLDS, min(budget.worlds_cap, budget.steps // per_world))
    worlds = _worlds(k if not infer else relax_for_risky(k, view), rng, n_worlds)
    weights = [1.0] * len(worlds)
    if infer:
        log_w = [model.log_weight(w) for w in worlds]
        top = max(log_w)
        weights = [math.exp(lw - top) for lw in log_w]
    totals = [0.0] * len(cands)
    team = seat % 2
    utility = deal_utility(view, team)
    partner_noise = PARTNER_NOISE if noise else 0.0
    for done, (world, weight) in enumerate(zip(worlds, weights, strict=True)):
        if deadline is not None and done >= MIN_WORLDS and clock() >= deadline:
            break
        base = [sorted(STRENGTH[c] for c in h) for h in world]
        # Common random numbers: every candidate of this world is rolled out with the same
        # draws, so two candidates differ by their card, not by the rollouts' luck.
        draws = [rng.random() for _ in range(left)] if noise else None
        for i, cs in enumerate(cands):
            hands = [list(h) for h in base]
            hands[seat].remove(cs)
            result = playout(hands, leader, [*trick, cs], list(winners), noise, rng, draws,
                             seat ^ 2, partner_noise)
            totals[i] += weight * utility[team_value(result, team, mordienne_on) + 2]
    best = max(range(len(cands)), key=lambda i: (totals[i], -cands[i]))
    return reps[cands[best]]


#: Worlds the expert plays out, with and without the exchange, before voting on the chanter.
CHANTER_WORLDS = 48


def expert_vote(view: TableView, rng: random.Random, worlds: int = CHANTER_WORLDS) -> bool:
    """R9 by evaluation: sample the other hands and the talon, play each world out twice
    with the greedy rollout, once as dealt and once after the exchange (the talon dealt
    alternately to the dealer's left and the dealer, each keeping its nine strongest
    cards), and say yes when the exchange is worth more to this seat's team on average.

    Each team has one of the two receivers (they sit side by side, R4-R5), so what decides
    is whose hand the talon improves more, which depends on the cards this seat can see.
    """
    seat, dealer = seat_of(view), int(view.dealer)
    first = (dealer + 1) % 4
    team = seat % 2
    utility = deal_utility(view, team)
    mordienne_on = view.options.mordienne
    mine = sorted(STRENGTH[c] for c in view.hand)
    pool = [STRENGTH[c] for c in read_view(view).unseen]
    gain = 0.0
    for _ in range(worlds):
        rng.shuffle(pool)
        hands: list[list[int]] = [[], [], [], []]
        at = 0
        for s in range(4):
            if s == seat:
                hands[s] = list(mine)
            else:
                hands[s] = sorted(pool[at : at + 9])
                at += 9
        talon = pool[at : at + 12]
        plain = playout([list(h) for h in hands], first, [], [])
        swapped = [list(h) for h in hands]
        swapped[first] = sorted(swapped[first] + talon[0::2])[-9:]
        swapped[dealer] = sorted(swapped[dealer] + talon[1::2])[-9:]
        chanted = playout(swapped, first, [], [])
        gain += (utility[team_value(chanted, team, mordienne_on) + 2]
                 - utility[team_value(plain, team, mordienne_on) + 2])
    return gain > 0


def _worlds(k: Knowledge, rng: random.Random, n: int) -> list[list[list[str]]]:
    sampler = WorldSampler(k)
    return [sampler.sample(rng) or sample_world_loose(k, rng) for _ in range(n)]


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


#: The clock :attr:`Budget.seconds` is measured on (a seam for tests).
clock = time.perf_counter

#: A sampled world costs about as much as this many simulated card plays.
SAMPLE_COST = 40
#: Never fewer worlds than this, whatever the budget.
MIN_WORLDS = 4
#: Weighing a sampled world costs about as much as this many simulated card plays.
WEIGH_COST = 60


def playout(
    hands: list[list[int]], leader: int, trick: list[int], winners: list[int | None],
    noise: float = 0.0, rng: random.Random | None = None, draws: list[float] | None = None,
    partner_seat: int = -1, partner_noise: float = 0.0,
) -> list[int | None]:
    """Finish the deal with the greedy policy (:func:`greedy`) for every seat.

    ``hands`` are ascending strength lists (mutated), ``trick`` the strengths already down
    in play order from ``leader``. Returns the winners of all nine tricks (None = spoiled).
    With ``noise`` > 0 (and an ``rng``), each card is instead a uniformly random one from
    the hand with that probability (:data:`ROLLOUT_NOISE` says why); ``partner_seat`` plays
    with ``partner_noise`` instead (:data:`PARTNER_NOISE`). ``draws``, if given, are the
    uniform numbers to use, one per card played, instead of the rng's (common random
    numbers: the caller rolls several candidates out with the same luck).
    This loop is the expert's hot path, so :func:`greedy` is inlined here; the two must
    stay in step (tests/bots checks they agree when ``noise`` is 0).
    """
    if (noise or partner_noise) and rng is None and draws is None:
        raise ValueError("a noisy playout needs an rng or its draws")
    if draws is not None:
        rand = iter(draws).__next__
    else:
        rand = rng.random if rng is not None else (lambda: 1.0)
    # The last trick is forced (one card in every hand, R10), so it is scored straight from
    # the four cards. Unless the rollout draws from the caller's rng, skipping those four
    # plays changes nothing, not even which random numbers the caller sees next.
    forced_last = draws is not None or not (noise or partner_noise)
    top, count, holder = 0, 0, -1
    for i, st in enumerate(trick):
        if st > top:
            top, count, holder = st, 1, (leader + i) & 3
        elif st == top:
            count += 1
    pos = len(trick)
    while True:
        if pos == 0 and forced_last and len(winners) == TRICKS_PER_DEAL - 1:
            cards = [h.pop() for h in hands]
            top = max(cards)
            winners.append(cards.index(top) if cards.count(top) == 1 else None)
            return winners
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
            nz = partner_noise if seat == partner_seat else noise
            if nz and (r := rand()) < nz:
                # r / nz is uniform on [0, 1); min() guards against a rounded 1.0
                idx = min(int(r / nz * len(hand)), len(hand) - 1)
            elif mine and top > opp_max:
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


#: How much a match won outweighs a point of margin when the deal decides the match (R14).
MATCH_WEIGHT = 4.0


def deal_utility(view: TableView, team: int) -> list[float]:
    """What each result of this deal is worth to ``team``: index ``d + 2`` for a deal in
    which ``team`` scores ``d`` points more than the other team (d in -2..2, R12-R13).

    Points, unless this deal can decide a match of several deals: the last deal of a match
    of N deals (R14), or a deal after which a team may reach the target (R14a). Then what
    counts is the match result (won, drawn, lost) after the deal, ``MATCH_WEIGHT`` times a
    point, with the margin kept as the tie-break (a mordienne that does not change the
    result is still worth having). A one-deal match is scored on points alone: its result
    is the sign of the points, so points already say it, and mordienne keeps its 2 (R13).
    """
    opts = view.options
    points = view.points
    mine, theirs = int(points[team]), int(points[1 - team])
    target = opts.target_points
    deals = opts.deals
    last = target is None and deals > 1 and int(view.deal_number) >= deals
    out: list[float] = []
    for d in range(-2, 3):
        m2, t2 = mine + max(d, 0), theirs + max(-d, 0)
        if target is not None and (m2 >= target or t2 >= target):
            out.append(MATCH_WEIGHT * (1 if m2 >= target else -1) + d)
        elif last:
            out.append(MATCH_WEIGHT * ((m2 > t2) - (m2 < t2)) + d)
        else:
            out.append(float(d))
    return out


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

