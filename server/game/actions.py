"""What a seat can do: the engine's actions, as small frozen values with a plain-data form.

A match is its options, its seed and the list of actions applied (docs/ARCHITECTURE.md
convention 2): ``to_dict``/``action_from_dict`` are that list's storage format.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from protocol import vocab

from .errors import InvalidAction

#: R15: the fixed signal vocabulary and the card each card-signal speaks of, from the one
#: vocabulary (protocol.vocab), re-exported for the engine's callers.
SIGNALS = vocab.SIGNALS
SIGNAL_CARD = vocab.SIGNAL_CARD


@dataclass(frozen=True, slots=True)
class Play:
    seat: int
    card: str

    def to_dict(self) -> dict[str, Any]:
        return {"type": "play", "seat": self.seat, "card": self.card}


@dataclass(frozen=True, slots=True)
class ChanterVote:
    seat: int
    vote: bool

    def to_dict(self) -> dict[str, Any]:
        return {"type": "chanter_vote", "seat": self.seat, "vote": self.vote}


@dataclass(frozen=True, slots=True)
class Discard:
    seat: int
    cards: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"type": "discard", "seat": self.seat, "cards": list(self.cards)}


@dataclass(frozen=True, slots=True)
class Signal:
    seat: int
    signal: str
    n: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"type": "signal", "seat": self.seat, "signal": self.signal, "n": self.n}


Action = Play | ChanterVote | Discard | Signal


def action_from_dict(data: dict[str, Any]) -> Action:
    """Rebuild an action from its plain-data form; anything malformed is an InvalidAction."""
    try:
        kind = data["type"]
        seat = data["seat"]
        if type(seat) is not int or not 0 <= seat <= 3:
            raise InvalidAction(f"seat must be 0-3, not {seat!r}")
        match kind:
            case "play":
                return Play(seat, data["card"])
            case "chanter_vote":
                return ChanterVote(seat, data["vote"])
            case "discard":
                return Discard(seat, tuple(data["cards"]))
            case "signal":
                return Signal(seat, data["signal"], data.get("n"))
    except (KeyError, TypeError) as exc:
        raise InvalidAction(f"malformed action {data!r}: {exc}") from None
    raise InvalidAction(f"unknown action type {kind!r}")
