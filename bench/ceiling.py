"""How far above the yardsticks seeing more cards takes the expert's own search (issue 12).

    .venv/bin/python bench/ceiling.py [--deals 400] [--seed 0] [--workers 2]
                                      [--variants expert,partner,oracle] [--b pimc]

Plays ``--deals`` duplicate deals (one-deal matches, signals off, the arena's seeding and
statistics) of team A against ``--b`` (``pimc``, or ``expert-v1``, the two yardsticks of
issue 12's targets) once per variant of team A, each the expert's search with its world
sampler replaced:

- ``expert``: the expert as tables run it, the baseline of this run;
- ``partner``: every sampled world holds the partner's true hand, the opponents' hands and
  the talon sampled as usual: what perfect knowledge of the partner's cards is worth, the
  most any signal (R15) or play convention could ever tell;
- ``oracle``: every world is the true deal: the same search by a bot that sees every hand
  (R8 broken on purpose: this reads the match, which no bot may).

Prints one JSON object: each variant's share of the points, its 95% interval, and its
paired difference from ``expert`` on the same deals (the arena's ``paired_difference``).
The figures are in docs/BOTS.md ("The ceiling").
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from server.bots import arena, expert
from server.bots.base import DEFAULT_BUDGET
from server.bots.knowledge import Knowledge
from server.bots.sampling import WorldSampler, sample_world_loose
from server.game import Match

VARIANTS = ("expert", "partner", "oracle")

#: The match the arena is deciding for, seen by the replaced sampler (set per view built).
_seen: dict[str, Match] = {}


def _install(variant: str) -> None:
    """In this process: let the expert's sampler see the arena's match, as ``variant`` says."""
    if variant == "expert":
        return
    build_view = arena.view

    def spy(m: Match, seat: int) -> Any:
        _seen["match"] = m
        return build_view(m, seat)

    def worlds(k: Knowledge, rng: random.Random, n: int) -> list[list[list[str]]]:
        hands = _seen["match"].hands
        if variant == "oracle":
            return [[list(h) for h in hands] for _ in range(n)]
        partner = k.partner
        placed = Knowledge(k.seat, k.hand, k.played, k.unseen, k.hand_sizes,
                           {**k.must_have, partner: set(hands[partner])}, k.forbidden,
                           k.aces_exact, k.played_by)
        sampler = WorldSampler(placed)
        return [sampler.sample(rng) or sample_world_loose(placed, rng) for _ in range(n)]

    arena.view = spy  # type: ignore[assignment]
    expert._worlds = worlds


def _chunk(args: tuple[str, str, list[int], str]) -> list[tuple[int, int]]:
    variant, b, indices, seed = args
    _install(variant)
    options: dict[str, object] = {"signals": "off", "chanter": False, "mordienne": True}
    times: dict[str, list[float]] = {}
    out = []
    for i in indices:
        p = arena.play_pair("expert", b, i, seed, options, DEFAULT_BUDGET, times)
        out.append((p.a, p.b))
    return out


def run(variant: str, b: str, deals: int, seed: str, workers: int) -> list[tuple[int, int]]:
    """(A's points, B's points) per duplicate pair, in deal order."""
    chunks = [list(range(w, deals, workers)) for w in range(workers)]
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        parts = pool.map(_chunk, [(variant, b, c, seed) for c in chunks])
    by_index: dict[int, tuple[int, int]] = {}
    for chunk, part in zip(chunks, parts, strict=True):
        by_index.update(zip(chunk, part, strict=True))
    return [by_index[i] for i in range(deals)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=400)
    parser.add_argument("--seed", default="0")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--b", choices=("pimc", "expert-v1"), default="pimc")
    args = parser.parse_args()
    variants = [v for v in args.variants.split(",") if v]
    if "expert" not in variants or any(v not in VARIANTS for v in variants):
        parser.error(f"--variants: some of {', '.join(VARIANTS)}, expert among them")
    out: dict[str, Any] = {"deals": args.deals, "seed": args.seed, "b": args.b,
                           "signals": "off", "variants": {}}
    runs = {}
    for variant in ["expert", *[v for v in variants if v != "expert"]]:
        started = time.perf_counter()
        pairs = runs[variant] = run(variant, args.b, args.deals, args.seed, args.workers)
        share, low, high = arena.share_ci(pairs)
        doc: dict[str, Any] = {"a_share": round(share, 4), "ci95": [round(low, 4), round(high, 4)],
                               "a_points": sum(a for a, _ in pairs),
                               "b_points": sum(b for _, b in pairs),
                               "seconds": round(time.perf_counter() - started, 1)}
        if variant != "expert":
            d, lo, hi = arena.paired_difference(pairs, runs["expert"])
            doc["minus_expert"] = [round(d, 4), round(lo, 4), round(hi, 4)]
        out["variants"][variant] = doc
        print(json.dumps({variant: doc}), file=sys.stderr, flush=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
