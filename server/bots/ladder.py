"""A ladder of bot levels: Elo ratings from the pairwise shares of a round-robin.

Each pair (A, B) played in the arena gives A's share s of the points; the Elo difference it
implies is ``400 log10(s / (1 - s))``. Over a round-robin those differences rarely agree
(the shares are not transitive), so the ratings are the least-squares fit of all of them.
For a complete round-robin that fit has a closed form: a level's rating is the mean of its
differences against every level (itself counting 0), shifted so the anchor level rates 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

#: Shares are clipped into [CLIP, 1 - CLIP] so a whitewash gives a large, finite gap.
CLIP = 0.005


def elo_gap(share: float) -> float:
    """The Elo difference a share of the points implies (A minus B)."""
    s = min(1 - CLIP, max(CLIP, share))
    return 400.0 * math.log10(s / (1 - s))


def ratings(levels: Sequence[str], shares: Mapping[tuple[str, str], float],
            anchor: str | None = None) -> dict[str, float]:
    """Least-squares Elo of ``levels`` from ``shares[(a, b)]``, a's share against b, given
    for every unordered pair once (either order). ``anchor`` (default the first level)
    rates 0."""
    gap: dict[tuple[str, str], float] = {}
    for (a, b), s in shares.items():
        gap[a, b] = elo_gap(s)
        gap[b, a] = -gap[a, b]
    missing = [(a, b) for i, a in enumerate(levels) for b in levels[i + 1:] if (a, b) not in gap]
    if missing:
        raise ValueError(f"not a complete round-robin: no share for {missing}")
    k = len(levels)
    raw = {a: sum(gap[a, b] for b in levels if b != a) / k for a in levels}
    base = raw[anchor if anchor is not None else levels[0]]
    return {a: raw[a] - base for a in levels}
