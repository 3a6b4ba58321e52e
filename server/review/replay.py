"""A seat's decisions in a match record, each with the view the seat had when it decided.

The record is replayed through the engine (R17, R18): each deal is dealt as the record
says (the hands as played, and before a chanter exchange the hands the seed dealt, R9),
and every action is applied in order: chanter votes and discards, signals where they were
sent (``at``) reaching whom the record says (R16), and every card. Before each action the
seat took, ``view(match, seat)`` gives what it knew: exactly what the engine showed it.
Nothing else of the match is handed on, so the review cannot look at a hidden card.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import msgspec

from protocol import TableView
from protocol.records import Record, SignalEntry
from server.game import (
    ALL_CARDS,
    ChanterVote,
    Discard,
    Event,
    Match,
    Options,
    Phase,
    Play,
    Signal,
    chance,
    fair,
    rules,
    sort_by_strength,
    view,
)
from server.game.errors import RecordError
from server.game.record import verify_record
from server.game.seats import left_of

DecisionKind = Literal["card", "chanter_vote", "discard"]

#: A deal as the replay deals it: the four hands before any exchange, and the talon.
Dealt = tuple[list[list[str]], list[str]]


class Decision(msgspec.Struct, frozen=True):
    """One decision a seat took: where it was, what the seat saw, and what it chose.

    ``actual`` is a card code, ``"yes"`` or ``"no"`` for a chanter vote, or the six
    discarded cards (R9) as codes separated by spaces, strongest first."""

    deal: int
    kind: DecisionKind
    view: TableView
    actual: str
    #: The trick (1-9) of a card decision.
    trick: int | None = None


def _scripted(options: Options, seed: str, scheme: int, first_dealer: int,
              dealt: list[Dealt]) -> Match:
    """A match whose deals are the record's, not the seed's: the replay needs no seed,
    and a record whose hands someone changed is replayed as written. With the seed, R7's
    draw is the match's own (a seat's view shows it)."""

    class Scripted(Match):
        def _start_deal(self, number: int, dealer: int) -> list[Event]:
            events = super()._start_deal(number, first_dealer if number == 1 else dealer)
            hands, talon = dealt[number - 1]
            self.hands = [list(h) for h in hands]
            self.talon = list(talon)
            if self.phase is Phase.PLAY:           # no chanter: play began at once
                self.play_hands = [list(h) for h in hands]
            return events

    match, _ = Scripted.new(options, seed, scheme)
    return match


def _seed(record: Record) -> tuple[str | None, int]:
    """The record's seed and chance scheme (R8a), if it reveals them."""
    material = record.get("fair")
    if isinstance(material, dict) and material.get("scheme") in fair.SCHEMES:
        scheme = fair.SCHEMES[material["scheme"]]
        return fair.derive_seed(material["secret"], material["salt"],
                                material["contributions"], scheme), scheme
    return None, chance.CURRENT


def _deals(record: Record, options: Options) -> list[Dealt]:
    """Each deal's hands before any exchange, and its talon (R8, R9)."""
    seed, scheme = _seed(record)
    out: list[Dealt] = []
    for number, deal in enumerate(record["deals"], start=1):
        hands = [list(h) for h in deal["hands"]]
        block = deal.get("chanter")
        if options.chanter and block is None and len(deal["tricks"]) == rules.TRICKS_PER_DEAL:
            raise RecordError("the record does not say whether the talon was exchanged, so the "
                              "seats' views cannot be rebuilt (a record written before records "
                              "were complete, R9, R17)", deal=number)
        if block is not None and block["exchange"]:
            if seed is None:
                raise RecordError("a chanter exchange in a record without seed material: the "
                                  "hands before it are unknown (R8a, R9)", deal=number)
            dealt, talon = rules.deal(rules.deal_rng(seed, number, scheme), deal["dealer"])
            for seat in (left_of(deal["dealer"]), deal["dealer"]):
                held = set(dealt[seat]) | set(talon)
                if not set(hands[seat]) | set(block["discards"][seat]) <= held:
                    raise RecordError("the hands do not follow from the revealed seed (R8)",
                                      deal=number, seat=seat)
            out.append((dealt, talon))
            continue
        held = {c for h in hands for c in h}
        out.append((hands, [c for c in ALL_CARDS if c not in held]))
    return out


def decisions(record: Record, seat: int) -> list[Decision]:
    """Every decision ``seat`` took in ``record``, in order, with its view at that moment.

    Raises :class:`RecordError` for a record that does not replay under the rules (R18),
    or that lacks what the views need (the chanter exchanges of R9)."""
    if type(seat) is not int or not 0 <= seat <= 3:
        raise RecordError(f"seat must be 0-3, not {seat!r}")
    # The rules only: a review does not need the deals to be proven fair (R8a).
    verify_record({k: v for k, v in record.items() if k != "fair"})
    options = Options.from_dict(record["options"])
    deals = record["deals"]
    seed, scheme = _seed(record)
    match = _scripted(options, seed or "review", scheme, deals[0]["dealer"],
                      _deals(record, options))
    if seed is None:
        match.draw = []         # R7's cards are not in the record: none rather than made up
    out: list[Decision] = []
    for number, deal in enumerate(deals, start=1):
        pending = list(deal.get("signals") or [])
        signal_until = _signaller(match, pending)
        taken = 0                              # turn actions so far this deal
        block = deal.get("chanter")
        if block is not None:
            for k in range(4):
                voter = (deal["dealer"] + 1 + k) % 4
                vote = block["votes"][voter]
                if vote is None:
                    break
                signal_until(taken)
                if voter == seat:
                    out.append(Decision(number, "chanter_vote", view(match, seat),
                                        "yes" if vote else "no"))
                match.apply(ChanterVote(voter, vote))
                taken += 1
            if block["exchange"]:
                for taker in (left_of(deal["dealer"]), deal["dealer"]):
                    signal_until(taken)
                    cards = block["discards"][taker]
                    if taker == seat:
                        out.append(Decision(number, "discard", view(match, seat),
                                            discard_text(cards)))
                    match.apply(Discard(taker, tuple(cards)))
                    taken += 1
        for t, cards in enumerate(deal["tricks"], start=1):
            for card in cards:
                signal_until(taken)
                player = match.to_act
                assert player is not None
                if player == seat:
                    out.append(Decision(number, "card", view(match, seat), card, trick=t))
                match.apply(Play(player, card))
                taken += 1
    return out


def _signaller(match: Match, pending: list[SignalEntry]) -> Callable[[int], None]:
    """Sends a deal's recorded signals as the deal reaches them: each one once ``taken``
    turn actions are done (its ``at``), reaching exactly whom the record says (R16)."""

    def until(taken: int) -> None:
        while pending and int(pending[0].get("at", 0)) <= taken:
            s = pending.pop(0)
            match.apply(Signal(s["from_seat"], s["signal"], s["n"]))
            match.signals[-1] = {**match.signals[-1], "to": list(s["to"])}

    return until


def discard_text(cards: list[str] | tuple[str, ...]) -> str:
    """Six discards (R9) as one choice: their codes, strongest first."""
    return " ".join(sort_by_strength(list(cards)))
