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
    "RecordError",
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


class RecordError(ValueError):
    """A record that breaks a rule (R18) or whose deals do not follow from its revealed
    seed (R8a); says where: deal and trick (1-based), seat, card.

    It lives here, not in :mod:`.record`, so that :mod:`.fair` (which :mod:`.record`
    calls) can raise it too; ``server.game.record.RecordError`` is the same class.
    """

    def __init__(
        self,
        what: str,
        deal: int | None = None,
        trick: int | None = None,
        seat: int | None = None,
        card: object = None,
    ) -> None:
        self.what, self.deal, self.trick, self.seat, self.card = what, deal, trick, seat, card
        where = []
        if deal is not None:
            where.append(f"deal {deal}")
        if trick is not None:
            where.append(f"trick {trick}")
        if seat is not None:
            where.append(f"seat {seat}")
        if card is not None:
            where.append(f"card {card!r}" if not isinstance(card, str) else f"card {card}")
        super().__init__(", ".join(where) + (": " if where else "") + what)
