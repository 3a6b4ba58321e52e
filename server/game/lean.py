"""The lean path: random playouts for bots' search and benchmarks, with no validation.

It trusts its caller (a bot that has already determinized the hidden cards) and works on
card strengths only, since R3's table is all that decides a trick.

A useful fact keeps it fast: with no duty to follow suit (R10), who wins a trick depends only
on which card each seat put down, never on the order they were played (R11). So when every
seat plays its hand in list order, trick t is simply column t of the four hands.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from .cards import ALL_CARDS, STRENGTH
from .rules import TRICKS_PER_DEAL, score_deal

_PACK_STRENGTHS = [STRENGTH[c] for c in ALL_CARDS]


def trick_winners(columns: Iterable[Sequence[int]]) -> list[int | None]:
    """R11 for tricks given as one strength per seat (index = seat); None when spoiled."""
    out: list[int | None] = []
    for col in columns:
        best = max(col)
        out.append(col.index(best) if col.count(best) == 1 else None)
    return out


def finish_deal(
    hands: Sequence[Sequence[int]],
    leader: int,
    trick: Sequence[int],
    winners: Sequence[int | None],
) -> list[int | None]:
    """Play out the rest of a deal, each seat playing its hand **in list order**.

    ``hands`` are strengths (shuffle them first for a random playout: a shuffled hand played
    in order is a uniformly random play); ``trick`` the strengths already down in the current
    trick, in play order from ``leader``; ``winners`` the finished tricks' winners. Returns the
    winners of all nine tricks.
    """
    if len(winners) >= TRICKS_PER_DEAL:   # R11: nine tricks played, nothing left to play
        return list(winners)
    done = len(trick)
    first: list[int] = []
    offset = [0, 0, 0, 0]
    for seat in range(4):
        k = (seat - leader) % 4
        if k < done:
            first.append(trick[k])
        else:
            first.append(hands[seat][0])
            offset[seat] = 1
    columns: list[Sequence[int]] = [first]
    columns.extend(zip(*(hands[s][offset[s]:] for s in range(4)), strict=False))
    out = list(winners)
    out += trick_winners(columns[: TRICKS_PER_DEAL - len(out)])
    return out


def random_deal(rng: random.Random) -> list[int | None]:
    """Shuffle, deal and play one whole deal at random; the nine tricks' winners."""
    pack = _PACK_STRENGTHS[:]
    rng.shuffle(pack)
    return trick_winners(zip(pack[0:9], pack[9:18], pack[18:27], pack[27:36], strict=True))


def random_deal_points(rng: random.Random, mordienne: bool = True) -> list[int]:
    """One random deal scored by the rules (R12-R13a): team points."""
    return score_deal(random_deal(rng), mordienne).points
