"""``aluette-demo``: a whole match between bots, printed trick by trick.

It is the project's "run" command until you start the server, and a quick way to watch the
rules at work (spoiled tricks, mordienne) without a network. It lives with the terminal
tools (it prints, like ``aluette-record``), above the engine and the bots it plays
(docs/ARCHITECTURE.md).
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Sequence

from server.bots import choose_action
from server.game import Match, Options, view
from server.game.record import export_record, verify_record

from .record_cli import render_match


def play_bot_match(options: Options, seed: int, level: str = "normal") -> Match:
    """Play a match with a bot in every seat; each bot sees only its own seat's view."""
    match, _ = Match.new(options, seed)
    rng = random.Random(f"demo:{seed}")
    while not match.over:
        seat = match.to_act
        if seat is None:
            break
        match.apply(choose_action(level, view(match, seat), rng))
    return match


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="aluette-demo", description=__doc__)
    parser.add_argument("--seed", type=int, default=None, help="match seed (default: random)")
    parser.add_argument("--deals", type=int, default=5, help="deals in the match (R14)")
    parser.add_argument("--level", default="normal", help="bot level for every seat")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    match = play_bot_match(Options(deals=args.deals), seed, args.level)
    record = export_record(match, [f"{args.level} bot {s}" for s in range(4)])
    print(f"Aluette: four bots, {args.deals} deal{'' if args.deals == 1 else 's'}, seed {seed}\n")
    print(render_match(record, verify_record(record)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
