"""``aluette-arena``: measure one bot level against another over duplicate deals.

Duplicate play cancels card luck: every dealt hand is played twice with the same seed (so
the same cards, R8 and ``rules.deal_rng``) and the same dealer, once with team A on seats
0 and 2 and once with team A on seats 1 and 3 (R5). One *duplicate pair* is one sample.

Statistic: A's share of all points, ``R = sum(a_j) / sum(a_j + b_j)`` over pairs j. Its 95%
confidence interval uses the delta method for a ratio of means with pairs as independent
samples: with ``t_j = a_j + b_j`` and residuals ``d_j = a_j - R * t_j``,
``Var(R) ~= sum(d_j^2) / (n (n - 1) mean(t)^2)`` and the interval is ``R +- 1.96 sqrt(Var)``
(clipped to [0, 1]). Pairs in which nobody scored carry no information about the share and
contribute nothing but still count in n. See :func:`share_ci`.

The arena is a shell over pure bots: it owns the matches (bots only ever get views), the
RNGs (seeded per decision from the deal seed, the match version and the seat) and the clock.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from server.game import STRENGTH, Match, Options, view

from . import ALL_LEVELS, choose_signals, get_bot
from .base import DEFAULT_BUDGET, Budget


@dataclass(slots=True)
class PairResult:
    """Team A's and team B's points over the two games of one duplicate pair, and how
    many of the two matches each won (R14: more points; equal totals are a draw)."""

    a: int
    b: int
    a_won: int = 0
    b_won: int = 0


@dataclass(slots=True)
class RunResult:
    pairs: list[PairResult] = field(default_factory=list)
    times: dict[str, list[float]] = field(default_factory=dict)


def play_game(
    levels: Sequence[str],
    seed: int | str,
    dealer: int,
    options: dict[str, object],
    budget: Budget,
    times: dict[str, list[float]],
) -> list[int]:
    """Play one match (one deal unless ``options`` says ``deals``) with ``levels[seat]`` at
    each seat; return the team points."""
    # Chance scheme 1 (server/game/chance.py): the deals every measured figure was played on.
    m, _ = Match.new(Options(**{"deals": 1, "first_dealer": dealer, **options}), seed,  # type: ignore[arg-type]
                     draws=1)
    polled = -1
    while not m.over:
        if m.phase == "play" and polled != len(m.deals):
            polled = len(m.deals)           # once per deal, before its first card
            if m.options.signals != "off":
                # R15: every seat may signal before the first card, so partners hear each
                # other before anyone plays (bots only signal before their first card).
                for i in range(4):
                    s = (m.leader + i) % 4
                    rng = random.Random(f"arena:{seed}:sig:{s}")
                    for sig in choose_signals(levels[s], view(m, s), rng):
                        m.apply(sig)
        seat = m.to_act
        assert seat is not None
        level = levels[seat]
        v = view(m, seat)
        rng = random.Random(f"arena:{seed}:{m.version}:{seat}")
        t0 = time.perf_counter()
        decision = get_bot(level).decide(v, rng, budget)
        elapsed = (time.perf_counter() - t0) * 1000.0
        if v.phase == "play":
            times.setdefault(level, []).append(elapsed)
        for sig in decision.signals:
            m.apply(sig)
        assert decision.action is not None
        m.apply(decision.action)
    return list(m.points)


def play_pair(
    a: str, b: str, index: int, base_seed: int | str, options: dict[str, object],
    budget: Budget, times: dict[str, list[float]],
) -> PairResult:
    """Deal ``index``: the same cards twice, team A on seats 0/2 then on seats 1/3."""
    seed = f"{base_seed}:{index}"
    dealer = index % 4
    first = play_game([a, b, a, b], seed, dealer, options, budget, times)
    second = play_game([b, a, b, a], seed, dealer, options, budget, times)
    return PairResult(first[0] + second[1], first[1] + second[0],
                      a_won=int(first[0] > first[1]) + int(second[1] > second[0]),
                      b_won=int(first[1] > first[0]) + int(second[0] > second[1]))


def _run_chunk(args: tuple[str, str, list[int], int | str, dict[str, object], Budget]) -> RunResult:
    a, b, indices, seed, options, budget = args
    out = RunResult()
    for i in indices:
        out.pairs.append(play_pair(a, b, i, seed, options, budget, out.times))
    return out


def run(
    a: str, b: str, deals: int, seed: int | str = 0, options: dict[str, object] | None = None,
    budget: Budget = DEFAULT_BUDGET, workers: int = 1,
) -> RunResult:
    """Play ``deals`` duplicate pairs (2 * deals games); results in deal order."""
    options = options or {}
    if workers <= 1:
        return _run_chunk((a, b, list(range(deals)), seed, options, budget))
    import multiprocessing

    chunks = [list(range(w, deals, workers)) for w in range(workers)]
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        parts = pool.map(_run_chunk, [(a, b, c, seed, options, budget) for c in chunks])
    merged = RunResult()
    by_index: dict[int, PairResult] = {}
    for chunk, part in zip(chunks, parts, strict=True):
        by_index.update(zip(chunk, part.pairs, strict=True))
        for level, ts in part.times.items():
            merged.times.setdefault(level, []).extend(ts)
    merged.pairs = [by_index[i] for i in range(deals)]
    return merged


def share_ci(pairs: Sequence[tuple[float, float]], z: float = 1.96) -> tuple[float, float, float]:
    """A's share of all points and its delta-method confidence interval (module docstring).

    ``pairs`` are (a_j, b_j) per duplicate pair. Returns (share, low, high); with no points
    at all the share is 0.5 with the whole [0, 1] interval, and with one pair the interval
    is [0, 1] too (no variance estimate).
    """
    n = len(pairs)
    total_a = sum(a for a, _ in pairs)
    total = sum(a + b for a, b in pairs)
    if total == 0:
        return 0.5, 0.0, 1.0
    r = total_a / total
    if n < 2:
        return r, 0.0, 1.0
    mean_t = total / n
    ss = sum((a - r * (a + b)) ** 2 for a, b in pairs)
    se = math.sqrt(ss / (n * (n - 1))) / mean_t
    return r, max(0.0, r - z * se), min(1.0, r + z * se)


def paired_difference(new: Sequence[tuple[float, float]], old: Sequence[tuple[float, float]],
                      z: float = 1.96) -> tuple[float, float, float]:
    """A's share in ``new`` minus its share in ``old``, both played on the same duplicate
    deals, and the difference's delta-method confidence interval.

    Pairing is what makes a small change measurable: a deal that is easy for A is easy in
    both runs, so the per-deal luck cancels and the interval is far narrower than the two
    runs' own intervals suggest. Returns (difference, low, high).
    """
    n = len(new)
    if n != len(old):
        raise ValueError(f"the runs have {n} and {len(old)} deals: not the same deals")
    t_new = sum(a + b for a, b in new)
    t_old = sum(a + b for a, b in old)
    r_new = sum(a for a, _ in new) / t_new if t_new else 0.5
    r_old = sum(a for a, _ in old) / t_old if t_old else 0.5
    d = r_new - r_old
    if n < 2 or not t_new or not t_old:
        return d, -1.0, 1.0
    m_new, m_old = t_new / n, t_old / n
    ss = sum(((a1 - r_new * (a1 + b1)) / m_new - (a2 - r_old * (a2 + b2)) / m_old) ** 2
             for (a1, b1), (a2, b2) in zip(new, old, strict=True))
    se = math.sqrt(ss / (n * (n - 1)))
    return d, d - z * se, d + z * se


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in [0, 100]); 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100.0 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def summary(a: str, b: str, deals: int, result: RunResult,
            match_deals: int = 1) -> dict[str, object]:
    """The JSON document ``--json`` prints (keys in the documented order)."""
    a_points = sum(p.a for p in result.pairs)
    b_points = sum(p.b for p in result.pairs)
    share, low, high = share_ci([(p.a, p.b) for p in result.pairs])
    decision_ms = {
        level: {"p50": round(percentile(result.times.get(level, []), 50), 3),
                "p99": round(percentile(result.times.get(level, []), 99), 3)}
        for level in dict.fromkeys((a, b))
    }
    doc: dict[str, object] = {
        "a": a, "b": b, "deals": deals, "a_points": a_points, "b_points": b_points,
        "a_share": round(share, 4), "ci95": [round(low, 4), round(high, 4)],
        "decision_ms": decision_ms,
    }
    if match_deals > 1:
        doc["match_deals"] = match_deals
        doc["matches_won"] = {"a": sum(p.a_won for p in result.pairs),
                              "b": sum(p.b_won for p in result.pairs)}
    return doc


def round_robin(levels: Sequence[str], deals: int, seed: int | str,
                options: dict[str, object], budget: Budget,
                workers: int) -> dict[str, object]:
    """Every pair of ``levels`` over the same ``deals`` duplicate deals, then their Elo
    ratings (:mod:`.ladder`). Each pair's summary goes to stderr as it finishes."""
    from .ladder import ratings

    pairs: list[dict[str, object]] = []
    shares: dict[tuple[str, str], float] = {}
    for i, a in enumerate(levels):
        for b in levels[i + 1:]:
            started = time.perf_counter()
            doc = summary(a, b, deals, run(a, b, deals, seed, options, budget, workers))
            doc["seconds"] = round(time.perf_counter() - started, 1)
            print(json.dumps(doc), file=sys.stderr, flush=True)
            pairs.append(doc)
            shares[a, b] = float(doc["a_share"])  # type: ignore[arg-type]
    elo = ratings(levels, shares)
    return {"levels": list(levels), "deals": deals, "seed": seed, "options": options,
            "pairs": pairs, "elo": {lvl: round(r) for lvl, r in elo.items()}}


