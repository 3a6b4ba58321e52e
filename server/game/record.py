"""Match records (R17) and their verification by replay (R18).

A record stores only what happened: options, seats, and for each deal the dealer, the hands
as played and the tricks in play order. Who led, who won and every score are derived here
from the rules, never read from the file, so a record cannot lie about a result.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

from protocol.records import (
    ChanterBlock,
    DealSummary,
    Record,
    RecordDeal,
    RecordSummary,
    SignalEntry,
    TrickSummary,
)
from protocol.vocab import Phase

from . import fair, rules
from .actions import SIGNALS
from .cards import STRENGTH
from .errors import InvalidOptions, RecordError
from .match import Match
from .matchstate import SignalRecord
from .options import Options
from .seats import left_of, partner_of

RECORD_FORMAT = "aluette-record/1"
#: Turn actions in a deal: four chanter votes, two discards (R9), thirty-six cards.
MAX_ACTIONS = 4 + 2 + 4 * rules.TRICKS_PER_DEAL

__all__ = ["RECORD_FORMAT", "RecordError", "export_record", "verify_record"]


def export_record(
    match: Match,
    seats: list[str] | None = None,
    *,
    include_seed: bool = False,
    reveal: bool | None = None,
) -> Record:
    """Write ``match`` (finished or not) as a record: finished deals, then the current one's
    finished tricks once its play has begun.

    The seed is private while a match runs (it predicts every hand), so it is written only
    when asked for. So are each deal's signals (who sent what, who received it, R16) and
    chanter exchange (the votes and the six cards each taker discarded, R9): they are
    written once the match is over (``reveal``, by default), so that verifying the record
    (R8a) checks every hand exactly, and a replay shows them where they happened.
    """
    reveal = match.over if reveal is None else reveal
    deals: list[RecordDeal] = []
    for number, d in enumerate(match.deals, start=1):
        deal: RecordDeal = {"dealer": d["dealer"], "hands": [list(h) for h in d["hands"]],
                                "tricks": [list(t) for t in d["tricks"]]}
        if reveal:
            if match.options.chanter and "votes" in d:    # deals stored before: not known
                deal["chanter"] = chanter_block(d["votes"], d["discards"])
            deal["signals"] = [signal_entry(s) for s in match.signals if s["deal"] == number]
        deals.append(deal)
    if match.phase is Phase.PLAY:
        deals.append({
            "dealer": match.dealer,
            "hands": [list(h) for h in match.play_hands],
            "tricks": [list(t["cards"]) for t in match.tricks],
        })
    record: Record = {
        "format": RECORD_FORMAT,
        "options": match.options.to_dict(),
        "seats": list(seats) if seats else [f"Seat {s}" for s in range(4)],
        "complete": match.over,
        "deals": deals,
    }
    if match.options.partner_draw and match.draw:
        # R7's draw is public from the start (every viewer saw the partner_draw event):
        # the record keeps it, so that R8a checks the turned cards and the re-seating, and
        # a reader can map the contributions (seats before the draw) to the players.
        record["partner_draw"] = {"cards": [list(c) for c in match.draw],
                                  "seating": list(match.seating)}
    if include_seed:
        record["seed"] = match.seed
    return record


def chanter_block(votes: list[bool | None], discards: list[list[str]]) -> ChanterBlock:
    """A deal's R9 in a record: each seat's vote (null: not asked, the vote ended before),
    whether the talon was exchanged, and the six cards each of its two takers discarded."""
    return {"votes": list(votes), "exchange": all(v is True for v in votes),
            "discards": [list(x) for x in discards]}


def signal_entry(signal: SignalRecord) -> SignalEntry:
    """One signal in a record: its sender, id and number, who received it (the partner,
    and any opponent who noticed it, R16) and ``at``, how many turn actions of the deal
    (chanter votes and discards, then cards) had been taken when it was sent."""
    entry: SignalEntry = {"from_seat": signal["from_seat"], "signal": signal["signal"],
                          "n": signal["n"], "to": list(signal["to"])}
    if "at" in signal:
        entry["at"] = signal["at"]
    return entry


@dataclass
class _Replay:
    """One deal replayed under the rules."""

    summary: DealSummary
    points: list[int]


def _check_hands(number: int, hands: object) -> list[list[str]]:
    if not isinstance(hands, list) or len(hands) != 4:
        raise RecordError("hands must list four seats' cards", deal=number)
    seen: dict[str, int] = {}
    out: list[list[str]] = []
    for seat, hand in enumerate(hands):
        if not isinstance(hand, list):
            raise RecordError("a hand must be a list of card codes", deal=number, seat=seat)
        for card in hand:
            if card not in STRENGTH:
                raise RecordError("unknown card code (R2)", deal=number, seat=seat, card=card)
            if card in seen:
                raise RecordError(
                    f"card dealt twice (also in seat {seen[card]}'s hand)",
                    deal=number, seat=seat, card=card,
                )
            seen[card] = seat
        if len(hand) != rules.HAND_SIZE:
            raise RecordError(
                f"hand has {len(hand)} cards, expected {rules.HAND_SIZE} (R8)",
                deal=number, seat=seat,
            )
        out.append(list(hand))
    return out


def _check_chanter(number: int, deal: Mapping[str, object], options: Options, dealer: int,
                   hands: list[list[str]]) -> bool | None:
    """R9 as the record tells it: votes in turn from the dealer's left until the first
    refusal, and six discards for each of the two talon takers exactly when all four said
    yes. Returns whether the talon was exchanged (None: the record does not say)."""
    block = deal.get("chanter")
    if block is None:
        return None
    if not options.chanter:
        raise RecordError("a chanter exchange at a table without chanter (R9)", deal=number)
    if not isinstance(block, dict):
        raise RecordError("chanter must be an object with votes, exchange and discards",
                          deal=number)
    votes, exchange, discards = block.get("votes"), block.get("exchange"), block.get("discards")
    if not isinstance(votes, list) or len(votes) != 4 or not all(
            v is None or type(v) is bool for v in votes):
        raise RecordError("chanter.votes must list four seats' votes (true, false or null)",
                          deal=number)
    in_turn = [votes[(dealer + 1 + k) % 4] for k in range(4)]
    yes = next((k for k, v in enumerate(in_turn) if v is not True), 4)
    if yes < 4 and (in_turn[yes] is not False or any(v is not None for v in in_turn[yes + 1:])):
        raise RecordError("chanter.votes must run from the dealer's left until the first "
                          "refusal (R9)", deal=number)
    if exchange is not all(v is True for v in votes):
        raise RecordError("chanter.exchange must be true exactly when all four voted yes (R9)",
                          deal=number)
    takers = (left_of(dealer), dealer) if exchange else ()
    if not isinstance(discards, list) or len(discards) != 4 or not all(
            isinstance(d, list) and len(d) == (6 if seat in takers else 0)
            for seat, d in enumerate(discards)):
        raise RecordError("chanter.discards must list six cards for each of the two seats that "
                          "took the talon and none for the others (R9)", deal=number)
    held = {c for h in hands for c in h}
    for seat, cards in enumerate(discards):
        for card in cards:
            if card not in STRENGTH:
                raise RecordError("unknown card code (R2)", deal=number, seat=seat, card=card)
            if card in held:
                raise RecordError("a discarded card is also in a hand (R9)", deal=number,
                                  seat=seat, card=card)
            held.add(card)
    return bool(exchange)


def _check_signals(number: int, deal: Mapping[str, object], options: Options) -> None:
    """R15-R16 as the record tells them: each signal from the vocabulary, received by the
    sender's partner, and by opponents only at a table with risky signals."""
    signals = deal.get("signals")
    if signals is None:
        return
    if not isinstance(signals, list):
        raise RecordError("signals must be a list", deal=number)
    if signals and options.signals == "off":
        raise RecordError("a signal at a table without signals (R16)", deal=number)
    at = 0
    for s in signals:
        if not isinstance(s, dict) or type(s.get("from_seat")) is not int \
                or not 0 <= s["from_seat"] <= 3:
            raise RecordError("a signal names its from_seat, 0-3", deal=number)
        seat = s["from_seat"]
        n = s.get("n")
        if s.get("signal") not in SIGNALS or (
                (type(n) is not int or not 1 <= n <= 4) if s["signal"] == "aces"
                else n is not None):
            raise RecordError(f"not a signal of R15: {s.get('signal')!r} with n={n!r}",
                              deal=number, seat=seat)
        to = s.get("to")
        opponents = {left_of(seat), (seat + 3) % 4} if options.signals == "risky" else set()
        if (not isinstance(to, list) or to != sorted(set(to)) or partner_of(seat) not in to
                or not set(to) <= {partner_of(seat)} | opponents):
            raise RecordError("a signal reaches the sender's partner, and opponents only with "
                              "risky signals (R16)", deal=number, seat=seat)
        if "at" in s:
            if type(s["at"]) is not int or not at <= s["at"] < MAX_ACTIONS:
                raise RecordError("a signal's at counts the turn actions taken before it, in "
                                  "order", deal=number, seat=seat)
            at = s["at"]


