"""How long the expert's review of one seat takes, and how stable its verdicts are (issue 28).

    .venv/bin/python bench/review.py [--matches 4] [--deals 5] [--workers 2] [--worlds 0]

Plays ``--matches`` matches of ``--deals`` deals with ``normal`` bots in every seat (a
level that errs now and then, so there is something to review), then reviews one seat of
each, as ``aluette-record review`` does, twice: with two different salts for the random
draws. Prints one JSON object:

- ``review_s``: seconds per review with ``--workers`` processes (p50 and max; target 30);
- ``agreement``: the share of decisions on which the two runs prefer the same choice
  (cards of one strength are one choice, R3; target 0.9), and ``agreement_with_choices``
  the same over decisions that had more than one choice;
- ``baseline_bot_s``: in the same run, the seconds the expert bot itself, at a table's
  budget, spends deciding the same decisions (one process): what a review costs compared
  with playing.
The figures are quoted in BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from server import bots
from server.bots.base import DEFAULT_BUDGET, Budget
from server.game import STRENGTH, Match, Options, fair, view
from server.game.record import export_record
from server.review import Review, Settings, decisions, review_record


def play(number: int, deals: int) -> dict[str, Any]:
    """A finished match of ``normal`` bots with its fair-deal block, as a server writes it."""
    secret, salt = f"{number + 1:064x}", f"{number + 7:032x}"
    contributions: list[str | None] = [None, f"{number:02x}", None, None]
    match, _ = Match.new(Options(deals=deals), fair.derive_seed(secret, salt, contributions))
    rng = random.Random(number)
    while not match.over:
        seat = match.to_act
        assert seat is not None
        match.apply(bots.choose_action("normal", view(match, seat),
                                       random.Random(rng.random()), Budget(steps=20000)))
    record = json.loads(json.dumps(export_record(match)))
    record["fair"] = fair.reveal(secret, salt, contributions)
    return record


def same_choice(a: str, b: str) -> bool:
    """Cards of one strength are one choice (R3, R11)."""
    return STRENGTH.get(a, a) == STRENGTH.get(b, b) if a in STRENGTH else a == b


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=4)
    parser.add_argument("--deals", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--worlds", type=int, default=0,
                        help="worlds per card decision (default: the review's own)")
    args = parser.parse_args()
    settings = Settings(card_worlds=args.worlds) if args.worlds else Settings()
    times: list[float] = []
    baseline: list[float] = []
    agree = total = agree_real = total_real = 0
    for number in range(args.matches):
        record = play(number, args.deals)
        seat = number % 4
        started = time.perf_counter()
        first: Review = review_record(record, seat, workers=args.workers, settings=settings,
                                      salt="a")
        times.append(time.perf_counter() - started)
        second = review_record(record, seat, workers=args.workers, settings=settings,
                               salt="b")
        for x, y in zip(first.decisions, second.decisions, strict=True):
            same = same_choice(x.preferred, y.preferred)
            agree += same
            total += 1
            if not x.forced:
                agree_real += same
                total_real += 1
        started = time.perf_counter()
        for d in decisions(record, seat):
            bots.choose_action("expert", d.view, random.Random(0), DEFAULT_BUDGET)
        baseline.append(time.perf_counter() - started)
    print(json.dumps({
        "matches": args.matches,
        "deals": args.deals,
        "workers": args.workers,
        "settings": settings.to_dict(),
        "decisions": total,
        "review_s": {"p50": round(statistics.median(times), 2), "max": round(max(times), 2),
                     "target": 30},
        "agreement": round(agree / total, 4) if total else None,
        "agreement_with_choices": round(agree_real / total_real, 4) if total_real else None,
        "agreement_target": 0.9,
        "baseline_bot_s": round(statistics.median(baseline), 2),
    }))


if __name__ == "__main__":
    main()