def fit_play_model(a: str, b: str, deals: int, seed: int | str = "fit",
                   budget: Budget = DEFAULT_BUDGET) -> list[list[list[float]]]:
    """Refit :data:`.inference.WEIGHTS`: play ``deals`` one-deal games of A and B (A on
    seats 0/2 and 1/3 in turn, signals off) and count, for each position and holder of the
    trick, how often each category of card is chosen per time it is on offer."""
    from .inference import categories, fit_weights, situation

    samples: list[tuple[int, int, list[int], int]] = []
    for d in range(deals):
        m, _ = Match.new(Options(deals=1, signals="off", first_dealer=d % 4), f"{seed}:{d}",
                         draws=1)
        levels = [a, b, a, b] if d % 2 else [b, a, b, a]
        while not m.over:
            seat = m.to_act
            assert seat is not None
            v = view(m, seat)
            action = get_bot(levels[seat]).decide(
                v, random.Random(f"{seed}:{d}:{m.version}"), budget).action
            assert action is not None
            if v.phase == "play":
                card = action.card  # type: ignore[union-attr]
                before = [STRENGTH[c] for _, c in v.trick]
                pos, rel, top = situation(seat, int(v.leader), before)
                distinct = sorted({STRENGTH[c] for c in v.hand})
                if len(distinct) > 1:
                    samples.append((pos, rel, categories(distinct, top),
                                    distinct.index(STRENGTH[card])))
            m.apply(action)
    return fit_weights(samples)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="aluette-arena",
        description="Duplicate-deal match between two bot levels: A's share of points, "
        "a 95%% CI and decision times per level.",
    )
    parser.add_argument("--a", choices=ALL_LEVELS, help="team A's level")
    parser.add_argument("--b", choices=ALL_LEVELS, help="team B's level")
    parser.add_argument("--deals", type=int, default=200,
                        help="number of dealt hands; each is played twice (duplicate)")
    parser.add_argument("--seed", default="0", help="base seed (any string)")
    parser.add_argument("--budget", type=int, default=DEFAULT_BUDGET.steps,
                        help="expert search budget per card decision, in simulated card "
                        "plays (Budget.steps)")
    parser.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    parser.add_argument("--chanter", action="store_true", help="play with the chanter (R9)")
    parser.add_argument("--signals", choices=("off", "private", "risky"), default="private",
                        help="signal mode (R16)")
    parser.add_argument("--no-mordienne", action="store_true", help="turn off R13")
    parser.add_argument("--match-deals", type=int, default=1, metavar="N",
                        help="play matches of N deals (R14) instead of one deal: the expert's "
                        "match objective then counts; --deals says how many matches, and "
                        "the matches each side won are counted too")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--save", metavar="FILE", type=Path,
                        help="also write the run, with every deal's points, to FILE (JSON)")
    parser.add_argument("--against", metavar="FILE", type=Path,
                        help="compare with a run saved by --save on the same deals (same "
                        "--deals, --seed and --b, say from another commit): A's share now "
                        "minus then, with a paired 95%% interval")
    parser.add_argument("--ladder", metavar="LEVELS",
                        help="instead of --a/--b: a round-robin of these comma-separated "
                        "levels (every pair, --deals each) and their Elo ratings, the "
                        "first level at 0 (docs/BOTS.md)")
    parser.add_argument("--fit-model", action="store_true",
                        help="instead of a match, refit the inference play model's weights "
                        "on --deals games of A (default pimc) and B (default expert-v1)")
    args = parser.parse_args(argv)
    if args.deals < 1:
        parser.error("--deals must be at least 1")
    if args.fit_model:
        print(json.dumps(fit_play_model(args.a or "pimc", args.b or "expert-v1", args.deals,
                                        args.seed)))
        return 0
    if not 1 <= args.match_deals <= 50:
        parser.error("--match-deals must be from 1 to 50")
    options: dict[str, object] = {
        "chanter": args.chanter, "signals": args.signals, "mordienne": not args.no_mordienne,
    }
    if args.match_deals > 1:
        options["deals"] = args.match_deals
    budget = Budget(steps=max(1, args.budget), worlds_cap=DEFAULT_BUDGET.worlds_cap)
    if args.ladder is not None:
        levels = list(dict.fromkeys(x.strip() for x in args.ladder.split(",") if x.strip()))
        unknown = [x for x in levels if x not in ALL_LEVELS]
        if unknown or len(levels) < 2:
            parser.error(f"--ladder needs two or more of {', '.join(ALL_LEVELS)}")
        print(json.dumps(round_robin(levels, args.deals, args.seed, options, budget,
                                     args.workers)))
        return 0
    if args.a is None or args.b is None:
        parser.error("--a and --b are required")
    before = _load_saved(parser, args.against, args, options) if args.against else None
    result = run(args.a, args.b, args.deals, args.seed, options, budget, args.workers)
    doc = summary(args.a, args.b, args.deals, result, args.match_deals)
    pairs = [(p.a, p.b) for p in result.pairs]
    if args.save:
        args.save.write_text(json.dumps({**doc, "seed": args.seed, "options": options,
                                         "pairs": [list(p) for p in pairs]}))
    if before is not None:
        d, low_d, high_d = paired_difference(pairs, before["pairs"])
        doc["against"] = {"file": str(args.against), "a_share": before["a_share"],
                          "difference": round(d, 4), "ci95": [round(low_d, 4), round(high_d, 4)]}
    if args.json:
        print(json.dumps(doc))
        return 0
    ci = doc["ci95"]
    assert isinstance(ci, list)
    low, high = float(ci[0]), float(ci[1])
    print(f"{args.a} (A) vs {args.b} (B): {args.deals} duplicate deals "
          f"({2 * args.deals} games)")
    print(f"points A {doc['a_points']}  B {doc['b_points']}  "
          f"A share {doc['a_share']:.4f}  95% CI [{low:.4f}, {high:.4f}]")
    for level, t in doc["decision_ms"].items():  # type: ignore[attr-defined]
        print(f"decision ms {level:>7}: p50 {t['p50']:.3f}  p99 {t['p99']:.3f}")
    against = doc.get("against")
    if isinstance(against, dict):
        print(f"against {against['file']} (A share {against['a_share']:.4f}): difference "
              f"{against['difference']:+.4f}  paired 95% CI [{against['ci95'][0]:+.4f}, "
              f"{against['ci95'][1]:+.4f}]")
    return 0


class SavedRun(TypedDict):
    """What ``--against`` compares with: a saved run's A share and its paired results."""

    a_share: float
    pairs: list[tuple[float, float]]


def _load_saved(parser: argparse.ArgumentParser, path: Path, args: argparse.Namespace,
                options: dict[str, object]) -> SavedRun:
    """A run saved by ``--save``, checked to be on the same deals, with the same table
    options (signals, chanter, mordienne, match length), as this one."""
    try:
        saved = json.loads(path.read_text())
        pairs = [(float(a), float(b)) for a, b in saved["pairs"]]
        share = float(saved["a_share"])
        same = (saved["deals"], str(saved["seed"]), saved["b"], saved["options"]) == (
            args.deals, str(args.seed), args.b, options)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        parser.error(f"--against {path}: not a run saved by --save ({exc})")
    if not same:
        parser.error(f"--against {path}: saved with --deals {saved['deals']} --seed "
                     f"{saved['seed']} --b {saved['b']} and options {saved['options']}; the "
                     "same deals under the same rules are needed")
    return {"a_share": share, "pairs": pairs}


if __name__ == "__main__":
    sys.exit(main())
