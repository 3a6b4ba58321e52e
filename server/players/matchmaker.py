"""Which play-now requests make a table, and who sits where (pure; issue 27).

Requests are compatible when they ask for the same kind of game (rated or casual) with
the same options. Four compatible requests make a table when their ratings are close:
each request accepts players within its *window* of its own mean (``WINDOW_MU``), which
widens the longer it waits (``WIDEN_MU_PER_S``, up to ``MAX_WINDOW_MU``); the oldest
request is served first, with the nearest ratings. The four are then seated so the teams
are balanced (R5: seats 0 and 2 against 1 and 3; the strongest with the weakest). A
casual request that has waited ``bots_after_s`` is seated with whoever compatible is
there, and bots of a level near its rating fill the rest. A rated request never gets a
bot: bots are never rated players.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import msgspec

from protocol import TableOptions
from protocol.fields import BotLevel

from . import rating

#: A request's window at first, in ``mu`` (about 90 display points, rating.DISPLAY_PER_MU).
WINDOW_MU = 1.5
#: How fast the window widens while the request waits, in ``mu`` per second.
WIDEN_MU_PER_S = 0.1
MAX_WINDOW_MU = 25.0

_KIND = msgspec.msgpack.Encoder()


class Request(msgspec.Struct, kw_only=True):
    """A player waiting in the queue (stored in the store's queue hash)."""

    player: str
    name: str
    rated: bool
    options: TableOptions
    mu: float
    sigma: float
    since: float
    account: str | None = None
    bot: bool = False

    def window(self, now: float) -> float:
        return min(MAX_WINDOW_MU, WINDOW_MU + WIDEN_MU_PER_S * max(0.0, now - self.since))

    def kind(self) -> bytes:
        """What must be equal for two requests to share a table."""
        return _KIND.encode((self.rated, self.options))


@dataclass(frozen=True, slots=True)
class Formed:
    """A table to make: the request in each seat (None: a bot of ``bot_level``)."""

    seats: tuple[Request | None, Request | None, Request | None, Request | None]
    bot_level: BotLevel | None = None

    @property
    def requests(self) -> list[Request]:
        return [r for r in self.seats if r is not None]


def balanced(four: list[Request]) -> tuple[Request, Request, Request, Request]:
    """Seats for four players: the strongest and the weakest together (seats 0 and 2)."""
    a, b, c, d = sorted(four, key=lambda r: (r.mu, r.player))
    return (a, b, d, c)


def _fits(group: list[Request], now: float) -> bool:
    spread = max(r.mu for r in group) - min(r.mu for r in group)
    return spread <= min(r.window(now) for r in group)


def form(requests: list[Request], now: float, bots_after_s: float) -> list[Formed]:
    """The tables to make now from the queue (each request in at most one)."""
    groups: dict[bytes, list[Request]] = {}
    for r in requests:
        groups.setdefault(r.kind(), []).append(r)
    out: list[Formed] = []
    for group in groups.values():
        if len(group) < 4 and not any(not r.rated and now - r.since >= bots_after_s
                                      for r in group):
            continue     # too few to make a table, and nobody waited for bots
        group.sort(key=lambda r: (r.since, r.player))
        by_mu = sorted(group, key=lambda r: r.mu)
        mus = [r.mu for r in by_mu]
        taken: set[str] = set()
        for p in group:
            if p.player in taken:
                continue
            # Only those within p's own window may sit with p (the spread of a table is
            # within every one of its requests' windows): a slice of the sorted means.
            w = p.window(now)
            lo, hi = bisect.bisect_left(mus, p.mu - w), bisect.bisect_right(mus, p.mu + w)
            near = sorted((q for q in by_mu[lo:hi] if q.player not in taken and q is not p),
                          key=lambda q: (abs(q.mu - p.mu), q.since))
            chosen = [p]
            for q in near:
                if _fits([*chosen, q], now):
                    chosen.append(q)
                    if len(chosen) == 4:
                        break
            if len(chosen) == 4:
                out.append(Formed(balanced(chosen)))
            elif not p.rated and now - p.since >= bots_after_s:
                out.append(with_bots(chosen))
            else:
                continue
            taken.update(r.player for r in chosen)
    return out


def with_bots(humans: list[Request]) -> Formed:
    """A casual table for one to three people, bots near the first one's rating in the
    other seats (two people sit as partners)."""
    order = {1: (0,), 2: (0, 2), 3: (0, 1, 2)}[len(humans)]
    seats: list[Request | None] = [None] * 4
    for seat, r in zip(order, humans, strict=True):
        seats[seat] = r
    return Formed((seats[0], seats[1], seats[2], seats[3]),
                  bot_level=rating.level_near(humans[0].mu))
