"""The expert's evaluation of one decision, from the seat's view alone.

It is the expert bot's own search (:mod:`server.bots.expert`: sampled deals of the unseen
cards consistent with the view, each finished by the expert's noisy greedy rollout), asked
for the value of *every* legal choice instead of the best one, with more worlds than a bot
can afford in play, and common random numbers: every choice of a decision faces the same
worlds and the same rollout luck, so two choices differ by what they are, not by chance.

A value is the seat's team's expected points minus the other team's for this deal
(R12-R13a: a mordienne counts its 2). Cards of equal strength are the same choice (R3,
R11). The chanter vote (R9) is valued as the expert votes: the deal played out as dealt,
and after the exchange (each taker keeping its nine strongest). Six discards are one
choice among 5,005; the one made and the expert's (its nine strongest kept) are valued.

Pure and CPU-bound: the runner calls :func:`evaluate` in worker processes.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from protocol import TableView
from server.bots.common import chanter_discards
from server.bots.expert import PARTNER_NOISE, ROLLOUT_NOISE, playout, team_value
from server.bots.inference import PlayModel, relax_for_risky
from server.bots.knowledge import Knowledge, read_view
from server.bots.sampling import WorldSampler, sample_world_loose
from server.game import STRENGTH, sort_by_strength

from .replay import Decision, discard_text
from .report import ChoiceValue, DecisionReview

#: R9: ways to choose the six discards among fifteen cards.
DISCARD_CHOICES = 5005


@dataclass(frozen=True, slots=True)
class Settings:
    """How hard the review looks: worlds per decision of each kind."""

    card_worlds: int = 600
    vote_worlds: int = 400
    discard_worlds: int = 300

    def to_dict(self) -> dict[str, int]:
        return {"card_worlds": self.card_worlds, "vote_worlds": self.vote_worlds,
                "discard_worlds": self.discard_worlds}


DEFAULT_SETTINGS = Settings()


def _seat(view: TableView) -> int:
    """The reviewed seat: a review's views are always a seat's, never a spectator's."""
    assert view.viewer is not None
    return view.viewer


def evaluate(decision: Decision, settings: Settings | None = None, salt: str = "0"
             ) -> DecisionReview:
    """Value ``decision``'s choices from its view; the random draws are seeded by ``salt``
    and where the decision is, so the same review gives the same figures."""
    settings = settings or DEFAULT_SETTINGS
    rng = random.Random(f"review:{salt}:{decision.deal}:{decision.kind}:{decision.trick}:"
                        f"{len(decision.view.hand)}:{decision.actual}")
    if decision.kind == "card":
        return _card(decision, rng, settings.card_worlds)
    if decision.kind == "chanter_vote":
        return _vote(decision, rng, settings.vote_worlds)
    return _discard(decision, rng, settings.discard_worlds)


#: A choice is preferred to the one made only if it is better by at least this many
#: standard errors of the paired difference (the same worlds, the same rollout luck) ...
SIGNIFICANCE = 3.0
#: ... and by at least this many points: a review points at real costs, not at noise.
MIN_GAIN = 0.05


def _judge(decision: Decision, samples: dict[str, list[float]], weights: list[float],
           order: list[str], unvalued: int = 0) -> DecisionReview:
    """The preferred choice and what the one made cost.

    ``samples[c][w]`` is choice ``c``'s result in world ``w`` (weighted by
    ``weights[w]``). The one made stands unless another beats it beyond noise
    (:data:`SIGNIFICANCE`, :data:`MIN_GAIN`); then the best one is preferred, and among
    choices the best does not beat beyond noise, the first in ``order`` (the weakest card),
    so that two reviews with other random draws name the same choice."""
    forced = len(samples) == 1 and len(order) == 1
    mass = sum(weights) or 1.0
    means = {c: sum(w * x for w, x in zip(weights, xs, strict=True)) / mass
             for c, xs in samples.items()}
    values = {c: means.get(c) for c in order}
    actual = decision.actual
    preferred, lost = actual, 0.0
    if not forced and means:
        best = max(means, key=lambda c: means[c])
        if best != actual and _beats(samples[best], samples[actual], weights):
            tied = [c for c in order if c in means
                    and not _beats(samples[best], samples[c], weights)]
            preferred = tied[0]
            lost = means[preferred] - means[actual]
    return DecisionReview(
        deal=decision.deal, kind=decision.kind, trick=decision.trick, actual=actual,
        preferred=preferred, lost=round(max(lost, 0.0), 4), matched=preferred == actual,
        forced=forced, choices=[ChoiceValue(c, None if (v := values[c]) is None
                                            else round(v, 4)) for c in order],
        worlds=0 if forced else len(weights), unvalued=unvalued)


