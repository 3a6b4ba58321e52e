"""Cards, their two-character notation (R2) and their fixed strength (R3).

Inside the engine a card is its code, a plain ``str`` such as ``"3o"``: codes are what the
protocol, the records and the CLI speak, and keeping them as the internal form means no
conversion on the hot path. :class:`Card` is the small value type for code that wants names.
"""

from __future__ import annotations

from typing import Final

from protocol import vocab
from protocol.cards import is_card

#: The codes come from the one vocabulary (protocol.vocab): ranks, suits and the 48 cards
#: of the Spanish pack (R1, R2), in the fixed order used for shuffling.
RANKS: Final[tuple[str, ...]] = tuple(vocab.RANKS)
SUITS: Final[tuple[str, ...]] = tuple(vocab.SUITS)
ALL_CARDS: Final[tuple[str, ...]] = vocab.CARD_CODES

_SUIT_NAMES: Final = {"o": "coins", "c": "cups", "b": "batons", "e": "swords"}
_RANK_NAMES: Final = {
    "1": "Ace", "2": "Two", "3": "Three", "4": "Four", "5": "Five", "6": "Six",
    "7": "Seven", "8": "Eight", "9": "Nine", "V": "Valet", "C": "Cavalière", "R": "Roi",
}

#: R3: the cartes majeures, unique cards with their traditional names, strongest first.
MAJEURES: Final[dict[str, tuple[int, str]]] = {
    "3o": (19, "Monsieur"),
    "3c": (18, "Madame"),
    "2o": (17, "Le Borgne"),
    "2c": (16, "La Vache"),
    "9c": (15, "Grand-neuf"),
    "9o": (14, "Petit-neuf"),
    "2b": (13, "Deux de chêne"),
    "2e": (12, "Deux d'écrit"),
}

_RANK_STRENGTH: Final = {
    "1": 11, "R": 10, "C": 9, "V": 8, "9": 7, "8": 6, "7": 5, "6": 4, "5": 3, "4": 2, "3": 1,
}


def _strength(code: str) -> int:
    if code in MAJEURES:
        return MAJEURES[code][0]
    return _RANK_STRENGTH[code[0]]


#: R3: strength of every card; higher wins, equal strengths tie (and may spoil a trick, R11).
STRENGTH: Final[dict[str, int]] = {code: _strength(code) for code in ALL_CARDS}


def card_name(code: str) -> str:
    """The card's name as players say it: 'Monsieur', 'Roi of batons', 'Ace of swords'."""
    if code in MAJEURES:
        return MAJEURES[code][1]
    return f"{_RANK_NAMES[code[0]]} of {_SUIT_NAMES[code[1]]}"


class UnknownCardCode(ValueError):
    """Raised for anything that is not one of the 48 codes of R2."""


def parse_card(text: object) -> str:
    """Return ``text`` if it is one of the 48 card codes (R2, case-sensitive), else raise."""
    if is_card(text):
        return text
    raise UnknownCardCode(
        f"{text!r} is not a card code: rank 1-9, V, C or R, then suit o, c, b or e (e.g. '3o')"
    )


_DISPLAY_ORDER: Final = {
    c: (-STRENGTH[c], i) for i, c in enumerate(ALL_CARDS)
}


def sort_by_strength(cards: list[str] | tuple[str, ...]) -> list[str]:
    """Strongest first; ties in the pack's fixed order so the result is stable."""
    return sorted(cards, key=_DISPLAY_ORDER.__getitem__)


class Card:
    """A card as a small value type with a text form (docs/ARCHITECTURE.md convention 5).

    ``Card.parse("3o").name == "Monsieur"``; ``str(card)`` is its code.
    """

    __slots__ = ("code",)

    def __init__(self, code: str) -> None:
        self.code = parse_card(code)

    @classmethod
    def parse(cls, text: str) -> Card:
        return cls(text)

    @property
    def name(self) -> str:
        return card_name(self.code)

    @property
    def strength(self) -> int:
        return STRENGTH[self.code]

    @property
    def rank(self) -> str:
        return self.code[0]

    @property
    def suit(self) -> str:
        return self.code[1]

    def __str__(self) -> str:
        return self.code

    def __repr__(self) -> str:
        return f"Card({self.code!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Card) and other.code == self.code

    def __hash__(self) -> int:
        return hash(self.code)
