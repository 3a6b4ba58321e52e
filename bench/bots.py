"""Bot decision times per level, with the random bot as the same-run baseline.

    .venv/bin/python bench/bots.py [--deals 4] [--budget STEPS] [--levels expert,pimc]
                                   [--think-ms MS]

Plays ``--deals`` one-deal matches per level with that level in all four seats (signals
private, so the expert samples under signal constraints) and times every card decision on
one core. Levels are the table levels and the arena's yardsticks (docs/BOTS.md). Prints
one JSON object: p50/p99/max milliseconds per level and each level's p50 as a ratio to
the random bot's (machines here are shared and noisy, so read the ratios too).
The expert's target is p99 <= 100 ms at the default budget. ``--think-ms`` adds the
server's cap on a search's thinking time (``--bot-think``, 80 ms by default on a server;
none here unless asked, as in the arena), and counts the decisions it cut short.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from server.bots import ALL_LEVELS, Budget, choose_signals, decide
from server.bots.arena import percentile
from server.bots.base import DEFAULT_BUDGET
from server.game import Match, Options, view


def times_for(level: str, deals: int, budget: Budget) -> list[float]:
    out: list[float] = []
    for d in range(deals):
        m, _ = Match.new(Options(deals=1, first_dealer=d % 4), f"bench:{d}")
        for s in range(4):
            for sig in choose_signals(level, view(m, s), random.Random(s)):
                m.apply(sig)
        while not m.over:
            seat = m.to_act
            assert seat is not None
            v = view(m, seat)
            t0 = time.perf_counter()
            action = decide(level, v, random.Random(f"{d}:{m.version}"), budget).action
            out.append((time.perf_counter() - t0) * 1000.0)
            assert action is not None
            m.apply(action)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=4)
    parser.add_argument("--budget", type=int, default=DEFAULT_BUDGET.steps)
    parser.add_argument("--think-ms", type=float, default=0.0,
                        help="cap on a search's thinking time, as the server's --bot-think "
                        "(0: none)")
    parser.add_argument("--levels", default=",".join(ALL_LEVELS),
                        help="comma-separated levels (random is always timed: the baseline)")
    args = parser.parse_args()
    levels = list(dict.fromkeys(["random", *args.levels.split(",")]))
    for level in levels:
        if level not in ALL_LEVELS:
            parser.error(f"unknown level {level!r}; choose from {', '.join(ALL_LEVELS)}")
    budget = Budget(steps=args.budget, worlds_cap=DEFAULT_BUDGET.worlds_cap,
                    seconds=args.think_ms / 1000.0 if args.think_ms > 0 else None)
    result: dict[str, dict[str, float | int]] = {}
    for level in levels:
        ts = times_for(level, args.deals, budget)
        result[level] = {
            "p50": round(percentile(ts, 50), 3),
            "p99": round(percentile(ts, 99), 3),
            "max": round(max(ts), 3),
            "decisions": len(ts),
        }
        if args.think_ms > 0:
            # A decision as long as the cap is one the cap cut short.
            result[level]["at_cap"] = sum(1 for t in ts if t >= args.think_ms)
    base = max(result["random"]["p50"], 1e-6)
    for level in levels:
        result[level]["p50_vs_random"] = round(result[level]["p50"] / base, 1)
    print(json.dumps({"budget_steps": args.budget, "think_ms": args.think_ms,
                      "deals": args.deals, "levels": result}))


if __name__ == "__main__":
    main()
