"""The Aluette rules engine: a pure state machine (no asyncio, no I/O, no global randomness).

Start with :meth:`Match.new`, act with :meth:`Match.apply`, look with :func:`view` and
:func:`spectator_view`. Rules are cited by their ids in docs/RULES.md.
"""

from protocol.vocab import Phase

from . import chance, fair
from .actions import (
    SIGNAL_CARD,
    SIGNALS,
    Action,
    ChanterVote,
    Discard,
    Play,
    Signal,
    action_from_dict,
)
from .cards import (
    ALL_CARDS,
    MAJEURES,
    STRENGTH,
    Card,
    UnknownCardCode,
    card_name,
    parse_card,
    sort_by_strength,
)
from .errors import (
    BadDiscard,
    CardNotInHand,
    InvalidAction,
    InvalidOptions,
    MatchIsOver,
    NotYourTurn,
    RuleError,
    SignalsOff,
    StateFormatError,
    UnknownCard,
    WrongPhase,
)
from .match import Event, Match, Private
from .options import Options
from .seats import left_of, partner_of, team_of
from .views import spectator_view, view

__all__ = [
    "ALL_CARDS", "MAJEURES", "SIGNALS", "SIGNAL_CARD", "STRENGTH",
    "Action", "BadDiscard", "Card", "CardNotInHand", "ChanterVote", "Discard", "Event",
    "InvalidAction", "InvalidOptions", "Match", "MatchIsOver", "NotYourTurn", "Options",
    "Phase", "Play", "Private", "RuleError", "Signal", "SignalsOff", "StateFormatError",
    "UnknownCard", "UnknownCardCode", "WrongPhase", "action_from_dict", "card_name", "chance",
    "fair", "left_of", "parse_card", "partner_of", "sort_by_strength", "spectator_view",
    "team_of", "view",
]
