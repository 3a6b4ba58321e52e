"""Where the engine's chance comes from: every random draw of a match, from its seed (R8a).

A match draws at four places: R6's random first dealer, R7's partner draw, each deal's
shuffle (R8) and R16's risky noticing. Each place asks for its own stream by a **label**
(``first_dealer``, ``partner_draw``, ``deal:N``, ``signal:K``) so that one draw never
shifts another, and a stored match needs no generator state to be resumed.

Two derivations exist, numbered like the fair-deal schemes that use them:

- **2** (current, ``aluette-fair/2``): a counter-mode stream of SHA-256, specified in
  docs/RULES.md (R8a) as pseudo-code anyone can re-implement in any language:
  block *i* of a stream is ``SHA-256(seed + ":" + label + ":" + i)``, read as 32-bit
  big-endian words; ``below(n)`` is unbiased rejection sampling; a shuffle is
  Fisher-Yates from the last index down; a risky signal is noticed when a word is below
  ``risk × 2^32``.
- **1** (``aluette-fair/1``, matches dealt before v2): CPython's Mersenne Twister seeded
  with ``"aluette:" + seed + ":" + label``. Kept so that those records stay verifiable
  and a match stored mid-way under it ends as it began. The bots' arena also deals with
  it, so its measured figures stay comparable from run to run (the arena is not a match
  anyone has to trust).
"""

from __future__ import annotations

import hashlib
import random
import struct
from typing import Final, Protocol

#: The derivation a new match uses.
CURRENT: Final = 2
SCHEMES: Final = (1, 2)

_WORD: Final = 1 << 32
_WORDS = struct.Struct(">8I")


class Draws(Protocol):
    """One stream of a match's chance: what the rules draw from it."""

    def shuffle(self, items: list[str]) -> None:
        """Shuffle ``items`` in place (R7's draw, R8's deal)."""

    def below(self, n: int) -> int:
        """A whole number from 0 to ``n - 1``, each equally likely (R6)."""

    def notices(self, risk: float) -> bool:
        """True with probability ``risk`` (R16: does this opponent notice a signal?)."""


class Stream:
    """Scheme 2: the counter-mode SHA-256 stream of ``seed`` for one ``label``."""

    __slots__ = ("_counter", "_prefix", "_words")

    def __init__(self, seed: str, label: str) -> None:
        self._prefix = f"{seed}:{label}:"
        self._counter = 0
        self._words: list[int] = []

    def word(self) -> int:
        """The next 32-bit word of the stream (blocks of eight, first word first)."""
        if not self._words:
            block = hashlib.sha256(f"{self._prefix}{self._counter}".encode("ascii")).digest()
            self._counter += 1
            self._words = list(reversed(_WORDS.unpack(block)))
        return self._words.pop()

    def below(self, n: int) -> int:
        """Rejection sampling: words at or above the largest multiple of ``n`` are drawn
        again, so every result is exactly as likely as the others."""
        if not 1 <= n <= _WORD:
            raise ValueError(f"below(n) takes 1 <= n <= 2^32, not {n}")
        limit = _WORD - _WORD % n
        while True:
            w = self.word()
            if w < limit:
                return w % n

    def shuffle(self, items: list[str]) -> None:
        """Fisher-Yates: for i from the last index down to 1, swap i with below(i + 1)."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]

    def notices(self, risk: float) -> bool:
        """One word ``w``; noticed when ``w < risk × 2^32`` (exact in IEEE doubles)."""
        return self.word() < risk * _WORD


class _MersenneDraws:
    """Scheme 1: CPython's ``random.Random`` seeded with ``aluette:{seed}:{label}``."""

    __slots__ = ("_rng",)

    def __init__(self, seed: int | str, label: str) -> None:
        self._rng = random.Random(f"aluette:{seed}:{label}")

    def shuffle(self, items: list[str]) -> None:
        self._rng.shuffle(items)

    def below(self, n: int) -> int:
        return self._rng.randrange(n)

    def notices(self, risk: float) -> bool:
        return self._rng.random() < risk


def draws(scheme: int, seed: int | str, label: str) -> Draws:
    """The stream ``label`` of a match dealt from ``seed`` under derivation ``scheme``."""
    if scheme == 2:
        return Stream(str(seed), label)
    if scheme == 1:
        return _MersenneDraws(seed, label)
    raise ValueError(f"unknown chance scheme {scheme!r}")


def deal_label(number: int) -> str:
    return f"deal:{number}"


def signal_label(index: int) -> str:
    """The ``index``-th signal of the match (from 0), across all its deals."""
    return f"signal:{index}"


FIRST_DEALER: Final = "first_dealer"
PARTNER_DRAW: Final = "partner_draw"

__all__ = ["CURRENT", "FIRST_DEALER", "PARTNER_DRAW", "SCHEMES", "Draws", "Stream",
           "deal_label", "draws", "signal_label"]
