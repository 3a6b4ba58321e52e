"""The engine's error tree: every illegal action is the player's fault, never ours.

Each error carries a ``code`` that the protocol sends back as is (docs/PROTOCOL.md), so a
client can tell *why* a move was refused. Raising one never changes the match state.
"""

from __future__ import annotations


class RuleError(Exception):
    """An action the rules do not allow right now; the state is left exactly as it was."""

    code = "invalid_action"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotYourTurn(RuleError):
    code = "not_your_turn"


class CardNotInHand(RuleError):
    code = "card_not_in_hand"


class UnknownCard(RuleError):
    code = "unknown_card"


class WrongPhase(RuleError):
    code = "wrong_phase"


class MatchIsOver(RuleError):
    code = "match_over"


class SignalsOff(RuleError):
    code = "signals_off"


class BadDiscard(RuleError):
    code = "bad_discard"


class InvalidAction(RuleError):
    code = "invalid_action"


class InvalidOptions(ValueError):
    """Table options outside what docs/RULES.md allows."""


class StateFormatError(ValueError):
    """Stored state in a format this engine cannot read."""
