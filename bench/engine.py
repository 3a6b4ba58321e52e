"""Engine throughput, as ratios to a bare shuffle-and-deal loop measured in the same run.

    python bench/engine.py [--seconds 2]

Prints one JSON object: deals/s through the validated API (``Match.legal_actions`` +
``Match.apply``, random legal moves), deals/s through the lean playout path the bots use,
and the baseline; machines here are shared and noisy, so read the ratios.
"""

from __future__ import annotations

import argparse
import json
import random
import time

from server.game import Match, Options
from server.game.lean import _PACK_STRENGTHS, random_deal_points


def _rate(fn, seconds: float) -> float:
    """Deals per second of ``fn`` (which plays ``n`` deals and returns n), best of 3 runs."""
    best = 0.0
    for _ in range(3):
        count = 0
        start = time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds / 3:
            count += fn()
        best = max(best, count / elapsed)
    return best


def baseline(rng: random.Random) -> int:
    for _ in range(200):
        pack = _PACK_STRENGTHS[:]
        rng.shuffle(pack)
        _hands = [pack[0:9], pack[9:18], pack[18:27], pack[27:36]]
    return 200


def lean(rng: random.Random) -> int:
    for _ in range(200):
        random_deal_points(rng)
    return 200


def engine(rng: random.Random) -> int:
    match, _ = Match.new(Options(deals=10), rng.randrange(2**32))
    while not match.over:
        seat = match.to_act
        match.apply(rng.choice(match.legal_actions(seat)))
    return 10


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    args = parser.parse_args()
    rng = random.Random(1)
    base = _rate(lambda: baseline(rng), args.seconds)
    lean_rate = _rate(lambda: lean(rng), args.seconds)
    engine_rate = _rate(lambda: engine(rng), args.seconds)
    print(json.dumps({
        "engine_deals_per_s": round(engine_rate),
        "lean_deals_per_s": round(lean_rate),
        "baseline_deals_per_s": round(base),
        "lean_slowdown_vs_baseline": round(base / lean_rate, 2),
        "engine_slowdown_vs_baseline": round(base / engine_rate, 2),
    }))


if __name__ == "__main__":
    main()
