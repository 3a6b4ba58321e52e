"""Where the expert loses points: its decision regret against an oracle that sees the deal.

    .venv/bin/python bench/bot_regret.py [--pairs 60] [--rollouts 300] [--workers 2]

Collects the expert's card decisions (two or more distinct strengths in hand) from
``--pairs`` duplicate pairs of one-deal matches against ``pimc`` (signals off, the arena's
seeding), then for each decision:

- the **oracle** value of every candidate strength: the mean team result (R12-R13) of
  ``--rollouts`` noisy greedy playouts of the *true* deal (noise 0.25 for every seat, the
  same draws for every candidate), the search a bot that could see every hand would run;
- the card each **variant** of the expert picks, and its regret: the oracle's best value
  minus the value of that card, in points of the deal.

Variants: ``default`` (the expert as tables run it); ``other_seed`` (the same with other
random draws: the noise floor of this measure); ``budget_x4`` (four times the simulated
card plays and worlds: what sampling error costs); ``inference`` (worlds weighted by the
play model, ``inference.SOFTNESS``: what reading the plays is worth); ``true_world`` (every
sampled world replaced by the real deal: what hidden information costs).

It also reports how much the play model sharpens the belief about hidden cards: the mean
probability the sampled worlds give to the true holder of each card in another hand,
uniform worlds against weighted ones, by trick.

Prints one JSON object. Each variant's ``minus_default`` is the mean paired difference of
regret and its 95% half-width; differences inside the ``other_seed`` one are noise.
The figures are in docs/BOTS.md ("Where the points go").
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from protocol import TableView
from server.bots import expert, get_bot
from server.bots.base import DEFAULT_BUDGET, Budget, seat_of
from server.bots.inference import SOFTNESS, PlayModel, location_belief
from server.bots.knowledge import read_view
from server.game import STRENGTH, Match, Options, view

ORACLE_NOISE = 0.25
VARIANTS = ("default", "other_seed", "budget_x4", "inference", "true_world")
#: Trick ranges the figures are broken down by (tricks finished before the decision).
PHASES = ((0, 2), (2, 4), (4, 6), (6, 9))

Position = tuple[TableView, list[list[str]], str]


def collect(pairs: int, seed: str) -> list[Position]:
    """The expert's card decisions with a choice, with the true hands at that moment."""
    out: list[Position] = []
    for i in range(pairs):
        for levels in (["expert", "pimc"] * 2, ["pimc", "expert"] * 2):
            game = f"{seed}:{i}"
            m, _ = Match.new(Options(deals=1, first_dealer=i % 4, signals="off"), game)
            while not m.over:
                seat = m.to_act
                assert seat is not None
                v = view(m, seat)
                key = f"arena:{game}:{m.version}:{seat}"
                if levels[seat] == "expert" and v.phase == "play" and \
                        len({STRENGTH[c] for c in v.hand}) > 1:
                    out.append((v, [list(h) for h in m.hands], key))
                action = get_bot(levels[seat]).decide(v, random.Random(key),
                                                      DEFAULT_BUDGET).action
                assert action is not None
                m.apply(action)
    return out


def oracle(v: TableView, hands: list[list[str]], rollouts: int) -> dict[int, float]:
    """Each candidate strength's mean team result over noisy playouts of the true deal."""
    seat = seat_of(v)
    team = seat % 2
    leader = int(v.leader)
    trick = [STRENGTH[c] for _, c in v.trick]
    winners = [t.winner for t in v.tricks]
    mordienne = v.options.mordienne
    base = [sorted(STRENGTH[c] for c in h) for h in hands]
    left = sum(len(h) for h in hands)
    rng = random.Random(1)
    values = dict.fromkeys(sorted(set(base[seat])), 0.0)
    for _ in range(rollouts):
        draws = [rng.random() for _ in range(left)]
        for st in values:
            hs = [list(h) for h in base]
            hs[seat].remove(st)
            result = expert.playout(hs, leader, [*trick, st], list(winners), ORACLE_NOISE,
                                    rng, draws)
            values[st] += expert.team_value(result, team, mordienne)
    return {st: total / rollouts for st, total in values.items()}


