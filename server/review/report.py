"""What a review says, as typed structures (JSON for third parties), and its summaries."""

from __future__ import annotations

import msgspec

from .replay import DecisionKind

#: Two values closer than this are the same value (sums of float weights).
EPSILON = 1e-9


class ChoiceValue(msgspec.Struct, frozen=True):
    """One legal choice and the team points the expert expects of it (the seat's team's
    points minus the other team's for this deal, R12-R13a). ``value`` is None for a choice
    that was forced (the only one)."""

    choice: str
    value: float | None


class DecisionReview(msgspec.Struct, frozen=True):
    """One decision of the seat: every legal choice valued, the one the expert prefers,
    the one made, and the expected points it cost (0 when it was as good)."""

    deal: int
    kind: DecisionKind
    trick: int | None
    actual: str
    preferred: str
    lost: float
    matched: bool
    forced: bool
    choices: list[ChoiceValue]
    #: How many worlds (deals of the unseen cards) the evaluation sampled.
    worlds: int = 0
    #: Legal choices the evaluation did not value (R9's discards: 5,005 ways to choose 6
    #: of 15; the actual one and the expert's are valued).
    unvalued: int = 0


class DealSummary(msgspec.Struct, frozen=True):
    deal: int
    decisions: int
    matched: int
    share_matched: float
    points_lost: float


class Review(msgspec.Struct, frozen=True):
    """The expert's review of one seat of a match (issue 28, Build 2)."""

    seat: int
    team: int
    name: str | None
    decisions: list[DecisionReview]
    deals: list[DealSummary]
    total_decisions: int
    matched: int
    share_matched: float
    points_lost: float
    #: Decisions with more than one choice, and how many of those matched.
    choices_decisions: int
    choices_matched: int
    #: How the evaluation was made: worlds per decision, and the salt of its random draws.
    settings: dict[str, int | str]


def summarize(seat: int, name: str | None, reviews: list[DecisionReview],
              settings: dict[str, int | str]) -> Review:
    deals: list[DealSummary] = []
    for number in sorted({r.deal for r in reviews}):
        mine = [r for r in reviews if r.deal == number]
        matched = sum(r.matched for r in mine)
        deals.append(DealSummary(number, len(mine), matched, _share(matched, len(mine)),
                                 round(sum(r.lost for r in mine), 4)))
    matched = sum(r.matched for r in reviews)
    real = [r for r in reviews if not r.forced]
    return Review(seat=seat, team=seat % 2, name=name, decisions=reviews, deals=deals,
                  total_decisions=len(reviews), matched=matched,
                  share_matched=_share(matched, len(reviews)),
                  points_lost=round(sum(r.lost for r in reviews), 4),
                  choices_decisions=len(real), choices_matched=sum(r.matched for r in real),
                  settings=settings)


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 1.0