def _beats(a: list[float], b: list[float], weights: list[float]) -> bool:
    """Whether ``a`` is better than ``b`` beyond noise: the weighted mean of the paired
    differences over the worlds exceeds both :data:`MIN_GAIN` and :data:`SIGNIFICANCE`
    standard errors."""
    if a is b:
        return False
    mass = sum(weights)
    if mass <= 0:
        return False
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    mean = sum(w * d for w, d in zip(weights, diffs, strict=True)) / mass
    var = sum(w * (d - mean) ** 2 for w, d in zip(weights, diffs, strict=True)) / mass
    n_eff = mass * mass / sum(w * w for w in weights)
    se = math.sqrt(var / n_eff) if n_eff > 1 else math.inf
    return mean > MIN_GAIN and mean > SIGNIFICANCE * se


def _sampler(view: TableView, k: Knowledge) -> tuple[Knowledge, PlayModel | None]:
    """At a risky table (R16) signals are weighed, not trusted, as the expert does."""
    model = PlayModel(view, k, 1.0)
    if model.signals:
        return relax_for_risky(k, view), model
    return k, None


def _worlds(view: TableView, k: Knowledge, rng: random.Random, n: int
            ) -> tuple[list[list[list[str]]], list[float]]:
    known, model = _sampler(view, k)
    sampler = WorldSampler(known)
    worlds = [sampler.sample(rng) or sample_world_loose(known, rng) for _ in range(n)]
    if model is None:
        return worlds, [1.0] * n
    logs = [model.log_weight(w) for w in worlds]
    top = max(logs)
    return worlds, [math.exp(x - top) for x in logs]


def _card(decision: Decision, rng: random.Random, n: int) -> DecisionReview:
    view = decision.view
    hand = sort_by_strength(list(view.hand))[::-1]          # weakest first
    classes = sorted({STRENGTH[c] for c in hand})
    if len(classes) == 1:                  # one card, or cards of one strength (R3): forced
        return _judge(decision, {decision.actual: [0.0]}, [1.0], [decision.actual])
    k = read_view(view)
    seat, team = k.seat, k.seat % 2
    leader = view.leader
    trick = [STRENGTH[c] for _, c in view.trick]
    winners: list[int | None] = [t.winner for t in view.tricks]
    mordienne_on = view.options.mordienne
    left = sum(view.hand_sizes)
    worlds, weights = _worlds(view, k, rng, n)
    results: list[list[float]] = [[] for _ in classes]
    for world in worlds:
        base = [sorted(STRENGTH[c] for c in h) for h in world]
        draws = [rng.random() for _ in range(left)]
        for i, strength in enumerate(classes):
            hands = [list(h) for h in base]
            hands[seat].remove(strength)
            result = playout(hands, leader, [*trick, strength], list(winners), ROLLOUT_NOISE,
                             rng, draws, seat ^ 2, PARTNER_NOISE)
            results[i].append(float(team_value(result, team, mordienne_on)))
    by_class = dict(zip(classes, results, strict=True))
    # Cards of equal strength are one choice (R3, R11): they share their results.
    return _judge(decision, {c: by_class[STRENGTH[c]] for c in hand}, weights, hand)