def _replay_deal(number: int, deal: object, options: Options, last: bool,
                 complete: bool) -> _Replay:
    if not isinstance(deal, dict):
        raise RecordError("a deal must be an object with dealer, hands and tricks", deal=number)
    dealer = deal.get("dealer")
    if type(dealer) is not int or not 0 <= dealer <= 3:
        raise RecordError(f"dealer must be a seat 0-3, not {dealer!r}", deal=number)
    hands = _check_hands(number, deal.get("hands"))
    exchanged = _check_chanter(number, deal, options, dealer, hands)
    _check_signals(number, deal, options)
    tricks = deal.get("tricks")
    if not isinstance(tricks, list):
        raise RecordError("tricks must be a list", deal=number)
    may_be_short = last and not complete
    if len(tricks) > rules.TRICKS_PER_DEAL or (
        len(tricks) < rules.TRICKS_PER_DEAL and not may_be_short
    ):
        raise RecordError(
            f"deal has {len(tricks)} tricks, expected {rules.TRICKS_PER_DEAL} (R11)", deal=number
        )
    remaining = [set(h) for h in hands]
    played: dict[str, tuple[int, int]] = {}
    leader = left_of(dealer)                       # R10
    out_tricks: list[TrickSummary] = []
    winners: list[int | None] = []
    for t, cards in enumerate(tricks, start=1):
        if not isinstance(cards, list) or len(cards) != 4:
            n = len(cards) if isinstance(cards, list) else "no"
            raise RecordError(f"a trick has four cards, this one has {n}", deal=number, trick=t)
        for i, card in enumerate(cards):
            seat = (leader + i) % 4
            if card not in STRENGTH:
                raise RecordError("unknown card code (R2)", deal=number, trick=t, seat=seat,
                                  card=card)
            if card in played:
                raise RecordError(
                    f"card played twice (already in trick {played[card][0]})",
                    deal=number, trick=t, seat=seat, card=card,
                )
            if card not in remaining[seat]:
                raise RecordError("card not in that seat's hand", deal=number, trick=t,
                                  seat=seat, card=card)
            remaining[seat].discard(card)
            played[card] = (t, seat)
        winner = rules.trick_winner(leader, cards)   # R11
        out_tricks.append({"leader": leader, "winner": winner})
        winners.append(winner)
        leader = rules.next_leader(leader, winner)
    # Built in this order (the keys' order is what ``aluette-record verify`` prints).
    summary = cast(DealSummary, {"dealer": dealer, "tricks": out_tricks})
    if exchanged is not None:
        summary["exchange"] = exchanged
    if len(winners) == rules.TRICKS_PER_DEAL:
        score = rules.score_deal(winners, options.mordienne)
        summary["trick_counts"], summary["winner"] = score.trick_counts, score.winner
        summary["points"], summary["mordienne"] = score.points, score.mordienne
        return _Replay(summary, score.points)
    counts = [sum(1 for w in winners if w == s) for s in range(4)]
    summary["trick_counts"], summary["winner"] = counts, None
    summary["points"], summary["mordienne"], summary["complete"] = [0, 0], False, False
    return _Replay(summary, [0, 0])


