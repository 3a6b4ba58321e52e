"""What a seat can do: the engine's actions, as small frozen values with a plain-data form.

A match is its options, its seed and the list of actions applied (docs/ARCHITECTURE.md
convention 2): ``to_dict``/``action_from_dict`` (or msgspec, which encodes and decodes
them as they are) are that list's storage format.
"""

from __future__ import annotations

from typing import TypedDict, cast

import msgspec

from protocol import vocab

from .errors import InvalidAction

#: R15: the fixed signal vocabulary and the card each card-signal speaks of, from the one
#: vocabulary (protocol.vocab), re-exported for the engine's callers.
SIGNALS = vocab.SIGNALS
SIGNAL_CARD = vocab.SIGNAL_CARD


class ActionMap(TypedDict, total=False):
    """An action's storage form: its kind as ``type``, then its own fields."""

    type: str
    seat: int
    card: str
    vote: bool
    cards: list[str]
    signal: str
    n: int | None


class _ActionBase(msgspec.Struct, frozen=True, tag_field="type"):
    """An action's storage form is its fields with its kind as ``type`` (msgpack or JSON):
    ``{"type": "play", "seat": 1, "card": "3o"}``."""

    def to_dict(self) -> ActionMap:
        return cast(ActionMap, msgspec.to_builtins(self))


class Play(_ActionBase, frozen=True, tag="play"):
    seat: int
    card: str


class ChanterVote(_ActionBase, frozen=True, tag="chanter_vote"):
    seat: int
    vote: bool


class Discard(_ActionBase, frozen=True, tag="discard"):
    seat: int
    cards: tuple[str, ...]


class Signal(_ActionBase, frozen=True, tag="signal"):
    seat: int
    signal: str
    n: int | None = None


Action = Play | ChanterVote | Discard | Signal


def action_from_dict(data: ActionMap) -> Action:
    """Rebuild an action from its plain-data form; a malformed one is an InvalidAction.

    Field values are not checked here but by the engine, which refuses a card that is not
    one of the 48 codes as an unknown card (R2), whatever its type."""
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
