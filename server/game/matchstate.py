"""A match's state: every field plain data, stored as is (``to_dict``/``from_dict``) and
copied cheaply before each change (``clone``). :class:`~.match.Match` adds the rules that
change it (``new``, ``apply``).
"""

from __future__ import annotations

import copy
from typing import Any, NotRequired, Self, TypedDict

from protocol.vocab import MatchResult, Phase, SignalId

from . import chance, rules
from .errors import StateFormatError
from .options import Options

STATE_FORMAT = 1


class TrickRecord(TypedDict):
    """A finished trick in the match's state: cards in play order from ``leader`` (R11)."""

    leader: int
    cards: list[str]
    winner: int | None


class DealRecord(TypedDict):
    """A finished deal in the match's state: the hands as played, the tricks, the score."""

    dealer: int
    hands: list[list[str]]
    tricks: list[list[str]]
    trick_counts: list[int]
    winner: int | None
    points: list[int]
    mordienne: bool
    #: R9, public once the match is over (R17); absent from deals stored before.
    votes: NotRequired[list[bool | None]]
    discards: NotRequired[list[list[str]]]


class SignalRecord(TypedDict):
    """A signal in the match's state (R15), with who received it (R16): never shown as is."""

    deal: int
    from_seat: int
    signal: SignalId
    n: int | None
    to: list[int]
    #: The turn actions (cards, votes, discards) taken in the deal before it (R17).
    at: int


class MatchState:
    """One match's state; :class:`~.match.Match` is the one to use."""

    def __init__(self, options: Options, seed: int | str, draws: int = chance.CURRENT) -> None:
        """Prefer :meth:`new`, which also returns the opening events. ``draws`` is how
        chance comes from the seed (:mod:`.chance`: 2 today, 1 for matches dealt before)."""
        if draws not in chance.SCHEMES:
            raise ValueError(f"unknown chance scheme {draws!r}")
        self.options = options
        self.seed = seed
        self.draws = draws
        self.phase = Phase.PLAY
        self.seating = [0, 1, 2, 3]
        self.draw: list[list[Any]] = []
        self.deal_number = 0
        self.dealer = 0
        self.hands: list[list[str]] = [[], [], [], []]
        self.talon: list[str] = []
        self.discards: list[list[str]] = [[], [], [], []]
        self.play_hands: list[list[str]] = [[], [], [], []]
        self.votes: list[bool | None] = [None, None, None, None]
        self.to_act: int | None = None
        self.leader = 0
        self.trick: list[str] = []
        self.tricks: list[TrickRecord] = []
        self.points = [0, 0]
        self.deals: list[DealRecord] = []
        self.signals: list[SignalRecord] = []
        self.signal_count = 0
        self.version = 0
    # ------------------------------------------------------------------ queries

    @property
    def over(self) -> bool:
        return self.phase is Phase.MATCH_OVER

    @property
    def result(self) -> MatchResult | None:
        return rules.match_result(self.points) if self.over else None
    # ------------------------------------------------------------------ storage

    _FIELDS = ("seating", "draw", "deal_number", "dealer", "hands", "talon", "discards",
               "play_hands", "votes", "to_act", "leader", "trick", "tricks", "points", "deals",
               "signals", "signal_count", "version")

    def to_dict(self, *, copy_data: bool = True) -> dict[str, Any]:
        """The whole state as plain data (for Redis), with a format version.

        ``copy_data=False`` shares this match's lists: for callers that serialize at once
        and never mutate this match again (the server clones before every change).
        """
        data: dict[str, Any] = {
            "format": STATE_FORMAT,
            "options": self.options.to_dict(),
            "seed": self.seed,
            "draws": self.draws,
            "phase": str(self.phase),
        }
        for name in self._FIELDS:
            value = getattr(self, name)
            data[name] = copy.deepcopy(value) if copy_data else value
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, copy_data: bool = True) -> Self:
        """The match ``data`` holds (:meth:`to_dict`'s form).

        ``copy_data=False`` takes ``data``'s lists as this match's own, the other half of
        :meth:`to_dict`'s: for data nobody changes after (a document just decoded), and a
        match changed only through :meth:`clone`, as the server does (issue 32: a copy of
        every heard document was 4% of a process that follows another's commits).
        """
        if not isinstance(data, dict) or data.get("format") != STATE_FORMAT:
            raise StateFormatError(f"unsupported match state format {data.get('format')!r}")
        try:
            # A state stored before chance scheme 2 has no "draws": it was dealt under 1.
            m = cls(Options.from_dict(data["options"]), data["seed"], data.get("draws", 1))
            m.phase = Phase(data["phase"])
            for name in cls._FIELDS:
                setattr(m, name, copy.deepcopy(data[name]) if copy_data else data[name])
        except (KeyError, ValueError, TypeError) as exc:
            raise StateFormatError(f"corrupt match state: {exc}") from None
        return m

    def clone(self) -> Self:
        """An independent copy, cheaply: only what :meth:`apply` mutates in place is copied.

        Finished tricks, deal results, signals and the draw are never changed once
        written (they are only appended to or replaced), so their entries are shared.
        """
        m = type(self).__new__(type(self))
        m.options, m.seed, m.phase = self.options, self.seed, self.phase
        m.draws = self.draws
        m.seating, m.draw = list(self.seating), self.draw
        m.deal_number, m.dealer = self.deal_number, self.dealer
        m.hands = [list(h) for h in self.hands]
        m.talon = list(self.talon)
        m.discards = list(self.discards)
        m.play_hands = list(self.play_hands)
        m.votes = list(self.votes)
        m.to_act, m.leader = self.to_act, self.leader
        m.trick = list(self.trick)
        m.tricks = list(self.tricks)
        m.points = list(self.points)
        m.deals = list(self.deals)
        m.signals = list(self.signals)
        m.signal_count, m.version = self.signal_count, self.version
        return m