def verify_record(record: object, commitment: str | None = None) -> RecordSummary:
    """R18: replay a record under the rules; R8a: check that its deals follow from its
    revealed seed material (``fair``: ``"proven"``, or ``"unproven"`` for a record without
    seed material). ``commitment``, the one a player was shown, must then be the record's.
    Returns the derived summary or raises RecordError."""
    if not isinstance(record, dict):
        raise RecordError("a record is a JSON object")
    if record.get("format") != RECORD_FORMAT:
        raise RecordError(f"format must be {RECORD_FORMAT!r}, not {record.get('format')!r}")
    try:
        options = Options.from_dict(record.get("options"))
    except (InvalidOptions, TypeError) as exc:
        raise RecordError(f"bad options: {exc}") from None
    deals = record.get("deals")
    if not isinstance(deals, list) or not deals:
        raise RecordError("deals must be a non-empty list")
    complete = record.get("complete", True) is not False
    points = [0, 0]
    out: list[DealSummary] = []
    previous_dealer: int | None = None
    target = options.target_points
    for number, deal in enumerate(deals, start=1):
        if target is not None and max(points) >= target:
            raise RecordError(f"deal after a team reached target_points {target} (R14a)",
                              deal=number)
        if target is None and number > options.deals:
            raise RecordError(f"more deals than the {options.deals} the options say (R14)",
                              deal=number)
        replay = _replay_deal(number, deal, options, number == len(deals), complete)
        dealer = replay.summary["dealer"]
        if previous_dealer is not None and dealer != left_of(previous_dealer):
            raise RecordError(
                f"dealer {dealer} should be {left_of(previous_dealer)}: the deal passes to the"
                " left (R6)", deal=number,
            )
        previous_dealer = dealer
        points[0] += replay.points[0]
        points[1] += replay.points[1]
        out.append(replay.summary)
    ended = max(points) >= target if target is not None else len(deals) == options.deals
    if complete and not ended:
        raise RecordError(
            f"the match is not over after {len(deals)} deals (R14)"
            + (f"; no team reached {target}" if target is not None else "")
        )
    result = rules.match_result(points) if ended and out[-1].get("complete", True) else "unfinished"
    # Replayed above: its options, dealers and hands are well formed.
    proof = fair.check_record(cast(Record, record), commitment)
    summary: RecordSummary = {"deals": out, "points": points, "result": result, "fair": proof}
    if proof == "proven":
        summary["contributors"] = fair.contributors(record["fair"]["contributions"])
    return summary
