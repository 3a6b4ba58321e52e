"""Why a deal went where it did (R11-R13a): the facts a client's words about a finished deal
rest on, apart from the words.

The server's ``deal_scored`` stays the truth (who won, the points, mordienne); this module
only finds the reasons: which tricks were spoiled, who else had as many tricks and when each
reached that count, whether the winner's tricks were the last ones in a row. The browser
finds the same facts (``dealFacts`` in server/web/static/js/explain.mjs), and both are held
to one specification, tests/spec/explain/*.json (docs/ARCHITECTURE.md), so the terminal and
the page never explain one deal two ways. ``render.py`` turns the facts into words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from protocol import DealScored
from server.game.rules import TRICKS_PER_DEAL
from server.game.seats import team_of


@dataclass(frozen=True, slots=True)
class DealFacts:
    """The reasons behind one ``deal_scored``; the fields about single tricks are None when
    the client did not see the deal's nine tricks (it arrived after them)."""

    winner: int | None
    #: The winner's tricks (R12: the most).
    most: int
    #: The other seats with as many tricks as the winner, by seat (R12's tie).
    tied: tuple[int, ...]
    #: Tricks that nobody won (R11), and which ones when the tricks were seen.
    spoiled: int
    spoiled_tricks: tuple[int, ...] | None
    #: For the winner and the tied seats: the trick at which each reached that count (R12:
    #: the earliest wins the tie).
    reached_at: dict[int, int] | None
    #: R13 ("run": the last tricks in a row and none before) or R13a ("all": all nine).
    mordienne: str | None
    #: The winner's tricks before its final run, which is why a run of two or more at the
    #: end was no mordienne (R13); empty when there is nothing to say.
    early: tuple[int, ...] | None
    #: The team the winner's points go to, and how many.
    team: int | None
    points: int


@dataclass(frozen=True, slots=True)
class _Walk:
    """What the nine tricks' winners say by themselves."""

    counts: list[int]
    reached_at: list[int]       # 1-based trick where each seat won its last trick
    spoiled: tuple[int, ...]
    run: int                    # tricks the given seat won in a row at the end


def _walk(winners: Sequence[int | None], seat: int) -> _Walk:
    counts, reached = [0, 0, 0, 0], [0, 0, 0, 0]
    for number, w in enumerate(winners, start=1):
        if w is not None:
            counts[w] += 1
            reached[w] = number
    run = 0
    for w in reversed(winners):
        if w != seat:
            break
        run += 1
    spoiled = tuple(n for n, w in enumerate(winners, start=1) if w is None)
    return _Walk(counts, reached, spoiled, run)


def deal_facts(deal: DealScored, winners: Sequence[int | None] | None = None) -> DealFacts:
    """The facts of ``deal``; ``winners`` are its nine tricks' winners (None: spoiled) when
    the client saw them."""
    counts = list(deal.trick_counts)
    winner = deal.winner
    spoiled = TRICKS_PER_DEAL - sum(counts)
    known = winners is not None and len(winners) == TRICKS_PER_DEAL
    if winner is None:
        walk = _walk(winners, -1) if winners is not None and known else None
        return DealFacts(None, 0, (), spoiled, walk.spoiled if walk else None, None, None,
                         None, None, 0)
    top = counts[winner]
    tied = tuple(s for s in range(4) if s != winner and counts[s] == top)
    mordienne = ("all" if top == TRICKS_PER_DEAL else "run") if deal.mordienne else None
    team = team_of(winner)
    points = deal.points[team]
    if winners is None or not known:
        return DealFacts(winner, top, tied, spoiled, None, None, mordienne, None, team, points)
    walk = _walk(winners, winner)
    reached = {s: walk.reached_at[s] for s in (winner, *tied)}
    early: tuple[int, ...] = ()
    if mordienne is None and top >= 2 and 1 <= walk.run < top:
        early = tuple(n for n, w in enumerate(winners, start=1)
                      if w == winner and n <= TRICKS_PER_DEAL - walk.run)
    return DealFacts(winner, top, tied, spoiled, walk.spoiled, reached, mordienne, early,
                     team, points)