def _vote(decision: Decision, rng: random.Random, n: int) -> DecisionReview:
    view = decision.view
    seat, dealer = _seat(view), view.dealer
    first, team = (dealer + 1) % 4, seat % 2
    mordienne_on = view.options.mordienne
    mine = sorted(STRENGTH[c] for c in view.hand)
    pool = [STRENGTH[c] for c in read_view(view).unseen]
    yes: list[float] = []
    no: list[float] = []
    for _ in range(n):
        rng.shuffle(pool)
        hands: list[list[int]] = []
        at = 0
        for s in range(4):
            if s == seat:
                hands.append(list(mine))
            else:
                hands.append(sorted(pool[at:at + 9]))
                at += 9
        talon = pool[at:at + 12]
        draws = [rng.random() for _ in range(36)]
        plain = playout([list(h) for h in hands], first, [], [], ROLLOUT_NOISE, rng, draws,
                        seat ^ 2, PARTNER_NOISE)
        swapped = [list(h) for h in hands]
        swapped[first] = sorted(swapped[first] + talon[0::2])[-9:]
        swapped[dealer] = sorted(swapped[dealer] + talon[1::2])[-9:]
        chanted = playout(swapped, first, [], [], ROLLOUT_NOISE, rng, draws, seat ^ 2,
                          PARTNER_NOISE)
        no.append(float(team_value(plain, team, mordienne_on)))
        yes.append(float(team_value(chanted, team, mordienne_on)))
    return _judge(decision, {"yes": yes, "no": no}, [1.0] * n, ["yes", "no"])


def _discard(decision: Decision, rng: random.Random, n: int) -> DecisionReview:
    view = decision.view
    seat, dealer = _seat(view), view.dealer
    first, team = (dealer + 1) % 4, seat % 2
    mordienne_on = view.options.mordienne
    hand = list(view.hand)
    expert = discard_text(chanter_discards(view))
    order = [decision.actual] + ([expert] if expert != decision.actual else [])
    kept = {c: sorted(STRENGTH[x] for x in hand if x not in set(c.split())) for c in order}
    k = read_view(view)
    worlds, weights = _worlds(view, k, rng, n)
    results: dict[str, list[float]] = {c: [] for c in order}
    for world in worlds:
        base = [sorted(STRENGTH[c] for c in h)[-9:] for h in world]   # the other taker too
        draws = [rng.random() for _ in range(36)]
        for choice in order:
            hands = [list(h) for h in base]
            hands[seat] = list(kept[choice])
            result = playout(hands, first, [], [], ROLLOUT_NOISE, rng, draws, seat ^ 2,
                             PARTNER_NOISE)
            results[choice].append(float(team_value(result, team, mordienne_on)))
    return _judge(decision, results, weights, order, DISCARD_CHOICES - len(order))


#: Hints are asked for during play: fewer worlds than a review, still several bots' worth.
HINT_SETTINGS = Settings(card_worlds=300, vote_worlds=200, discard_worlds=100)


def recommend(view: TableView, settings: Settings | None = None, salt: str = "hint"
              ) -> tuple[str, list[ChoiceValue]]:
    """What the expert would do now, from this view alone: its choice, and every choice it
    valued (a table's hint, issue 28 Build 3). The weakest card (or "no", or the expert's
    own discard) unless another choice is better beyond noise, as a review judges."""
    phase = view.phase
    number = view.deal_number
    if phase == "play":
        weakest = sort_by_strength(list(view.hand))[-1]
        decision = Decision(number, "card", view, weakest, trick=len(view.tricks) + 1)
    elif phase == "chanter_vote":
        decision = Decision(number, "chanter_vote", view, "no")
    elif phase == "chanter_discard":
        decision = Decision(number, "discard", view, discard_text(chanter_discards(view)))
    else:
        raise ValueError(f"nothing to decide in phase {phase!r}")
    verdict = evaluate(decision, settings or HINT_SETTINGS, salt)
    return verdict.preferred, verdict.choices
