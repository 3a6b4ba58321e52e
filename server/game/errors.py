"""The engine's rule errors: every illegal action is the player's fault, never ours.

They are the ``RuleError`` branch of the project's one error tree (``protocol.errors``):
each class carries the wire code the protocol sends back (docs/PROTOCOL.md, "Error codes"),
so a client can tell *why* a move was refused, and no layer maps codes by hand. Raising
one never changes the match state.
"""

from __future__ import annotations

from protocol.errors import ErrorCode, RuleError

__all__ = [
    "BadDiscard",
    "CardNotInHand",
    "InvalidAction",
    "InvalidOptions",
    "MatchIsOver",
    "NotYourTurn",
    "RuleError",
    "SignalsOff",
    "StateFormatError",
    "UnknownCard",
    "WrongPhase",
]


class NotYourTurn(RuleError):
    """R10, R9: it is another seat's turn to play, vote or discard."""

    code = ErrorCode.NOT_YOUR_TURN


class CardNotInHand(RuleError):
    """R10: the card is not in the seat's hand (``details.card`` names it)."""

    code = ErrorCode.CARD_NOT_IN_HAND


class UnknownCard(RuleError):
    """R2: not one of the 48 card codes."""

    code = ErrorCode.UNKNOWN_CARD


class WrongPhase(RuleError):
    """The action belongs to another phase (a play during the chanter vote, R9)."""

    code = ErrorCode.WRONG_PHASE


class MatchIsOver(RuleError):
    """R14: the match is finished."""

    code = ErrorCode.MATCH_OVER


class SignalsOff(RuleError):
    """R16: the table's ``signals`` option is ``off``."""

    code = ErrorCode.SIGNALS_OFF


class BadDiscard(RuleError):
    """R9: not six distinct cards of the hand."""

    code = ErrorCode.BAD_DISCARD


class InvalidAction(RuleError):
    """A malformed action (a seat outside 0-3, an unknown signal): the protocol's decoder
    refuses these first, so over the network this only guards the engine's own callers."""

    code = ErrorCode.INVALID_FIELD


class InvalidOptions(ValueError):
    """Table options outside what docs/RULES.md allows."""


class StateFormatError(ValueError):
    """Stored state in a format this engine cannot read."""
