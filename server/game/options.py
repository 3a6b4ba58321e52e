"""Table options that change the rules (docs/RULES.md R6, R7, R9, R13, R14, R14a, R16)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Literal, cast

from protocol.records import OptionsMap
from protocol.vocab import SIGNALS_MODES, SignalsMode

from .errors import InvalidOptions

SignalMode = SignalsMode  # the one definition is protocol.vocab


@dataclass(frozen=True, slots=True)
class Options:
    deals: int = 5                                  # R14
    target_points: int | None = None                # R14a (None = play `deals` deals)
    mordienne: bool = True                          # R13
    chanter: bool = False                           # R9
    partner_draw: bool = False                      # R7
    first_dealer: int | Literal["random"] = "random"  # R6
    signals: SignalMode = "private"                 # R16
    signal_risk: float = 0.25                       # R16

    def __post_init__(self) -> None:
        if type(self.deals) is not int or not 1 <= self.deals <= 50:
            raise InvalidOptions("deals must be a whole number from 1 to 50")
        if self.target_points is not None and (
            type(self.target_points) is not int or not 1 <= self.target_points <= 50
        ):
            raise InvalidOptions("target_points must be off or a whole number from 1 to 50")
        for name in ("mordienne", "chanter", "partner_draw"):
            if type(getattr(self, name)) is not bool:
                raise InvalidOptions(f"{name} must be true or false")
        if self.first_dealer != "random" and (
            type(self.first_dealer) is not int or not 0 <= self.first_dealer <= 3
        ):
            raise InvalidOptions("first_dealer must be a seat 0-3 or 'random'")
        if self.signals not in SIGNALS_MODES:
            raise InvalidOptions("signals must be 'off', 'private' or 'risky'")
        risk = self.signal_risk
        if isinstance(risk, bool) or not isinstance(risk, int | float) or not 0 <= risk <= 1:
            raise InvalidOptions("signal_risk must be a number from 0 to 1")

    def to_dict(self) -> OptionsMap:
        # Not dataclasses.asdict, which deep-copies every value: every stored table
        # document holds its options (the load bench's profile showed asdict at 2.7%).
        return cast(OptionsMap, {name: getattr(self, name) for name in _FIELD_NAMES})

    @classmethod
    def from_dict(cls, data: OptionsMap | None) -> Options:
        """Build options from plain data; unknown keys are ignored (records may carry more),
        and every value is checked (``__post_init__``): the data may come from anywhere."""
        data = data or {}
        known = {f.name for f in fields(cls)}
        return cls(**cast(OptionsMap, {k: v for k, v in data.items() if k in known}))


_FIELD_NAMES = tuple(f.name for f in fields(Options))
