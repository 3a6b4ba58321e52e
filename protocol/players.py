"""What the protocol says about players (added in 1.5, issue 27): match history, ratings,
profiles and the play-now queue, as typed results.

A player is named on the wire by the name of their account (a registered player) or not
at all: another player's id never leaves the server (it is half of their token). Ratings
are OpenSkill's Weng-Lin model (``mu``, ``sigma``); ``display`` is the rating on the
ladder's scale (docs/BOTS.md: the ``normal`` bot is 1500).
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta

from . import limits
from .fields import BotLevel, Count, MatchNumber, Name, Seat, TableId, TeamPoints
from .views import TableOptions
from .vocab import MatchResult, SignalsMode

#: One page of ``history``.
MAX_HISTORY_PAGE = 50
#: The recent matches a ``profile`` shows.
MAX_PROFILE_RECENT = 10
#: The favourite partners a ``profile`` shows.
MAX_PROFILE_PARTNERS = 5
#: A history cursor (opaque).
Cursor = Annotated[str, Meta(max_length=128)]


class Rating(msgspec.Struct, kw_only=True):
    """A registered player's rating: the model's mean and uncertainty, and ``display``,
    the mean on the ladder's scale (docs/BOTS.md), rounded."""

    mu: float
    sigma: float
    display: int


class HistoryPlayer(msgspec.Struct, kw_only=True):
    """One seat of a finished match as history shows it: its name, whether a program
    played it, whether a registered player did (``registered``), and, at a rated match,
    the player's rating before and after it."""

    seat: Seat
    name: Name
    bot: bool = False
    registered: bool = False
    #: Left the match for good (a bot finished it for them): their team's loss is theirs.
    left: bool = False
    before: Rating | None = None
    after: Rating | None = None


class HistoryEntry(msgspec.Struct, kw_only=True):
    """A finished match: its table and number (``get_record {table, match}`` fetches its
    R17 record), when it ended, its options, who sat where, the result and the points."""

    table: TableId
    match: MatchNumber
    finished_at: float
    rated: bool
    private: bool
    result: MatchResult
    points: TeamPoints
    options: TableOptions
    players: Annotated[list[HistoryPlayer], Meta(max_length=4)]
    #: Your seat at that match (nil: you did not sit there).
    seat: Seat | None = None


class Partner(msgspec.Struct, kw_only=True):
    """A registered player someone played with as a team, and how often."""

    name: Name
    matches: Count
    won: Count


class LadderStep(msgspec.Struct, kw_only=True):
    """A bot level on the rating scale (docs/BOTS.md's ladder): a reference point."""

    level: BotLevel
    display: int


class TableFilter(msgspec.Struct, kw_only=True, forbid_unknown_fields=False):
    """``list_tables``'s filter (1.5): every field given must match; nil: any.
    ``free`` asks for at least that many free seats."""

    free: Annotated[int, Meta(ge=1, le=4)] | None = None
    rated: bool | None = None
    deals: Annotated[int, Meta(ge=1, le=limits.MAX_DEALS)] | None = None
    target_points: Annotated[int, Meta(ge=1, le=limits.MAX_TARGET_POINTS)] | None = None
    chanter: bool | None = None
    partner_draw: bool | None = None
    signals: SignalsMode | None = None
    hints: bool | None = None

    def accepts(self, options: TableOptions, free_seats: int) -> bool:
        if self.free is not None and free_seats < self.free:
            return False
        for name in ("rated", "deals", "target_points", "chanter", "partner_draw",
                     "signals", "hints"):
            want = getattr(self, name)
            if want is not None and getattr(options, name) != want:
                return False
        return True


__all__ = [
    "MAX_HISTORY_PAGE",
    "MAX_PROFILE_PARTNERS",
    "MAX_PROFILE_RECENT",
    "Cursor",
    "HistoryEntry",
    "HistoryPlayer",
    "LadderStep",
    "Partner",
    "Rating",
    "TableFilter",
]
