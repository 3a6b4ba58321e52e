"""The game's vocabulary, defined once: card codes, signals, phases, levels, modes, results.

Every layer speaks these words: the engine (``server/game``), the bots, the records, the
protocol, the clients. They live here because ``protocol`` is the one package every other
package may import and that imports none of them (docs/ARCHITECTURE.md). Each word list is
written exactly once, as a ``Literal`` type (so msgspec validates it on the wire and mypy
checks it in code) or an enum; the tuples beside them are derived, never retyped.
"""

from __future__ import annotations

import enum
from typing import Final, Literal, get_args

#: R1: ranks 1-9, Valet, Cavalière, Roi; R2: their one-character codes.
RANKS: Final = "123456789VCR"
#: R2: oros (coins), copas (cups), bastos (batons), espadas (swords).
SUITS: Final = "ocbe"
#: All 48 card codes (R2), suit-major in docs/RULES.md order: the order the engine shuffles.
CARD_CODES: Final[tuple[str, ...]] = tuple(r + s for s in SUITS for r in RANKS)

#: R15: the fixed signal vocabulary.
SignalId = Literal[
    "monsieur",
    "madame",
    "borgne",
    "vache",
    "grand_neuf",
    "petit_neuf",
    "deux_de_chene",
    "deux_d_ecrit",
    "aces",
    "useless_hand",
    "going_mordienne",
]
SIGNALS: Final[tuple[str, ...]] = get_args(SignalId)

#: R15: the carte majeure each card signal speaks of.
SIGNAL_CARD: Final[dict[str, str]] = {
    "monsieur": "3o",
    "madame": "3c",
    "borgne": "2o",
    "vache": "2c",
    "grand_neuf": "9c",
    "petit_neuf": "9o",
    "deux_de_chene": "2b",
    "deux_d_ecrit": "2e",
}

#: R16: who receives a partner signal.
SignalsMode = Literal["off", "private", "risky"]
SIGNALS_MODES: Final[tuple[str, ...]] = get_args(SignalsMode)

#: Bot levels a table may ask for (the arena has reference levels of its own).
BotLevel = Literal["random", "easy", "normal", "expert"]
BOT_LEVELS: Final[tuple[str, ...]] = get_args(BotLevel)

#: R14: the result of a match.
MatchResult = Literal["team0", "team1", "draw"]
#: A table's life: waiting for players, playing, finished, abandoned (swept unfinished).
TableStatus = Literal["waiting", "playing", "finished", "abandoned"]
SeatKind = Literal["empty", "human", "bot"]


class Phase(enum.StrEnum):
    """What the table waits for (R9-R14); the engine's phases, and the wire's words for them.

    ``deal_over`` is reserved: the engine scores a deal and deals the next one in the same
    step, so no view is ever in it; clients must still accept it.
    """

    CHANTER_VOTE = "chanter_vote"
    CHANTER_DISCARD = "chanter_discard"
    PLAY = "play"
    DEAL_OVER = "deal_over"
    MATCH_OVER = "match_over"


#: The phases in which a seat is to act (``turn.phase``).
TURN_PHASES: Final[tuple[Phase, ...]] = (Phase.CHANTER_VOTE, Phase.CHANTER_DISCARD, Phase.PLAY)

__all__ = [
    "BOT_LEVELS",
    "CARD_CODES",
    "RANKS",
    "SIGNALS",
    "SIGNALS_MODES",
    "SIGNAL_CARD",
    "SUITS",
    "TURN_PHASES",
    "BotLevel",
    "MatchResult",
    "Phase",
    "SeatKind",
    "SignalId",
    "SignalsMode",
    "TableStatus",
]
