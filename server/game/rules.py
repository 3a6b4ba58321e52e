"""The rules as pure functions: dealing, the partner draw, tricks and deal scoring.

The state machine (:mod:`.match`), the record verifier (:mod:`.record`) and the bots' lean
playouts (:mod:`.lean`) all call these, so each rule is written once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from protocol.vocab import MatchResult

from . import chance
from .cards import ALL_CARDS, STRENGTH
from .seats import left_of, team_of

TRICKS_PER_DEAL = 9
HAND_SIZE = 9
TOP_FOUR = ("3o", "3c", "2o", "2c")


class Shuffler(Protocol):
    """What R7's draw and R8's deal take from chance: a shuffle (a :class:`chance.Draws`,
    or a seeded ``random.Random`` in tests)."""

    def shuffle(self, x: Any, /) -> None: ...


def deal_rng(seed: int | str, deal_number: int, scheme: int = chance.CURRENT) -> chance.Draws:
    """Chance is an input: each deal's shuffle comes from the match seed and the deal number
    (R8a's stream ``deal:N``), so a stored match needs no RNG state to be replayed or
    resumed."""
    return chance.draws(scheme, seed, chance.deal_label(deal_number))


def deal(rng: Shuffler, dealer: int) -> tuple[list[list[str]], list[str]]:
    """R8: shuffle, deal three rounds of three clockwise from the dealer's left; 12 to the talon."""
    pack = list(ALL_CARDS)
    rng.shuffle(pack)
    hands: list[list[str]] = [[], [], [], []]
    order = [(dealer + 1 + i) % 4 for i in range(4)]
    pos = 0
    for _round in range(3):
        for seat in order:
            hands[seat].extend(pack[pos : pos + 3])
            pos += 3
    return hands, pack[pos:]


@dataclass(frozen=True, slots=True)
class PartnerDraw:
    """R7's outcome: the cards turned up, where each seat moves to, and who deals first."""

    cards: list[tuple[int, str]]   # (seat before re-seating, card) in the order turned up
    seating: list[int]             # seating[old_seat] = new_seat
    first_dealer: int              # a new seat: where the Madame holder now sits


def partner_draw(rng: Shuffler) -> PartnerDraw:
    """R7: turn cards to seats 0,1,2,3,... skipping seats that hold a top card, then re-seat."""
    pack = list(ALL_CARDS)
    rng.shuffle(pack)
    holder: dict[str, int] = {}
    turned: list[tuple[int, str]] = []
    done: set[int] = set()
    seat = 0
    for card in pack:
        while seat in done:
            seat = left_of(seat)
        turned.append((seat, card))
        if card in TOP_FOUR:
            holder[card] = seat
            done.add(seat)
            if len(done) == 4:
                break
        seat = left_of(seat)
    monsieur = holder["3o"]
    seating = [0, 0, 0, 0]
    seating[monsieur] = monsieur
    seating[holder["3c"]] = (monsieur + 2) % 4
    others = [(monsieur + k) % 4 for k in (1, 2, 3)]
    others = [s for s in others if s not in (monsieur, holder["3c"])]
    seating[others[0]] = (monsieur + 1) % 4
    seating[others[1]] = (monsieur + 3) % 4
    return PartnerDraw(turned, seating, (monsieur + 2) % 4)


def trick_winner(leader: int, cards: Sequence[str]) -> int | None:
    """R11: the single strongest card wins; a tie for the top strength spoils the trick (None).

    ``cards`` are in play order starting with the leader.
    """
    best = -1
    count = 0
    at = 0
    for i, card in enumerate(cards):
        s = STRENGTH[card]
        if s > best:
            best, count, at = s, 1, i
        elif s == best:
            count += 1
    if count > 1:
        return None
    return (leader + at) % 4


def next_leader(leader: int, winner: int | None) -> int:
    """R11: the winner leads the next trick; after a spoiled trick the same seat leads again."""
    return leader if winner is None else winner


@dataclass(frozen=True, slots=True)
class DealScore:
    trick_counts: list[int]
    winner: int | None          # the deal winner's seat, None if all nine tricks spoiled
    points: list[int]           # per team, for this deal
    mordienne: bool


def deal_outcome(winners: Sequence[int | None], mordienne_on: bool = True
                 ) -> tuple[int | None, int, list[int]]:
    """R12, R13, R13a in one place: (deal winner or None, points it scores, trick counts).

    Lean on purpose: the bots' search calls it once per playout, so the common case, one
    seat alone with the most tricks, is counted at C speed; only a tie for the most tricks
    walks the deal to find who reached the count first.
    """
    counts = [winners.count(0), winners.count(1), winners.count(2), winners.count(3)]
    top = max(counts)
    if top == 0:
        return None, 0, counts                      # R12: all tricks spoiled
    if counts.count(top) == 1:
        winner = counts.index(top)
    else:
        # R12: among seats with the most tricks, the one that won its M-th trick earliest.
        reached = [0, 0, 0, 0]
        winner = -1
        for w in winners:
            if w is not None:
                reached[w] += 1
                if reached[w] == top:
                    winner = w
                    break
    # R13/R13a: the winner's tricks are exactly the last k >= 2, in a row up to trick 9.
    n = len(winners)
    mordienne = (
        mordienne_on
        and top >= 2
        and n == TRICKS_PER_DEAL
        and winners[n - top:].count(winner) == top
    )
    return winner, 2 if mordienne else 1, counts


def score_deal(winners: Sequence[int | None], mordienne_on: bool = True) -> DealScore:
    """R12, R13, R13a: score a deal from each trick's winner (None = spoiled), in order."""
    winner, scored, counts = deal_outcome(winners, mordienne_on)
    points = [0, 0]
    if winner is not None:
        points[team_of(winner)] = scored
    return DealScore(counts, winner, points, scored == 2)


def match_result(points: Sequence[int]) -> MatchResult:
    """R14: the team with more points wins; equal totals are a draw."""
    if points[0] > points[1]:
        return "team0"
    if points[1] > points[0]:
        return "team1"
    return "draw"
