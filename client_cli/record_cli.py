"""``aluette-record``: verify, show, replay and review match records (R17, R18, R8a) from
the command line.

Both commands say the result in the same words (:func:`verdict`). Output piped into a
reader that stops early (``aluette-record verify --json *.json | head``) ends quietly, with
the exit status a shell reports for a command stopped by SIGPIPE (141), not a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from protocol.records import Record, RecordSummary
from server.game.record import RecordError, verify_record

from . import i18n
from .i18n import add_lang_flag, card_words, contributed, tr


def _load(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except json.JSONDecodeError as exc:
        raise RecordError(tr("cli.record.bad_json", line=exc.lineno, column=exc.colno,
                             why=exc.msg)) from None
    except UnicodeDecodeError:
        raise RecordError(tr("cli.record.not_utf8")) from None
    except OSError as exc:
        raise RecordError(tr("cli.record.unreadable", why=exc.strerror or exc)) from None


#: The match result (R14) in words (catalogue keys), for `verify` and `show` alike.
VERDICTS = {"team0": "cli.record.team0_wins", "team1": "cli.record.team1_wins",
            "draw": "cli.record.draw"}

#: Exit status when the reader of our output went away (128 + SIGPIPE, as a shell reports).
EXIT_BROKEN_PIPE = 141


def verdict(summary: RecordSummary) -> str:
    """``team 0 wins``, ``a draw``, or ``match unfinished`` (R14)."""
    return tr(VERDICTS.get(str(summary.get("result")), "cli.record.unfinished_match"))


def _team(seat: int | None) -> str:
    return "-" if seat is None else tr("cli.record.team", team=seat % 2)


def fairness(record: Record, summary: RecordSummary) -> str:
    """R8a in words: whether the deals are proven to follow from the committed seed, the
    full commitment, and how many players contributed."""
    if summary.get("fair") == "proven":
        return tr("cli.record.proven", commitment=record["fair"]["commitment"],
                  contributed=contributed(int(summary.get("contributors", 0))))
    return tr("cli.record.unproven")


def _summary_text(path: str, record: Record, summary: RecordSummary) -> str:
    lines = [tr("cli.record.ok", path=path)]
    for number, deal in enumerate(summary["deals"], start=1):
        spoiled = sum(1 for t in deal["tricks"] if t["winner"] is None)
        if deal["winner"] is None:
            outcome = tr("cli.record.nobody_scores" if deal.get("complete", True)
                         else "cli.record.unfinished")
        else:
            outcome = tr("cli.record.wins.mordienne" if deal["mordienne"]
                         else "cli.record.wins", seat=deal["winner"],
                         team=_team(deal["winner"]), points=max(deal["points"]))
        lines.append(tr("cli.record.deal", n=number, dealer=deal["dealer"],
                        tricks=deal["trick_counts"], spoiled=spoiled, outcome=outcome))
    pts = summary["points"]
    lines.append(f"  {fairness(record, summary)}")
    lines.append(tr("cli.record.match", p0=pts[0], p1=pts[1], verdict=verdict(summary)))
    return "\n".join(lines)


def _verify(args: argparse.Namespace) -> int:
    status = 0
    for path in args.files:
        try:
            record = _load(path)
            summary = verify_record(record, args.commitment)
        except RecordError as exc:
            print(f"{path}: {exc}", file=sys.stderr)
            status = 1
            continue
        if args.json:
            print(json.dumps(summary, separators=(", ", ": ")))
        else:
            print(_summary_text(path, record, summary))
        if summary["fair"] != "proven" and not args.allow_unproven:
            print(tr("cli.record.unproven.refused", path=path), file=sys.stderr)
            status = 1
    return status


def render_match(record: Record, summary: RecordSummary) -> str:
    """A verified record, trick by trick, in words: card names, leaders, winners, results."""
    names = record.get("seats") or []
    out: list[str] = []

    def who(seat: int) -> str:
        name = names[seat] if seat < len(names) and isinstance(names[seat], str) else ""
        return tr("cli.record.who", seat=seat, name=name) if name else tr("cli.seat", seat=seat)

    for number, (deal, result) in enumerate(
        zip(record["deals"], summary["deals"], strict=True), start=1
    ):
        out.append(tr("cli.record.show.deal", n=number, name=who(result["dealer"])))
        for t, (cards, trick) in enumerate(zip(deal["tricks"], result["tricks"], strict=True),
                                           start=1):
            leader = trick["leader"]
            plays = ", ".join(
                f"{who((leader + i) % 4)} {c} {card_words(c)}" for i, c in enumerate(cards)
            )
            end = (tr("cli.record.show.spoiled") if trick["winner"] is None
                   else tr("cli.record.show.won_by", name=who(trick["winner"])))
            out.append(tr("cli.record.show.trick", n=t, name=who(leader), plays=plays,
                          end=end))
        if result["winner"] is None:
            out.append(tr("cli.record.show.all_spoiled" if result.get("complete", True)
                          else "cli.record.show.unfinished"))
        else:
            winner = result["winner"]
            out.append(tr("cli.record.show.result.mordienne" if result["mordienne"]
                          else "cli.record.show.result", name=who(winner),
                          tricks=tr("cli.tricks.n", n=result["trick_counts"][winner]),
                          team=winner % 2, points=max(result["points"])))
    pts = summary["points"]
    proof = fairness(record, summary)
    out.append(proof[0].upper() + proof[1:] + ".")
    out.append(tr("cli.record.show.match", p0=pts[0], p1=pts[1], verdict=verdict(summary)))
    return "\n".join(out)


def _show(args: argparse.Namespace) -> int:
    path = args.file
    try:
        record = _load(path)
        summary = verify_record(record)
    except RecordError as exc:
        print(f"{path}: {exc}", file=sys.stderr)
        return 1
    print(render_match(record, summary))
    return 0


def _review(args: argparse.Namespace) -> int:
    """The expert's review of one seat (issue 28): JSON on stdout, progress on stderr."""
    # Imported here: the review needs the bots, which ``verify`` and ``show`` do not.
    import msgspec
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    from server.review import Settings, review_record

    path = args.file
    try:
        record = _load(path)
        console = Console(stderr=True)
        with Progress("reviewing seat", str(args.seat), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), console=console, transient=True,
                      disable=not console.is_terminal) as bar:
            task = bar.add_task("review", total=None)

            def progress(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

            settings = Settings(card_worlds=args.worlds) if args.worlds else Settings()
            review = review_record(record, args.seat, workers=args.workers,
                                   settings=settings, salt=args.salt, progress=progress)
    except RecordError as exc:
        print(f"{path}: {exc}", file=sys.stderr)
        return 1
    print(msgspec.json.encode(review).decode())
    return 0


def _replay(args: argparse.Namespace) -> int:
    """Step through a match trick by trick, every hand face up (issue 28): commands from
    the keyboard (or, piped, one per line), or every step at once with ``--all``."""
    # Imported here: the replay speaks the terminal client's words (rich, its renderer).
    from rich.console import Console

    from .replay import Replay, keys_text

    path = args.file
    try:
        record = _load(path)
        review = _load(args.review) if args.review else None
        replay = Replay(record, seat=args.seat, review=review)
    except (RecordError, KeyError, TypeError, ValueError) as exc:
        print(f"{path}: {exc}", file=sys.stderr)
        return 1
    console = Console()
    if args.all:
        for _ in replay.steps:
            console.print(replay.render())
            console.print()
            replay.command("n")
        return 0
    console.print(replay.render())
    while True:
        try:
            line = input("replay> " if sys.stdin.isatty() else "")
        except EOFError:
            return 0
        try:
            if not replay.command(line.strip()):
                return 0
        except ValueError:
            console.print(keys_text())
            continue
        console.print(replay.render())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="aluette-record",
        description="Verify, show or review Aluette match records (R17, R18)."
    )
    i18n.choose(None)
    add_lang_flag(parser)
    sub = parser.add_subparsers(dest="command", required=True)
    verify = sub.add_parser("verify", help="replay records under the rules; check that "
                            "their deals follow from the revealed seed (R8a)")
    verify.add_argument("--json", action="store_true", help="one JSON object per file")
    verify.add_argument("--commitment", metavar="HEX", default=None,
                        help="the commitment you were shown when the match started: the "
                        "record must carry seed material that matches it")
    verify.add_argument("--allow-unproven", action="store_true",
                        help="exit 0 for a record without a fair-deal block (a match played "
                        "before fair deals) if it replays under the rules")
    verify.add_argument("files", nargs="+", metavar="FILE")
    show = sub.add_parser("show", help="print a match trick by trick")
    show.add_argument("file", metavar="FILE")
    review = sub.add_parser("review", help="the expert's review of one seat's decisions, "
                            "from what that seat knew (JSON)")
    review.add_argument("file", metavar="FILE")
    review.add_argument("--seat", type=int, required=True, choices=range(4), metavar="N",
                        help="the seat to review, 0-3")
    review.add_argument("--workers", type=int, default=2, metavar="N",
                        help="processes to think in (default 2; 0: this one)")
    review.add_argument("--worlds", type=int, default=0, metavar="N",
                        help="deals of the unseen cards sampled per card decision "
                        "(default 600)")
    review.add_argument("--salt", default="0",
                        help="seeds the review's random draws (default 0)")
    replay = sub.add_parser("replay", help="step through a match trick by trick, every "
                            "hand face up")
    replay.add_argument("file", metavar="FILE")
    replay.add_argument("--seat", type=int, choices=range(4), metavar="N", default=None,
                        help="your seat: the words say 'you'")
    replay.add_argument("--review", metavar="REVIEW", default=None,
                        help="a review of one seat (aluette-record review's JSON): its "
                        "costly plays are marked")
    replay.add_argument("--all", action="store_true", help="print every step, then stop")
    args = parser.parse_args(argv)
    i18n.choose(args.lang)
    commands = {"verify": _verify, "show": _show, "review": _review, "replay": _replay}
    try:
        status = commands[args.command](args)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader stopped (`| head`): stop too. Point stdout at /dev/null so the
        # interpreter's final flush does not raise again on the closed pipe.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_BROKEN_PIPE
    return status


if __name__ == "__main__":
    sys.exit(main())
