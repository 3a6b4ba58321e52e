"""The match as a pure state machine (docs/ARCHITECTURE.md conventions 2-4).

A :class:`Match` is built from options and a seed; :meth:`Match.apply` takes one action and
returns the events it caused, or raises a :class:`~.errors.RuleError` and changes nothing.
Chance (the partner draw, each shuffle, who notices a risky signal) comes only from the seed,
so the same seed and actions always give the same match.

Events are the protocol's own typed payloads (:mod:`protocol.events`), so nothing converts
them between the engine and the wire. An event meant for some seats only comes wrapped in a
:class:`Private` that names them: a seat's hand, the talon cards it receives, a signal.
Anything else is public, spectators included.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import cast

from protocol.events import (
    CardPlayed,
    ChanterDiscarded,
    ChanterResult,
    ChanterVoted,
    DealScored,
    DealStarted,
    EventPayload,
    HandDealt,
    MatchOver,
    PartnerDraw,
    SignalReceived,
    SignalSent,
    TalonDealt,
    TrickDone,
    Turn,
)
from protocol.vocab import Phase, SignalId

from . import chance, rules
from .actions import SIGNALS, Action, ChanterVote, Discard, Play, Signal
from .cards import STRENGTH, sort_by_strength
from .errors import (
    BadDiscard,
    CardNotInHand,
    InvalidAction,
    MatchIsOver,
    NotYourTurn,
    SignalsOff,
    UnknownCard,
    WrongPhase,
)
from .matchstate import MatchState
from .options import Options
from .seats import left_of, partner_of


@dataclass(frozen=True, slots=True)
class Private:
    """An event only the seats in ``to`` receive (R8 a hand, R9 the talon, R16 a signal);
    everyone else gets a placeholder, or nothing at all (docs/PROTOCOL.md)."""

    payload: EventPayload
    to: tuple[int, ...]


#: What :meth:`Match.apply` returns: public payloads, and private ones wrapped.
Event = EventPayload | Private

# Plays are immutable values: build each of the 4 x 48 once, so listing legal moves is cheap.
_PLAYS = [{c: Play(seat, c) for c in STRENGTH} for seat in range(4)]

STATE_FORMAT = 1


class Match(MatchState):
    """One match of Aluette: its state (:class:`~.matchstate.MatchState`, plain data that
    serializes as is) and the rules that change it."""

    # ------------------------------------------------------------------ starting

    @classmethod
    def new(cls, options: Options | None = None, seed: int | str = 0,
            draws: int = chance.CURRENT) -> tuple[Match, list[Event]]:
        """Set up a match: the partner draw if on (R7), the first dealer (R6), the first deal."""
        m = cls(options or Options(), seed, draws)
        events: list[Event] = []
        if m.options.partner_draw:
            drawn = rules.partner_draw(chance.draws(draws, seed, chance.PARTNER_DRAW))
            m.seating = list(drawn.seating)
            m.draw = [[s, c] for s, c in drawn.cards]
            dealer = drawn.first_dealer
            events.append(PartnerDraw(cards=[(s, c) for s, c in m.draw],
                                      seating=list(m.seating), dealer=dealer))
        elif m.options.first_dealer == "random":
            dealer = chance.draws(draws, seed, chance.FIRST_DEALER).below(4)
        else:
            dealer = int(m.options.first_dealer)
        events += m._start_deal(1, dealer)
        return m, events

    def _start_deal(self, number: int, dealer: int) -> list[Event]:
        """R8 (and R9's vote when the table plays chanter)."""
        self.deal_number = number
        self.dealer = dealer
        self.hands, self.talon = rules.deal(rules.deal_rng(self.seed, number, self.draws),
                                            dealer)
        self.discards = [[], [], [], []]
        self.votes = [None, None, None, None]
        self.leader = left_of(dealer)
        self.trick = []
        self.tricks = []
        events: list[Event] = [DealStarted(deal_number=number, dealer=dealer)]
        for seat in range(4):
            events.append(Private(HandDealt(seat=seat, cards=sort_by_strength(self.hands[seat])),
                                  (seat,)))
        if self.options.chanter:
            self.phase = Phase.CHANTER_VOTE
            self.to_act = left_of(dealer)
        else:
            self._begin_play()
        events.append(self._turn())
        return events

    def _turn(self) -> Turn:
        """Whose turn it is now, and what they are to do (the seat to act is known here)."""
        assert self.to_act is not None
        return Turn(seat=self.to_act, phase=self.phase)

    def _begin_play(self) -> None:
        self.phase = Phase.PLAY
        self.play_hands = [list(h) for h in self.hands]
        self.leader = left_of(self.dealer)   # R10
        self.to_act = self.leader

    def legal_actions(self, seat: int) -> list[Action]:
        """The turn actions ``seat`` may take now (signals, allowed any time, are not listed)."""
        if seat != self.to_act:
            return []
        if self.phase is Phase.PLAY:
            plays = _PLAYS[seat]
            return [plays[c] for c in self.hands[seat]]   # R10: every card is legal
        if self.phase is Phase.CHANTER_VOTE:
            return [ChanterVote(seat, True), ChanterVote(seat, False)]
        if self.phase is Phase.CHANTER_DISCARD:
            return [Discard(seat, combo) for combo in itertools.combinations(self.hands[seat], 6)]
        return []

    # ------------------------------------------------------------------ applying

    def apply(self, action: Action) -> list[Event]:
        """Apply one action; return its events. Raises RuleError and changes nothing if illegal.

        Every check happens before the first mutation, so a refused action cannot leave the
        state half-changed.
        """
        if self.phase is Phase.MATCH_OVER:
            raise MatchIsOver("the match is over")
        match action:
            case Signal():
                events = self._signal(action)
            case Play():
                events = self._play(action)
            case ChanterVote():
                events = self._vote(action)
            case Discard():
                events = self._discard(action)
            case _:
                raise InvalidAction(f"not an action: {action!r}")
        self.version += 1
        return events

    def _check_turn(self, seat: int, phase: Phase, what: str) -> None:
        if type(seat) is not int or not 0 <= seat <= 3:
            raise InvalidAction(f"seat must be 0-3, not {seat!r}")
        if self.phase is not phase:
            raise WrongPhase(f"cannot {what} now: the table is in the {self.phase} phase")
        if seat != self.to_act:
            raise NotYourTurn(f"it is seat {self.to_act}'s turn, not seat {seat}'s")

    def _play(self, action: Play) -> list[Event]:
        seat, card = action.seat, action.card
        self._check_turn(seat, Phase.PLAY, "play a card")
        if not isinstance(card, str) or card not in STRENGTH:
            raise UnknownCard(f"{card!r} is not a card code (R2)")
        hand = self.hands[seat]
        if card not in hand:
            raise CardNotInHand(f"you do not hold {card}", details={"card": card})
        hand.remove(card)
        self.trick.append(card)
        events: list[Event] = [CardPlayed(seat=seat, card=card)]
        if len(self.trick) < 4:
            self.to_act = left_of(seat)
            events.append(self._turn())
            return events
        # R11: four cards down.
        winner = rules.trick_winner(self.leader, self.trick)
        number = len(self.tricks) + 1
        self.tricks.append({"leader": self.leader, "cards": self.trick, "winner": winner})
        events.append(TrickDone(number=number, leader=self.leader, cards=list(self.trick),
                                winner=winner))
        self.trick = []
        self.leader = rules.next_leader(self.leader, winner)
        if number < rules.TRICKS_PER_DEAL:
            self.to_act = self.leader
            events.append(self._turn())
            return events
        return events + self._end_deal()

    def _end_deal(self) -> list[Event]:
        """R12-R14a: score the deal, then start the next one or end the match."""
        score = rules.score_deal([t["winner"] for t in self.tricks], self.options.mordienne)
        self.points[0] += score.points[0]
        self.points[1] += score.points[1]
        self.deals.append({
            "dealer": self.dealer,
            "hands": [list(h) for h in self.play_hands],
            "tricks": [list(t["cards"]) for t in self.tricks],
            "trick_counts": score.trick_counts,
            "winner": score.winner,
            "points": score.points,
            "mordienne": score.mordienne,
            # R9, public once the match is over (R17): so a record is verified exactly.
            "votes": list(self.votes),
            "discards": [list(d) for d in self.discards],
        })
        events: list[Event] = [DealScored(
            deal_number=self.deal_number, dealer=self.dealer,
            trick_counts=list(score.trick_counts), winner=score.winner,
            points=list(score.points), mordienne=score.mordienne, totals=list(self.points),
        )]
        target = self.options.target_points
        finished = (
            max(self.points) >= target if target is not None
            else self.deal_number >= self.options.deals
        )
        if finished:
            self.phase = Phase.MATCH_OVER
            self.to_act = None
            # The R17 record names the players, which only the server knows: it fills
            # ``record`` in (server/mutations.py); the engine's own copy is empty.
            events.append(MatchOver(points=list(self.points),
                                    result=rules.match_result(self.points), record={}))
            return events
        return events + self._start_deal(self.deal_number + 1, left_of(self.dealer))

    def _vote(self, action: ChanterVote) -> list[Event]:
        """R9: each seat in turn from the dealer's left; the first refusal ends the vote."""
        seat = action.seat
        self._check_turn(seat, Phase.CHANTER_VOTE, "vote on chanter")
        if type(action.vote) is not bool:
            raise InvalidAction("a chanter vote is true or false")
        self.votes[seat] = action.vote
        events: list[Event] = [ChanterVoted(seat=seat, vote=action.vote)]
        if not action.vote:
            self._begin_play()
            events.append(ChanterResult(accepted=False))
            events.append(self._turn())
            return events
        if seat != self.dealer:
            self.to_act = left_of(seat)
            events.append(self._turn())
            return events
        # All four agreed: the talon goes one at a time to the dealer's left and the dealer.
        first, dealer = left_of(self.dealer), self.dealer
        given = {first: self.talon[0::2], dealer: self.talon[1::2]}
        self.hands[first] += given[first]
        self.hands[dealer] += given[dealer]
        self.talon = []
        self.phase = Phase.CHANTER_DISCARD
        self.to_act = first
        events.append(ChanterResult(accepted=True))
        for s in (first, dealer):
            events.append(Private(TalonDealt(seat=s, cards=given[s]), (s,)))
        events.append(self._turn())
        return events

    def _discard(self, action: Discard) -> list[Event]:
        """R9: the two seats that took the talon each discard six cards, face down."""
        seat = action.seat
        self._check_turn(seat, Phase.CHANTER_DISCARD, "discard")
        if not isinstance(action.cards, list | tuple):
            raise BadDiscard("a discard is a list of six cards")
        cards = list(action.cards)
        if len(cards) != 6:
            raise BadDiscard(f"discard exactly six cards, not {len(cards)}")
        for c in cards:
            if not isinstance(c, str) or c not in STRENGTH:
                raise UnknownCard(f"{c!r} is not a card code (R2)")
        if len(set(cards)) != 6:
            raise BadDiscard("the six discards must be six different cards")
        for c in cards:
            if c not in self.hands[seat]:
                raise CardNotInHand(f"you do not hold {c}", details={"card": c})
        for c in cards:
            self.hands[seat].remove(c)
        self.discards[seat] = cards
        events: list[Event] = [ChanterDiscarded(seat=seat)]
        if seat == left_of(self.dealer):
            self.to_act = self.dealer
        else:
            self._begin_play()
        events.append(self._turn())
        return events

    def _signal(self, action: Signal) -> list[Event]:
        """R15-R16: a gesture to the partner; in risky mode opponents may notice it."""
        seat = action.seat
        if type(seat) is not int or not 0 <= seat <= 3:
            raise InvalidAction(f"seat must be 0-3, not {seat!r}")
        if self.options.signals == "off":
            raise SignalsOff("this table does not allow signals")
        if action.signal not in SIGNALS:
            raise InvalidAction(f"unknown signal {action.signal!r}")
        n = action.n
        if action.signal == "aces":
            if type(n) is not int or not 1 <= n <= 4:
                raise InvalidAction("the aces signal needs n from 1 to 4")
        elif n is not None:
            raise InvalidAction(f"the {action.signal} signal takes no number")
        to = [partner_of(seat)]
        if self.options.signals == "risky":
            rng = chance.draws(self.draws, self.seed, chance.signal_label(self.signal_count))
            for opp in (left_of(seat), (seat + 3) % 4):
                if rng.notices(self.options.signal_risk):
                    to.append(opp)
        self.signal_count += 1
        signal = cast(SignalId, action.signal)   # one of SIGNALS: checked above
        self.signals.append({"deal": self.deal_number, "from_seat": seat, "signal": signal,
                             "n": n, "to": sorted(to),
                             "at": self._actions_taken()})   # where it came in the deal (R17)
        # The sender hears back what it sent, never who noticed it (R16).
        return [Private(SignalReceived(from_seat=seat, signal=signal, n=n), tuple(sorted(to))),
                Private(SignalSent(signal=signal, n=n), (seat,))]

    def _actions_taken(self) -> int:
        """Turn actions taken so far this deal: chanter votes, discards, then cards."""
        return (sum(v is not None for v in self.votes) + sum(1 for d in self.discards if d)
                + 4 * len(self.tricks) + len(self.trick))