@contextmanager
def sampler(replace: Callable[..., list[list[list[str]]]] | None) -> Iterator[None]:
    """Run the expert with its world sampler replaced (``true_world``)."""
    original = expert._worlds
    if replace is not None:
        expert._worlds = replace
    try:
        yield
    finally:
        expert._worlds = original


def choice(variant: str, v: TableView, hands: list[list[str]], key: str) -> int:
    """The strength the expert picks under ``variant``."""
    rng = random.Random(key + ("'" if variant == "other_seed" else ""))
    budget = Budget(DEFAULT_BUDGET.steps * 4, DEFAULT_BUDGET.worlds_cap * 4) \
        if variant == "budget_x4" else DEFAULT_BUDGET
    softness = SOFTNESS if variant == "inference" else expert.PLAY_SOFTNESS
    replace = None
    if variant == "true_world":
        def replace(_k: object, _rng: random.Random, n: int) -> list[list[list[str]]]:
            return [[list(h) for h in hands] for _ in range(n)]
    with sampler(replace):
        return STRENGTH[expert.expert_card(v, rng, budget, softness=softness)]


def belief(v: TableView, hands: list[list[str]], key: str) -> tuple[float, float]:
    """Mean probability of the true holder of each card in another hand: uniform worlds,
    then the same worlds weighted by the play model."""
    seat = seat_of(v)
    k = read_view(v)
    worlds = expert._worlds(k, random.Random(key), 400)
    model = PlayModel(v, k, SOFTNESS)
    weighted = location_belief(worlds, [model.log_weight(w) for w in worlds], seat)
    uniform = location_belief(worlds, None, seat)
    truth = [(s, c) for s in range(4) if s != seat for c in hands[s]]
    if not truth:
        return math.nan, math.nan
    return (statistics.mean(uniform[c][s] if c in uniform else 0.0 for s, c in truth),
            statistics.mean(weighted[c][s] if c in weighted else 0.0 for s, c in truth))


def measure(args: tuple[Position, int]) -> dict[str, Any]:
    (v, hands, key), rollouts = args
    values = oracle(v, hands, rollouts)
    best = max(values.values())
    regret = {name: best - values[choice(name, v, hands, key)] for name in VARIANTS}
    uniform, weighted = belief(v, hands, key)
    return {"tricks": len(v.tricks), "regret": regret, "belief": (uniform, weighted)}


def half_width(xs: list[float]) -> float:
    return 1.96 * statistics.stdev(xs) / math.sqrt(len(xs)) if len(xs) > 1 else math.nan


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=60)
    parser.add_argument("--rollouts", type=int, default=300)
    parser.add_argument("--seed", default="regret")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    positions = collect(args.pairs, args.seed)
    jobs = [(p, args.rollouts) for p in positions]
    if args.workers > 1:
        import multiprocessing

        with multiprocessing.get_context("spawn").Pool(args.workers) as pool:
            rows = pool.map(measure, jobs, chunksize=8)
    else:
        rows = [measure(j) for j in jobs]

    def mean(xs: list[float]) -> float:
        return round(statistics.mean(xs), 4) if xs else math.nan

    out: dict[str, Any] = {"positions": len(rows), "rollouts": args.rollouts,
                           "regret": {}, "minus_default": {}, "by_tricks": {}}
    for name in VARIANTS:
        out["regret"][name] = mean([r["regret"][name] for r in rows])
        if name != "default":
            d = [r["regret"][name] - r["regret"]["default"] for r in rows]
            out["minus_default"][name] = [mean(d), round(half_width(d), 4)]
    for lo, hi in PHASES:
        sub = [r for r in rows if lo <= r["tricks"] < hi]
        out["by_tricks"][f"{lo}-{hi - 1}"] = {
            "positions": len(sub),
            "regret": {name: mean([r["regret"][name] for r in sub]) for name in VARIANTS},
            "belief_uniform": mean([r["belief"][0] for r in sub]),
            "belief_inferred": mean([r["belief"][1] for r in sub]),
        }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
