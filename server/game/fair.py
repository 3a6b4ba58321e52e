"""Provably fair deals (R8a): the seed is committed to before anyone contributes, derived
from the server's secret and every player's contribution, and revealed after the match.

The engine itself is unchanged: it deals from a seed (docs/ARCHITECTURE.md convention 2).
This module only says where that seed comes from, and how anyone can check it afterwards:

- **Secret and salt.** For every match the server draws a secret (32 random bytes) and a
  salt (16 random bytes), written as lowercase hex.
- **Commitment.** ``SHA-256("aluette-commit/1:" + secret + ":" + salt)``, lowercase hex.
  It is published *before* any contribution is accepted (the table shows the commitment of
  its next match from the moment that match is prepared), so the server can no longer
  choose its secret once it has seen what the players sent: grinding secrets until one
  gives the deals it likes would change the commitment everyone already saw.
  It covers the secret and the salt, not the contributions, because those arrive after
  it: a commitment that included them could only be made once they were known, which is
  exactly when the server must not be free to choose anymore.
- **Contributions.** Each seated player may send a contribution (1-64 lowercase hex
  digits; clients make a random one by default). They are shown to everyone when the
  match starts (they reveal nothing without the secret), so each player can see theirs
  was taken as sent.
- **Seed.** ``SHA-256("aluette-seed/1:" + secret + ":" + salt + ":" + c0 + "," + c1 +
  "," + c2 + "," + c3)``, lowercase hex, where ``cN`` is seat N's contribution at the
  start (before any partner draw, R7) or the empty string. The engine deals from this
  string (``Match.new(options, seed)``): the first dealer (R6) or the partner draw (R7),
  and each deal's shuffle (R8). Nobody knows the seed before the start: the players do
  not know the secret, and the server does not know the contributions when it commits.
- **Reveal.** The match record (R17) of a finished match carries ``fair``: the scheme,
  the commitment, the secret, the salt, the contributions and the seed. Never before: the
  seed predicts every hand.

:func:`check_record` is what ``aluette-record verify`` runs; docs/RULES.md (R8a) has the
same check in ten lines of Python for a third party.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Sequence
from typing import Any

from . import rules
from .errors import RecordError
from .match import Match
from .options import Options
from .seats import left_of

SCHEME = "aluette-fair/1"
SECRET_BYTES = 32
SALT_BYTES = 16
#: A player's contribution: 1 to 64 lowercase hex digits.
MAX_CONTRIBUTION_LEN = 64

_CONTRIBUTION = re.compile(r"[0-9a-f]{1,64}\Z")
_SECRET = re.compile(r"[0-9a-f]{64}\Z")
_SALT = re.compile(r"[0-9a-f]{32}\Z")
_DIGEST = _SECRET


def new_secret() -> tuple[str, str]:
    """A fresh (secret, salt) for one match, from the operating system's CSPRNG."""
    return secrets.token_hex(SECRET_BYTES), secrets.token_hex(SALT_BYTES)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def commitment(secret: str, salt: str) -> str:
    """What every viewer is shown before contributions are taken (R8a)."""
    return _sha256(f"aluette-commit/1:{secret}:{salt}")


def is_contribution(value: object) -> bool:
    return isinstance(value, str) and _CONTRIBUTION.match(value) is not None


def derive_seed(secret: str, salt: str, contributions: Sequence[str | None]) -> str:
    """The seed the engine deals from (R8a): secret, salt and the four seats' contributions
    (None: that seat sent none, a bot's seat included)."""
    if len(contributions) != 4:
        raise ValueError("one contribution (or None) per seat")
    return _sha256(f"aluette-seed/1:{secret}:{salt}:"
                   + ",".join(c or "" for c in contributions))


def reveal(secret: str, salt: str, contributions: Sequence[str | None]) -> dict[str, Any]:
    """The record's ``fair`` object (R17), written only once the match is over."""
    return {
        "scheme": SCHEME,
        "commitment": commitment(secret, salt),
        "secret": secret,
        "salt": salt,
        "contributions": list(contributions),
        "seed": derive_seed(secret, salt, contributions),
    }


def _material(fair: object) -> tuple[str, str, str, list[str | None]]:
    """(commitment, secret, salt, contributions) of a record's ``fair``, well formed."""
    if not isinstance(fair, dict):
        raise RecordError("fair must be an object (R8a)")
    if fair.get("scheme") != SCHEME:
        raise RecordError(f"fair.scheme must be {SCHEME!r}, not {fair.get('scheme')!r} (R8a)")
    for name, pattern, what in (("commitment", _DIGEST, "64"), ("secret", _SECRET, "64"),
                                ("salt", _SALT, "32")):
        if not isinstance(fair.get(name), str) or not pattern.match(fair[name]):
            raise RecordError(f"fair.{name} must be {what} lowercase hex digits (R8a)")
    contributions = fair.get("contributions")
    if (not isinstance(contributions, list) or len(contributions) != 4
            or not all(c is None or is_contribution(c) for c in contributions)):
        raise RecordError("fair.contributions must list four seats' contributions "
                          "(1-64 lowercase hex digits, or null) (R8a)")
    return fair["commitment"], fair["secret"], fair["salt"], contributions


def check_record(record: dict[str, Any], expected: str | None = None) -> str:
    """R8a: ``"proven"`` when the record's deals follow from seed material that matches its
    commitment (and ``expected``, the commitment a player was shown, if given);
    ``"unproven"`` for a record without seed material (a match played before fair deals).

    Call it on a record that :func:`~.record.verify_record` already replayed (R18): its
    options, dealers and hands are well formed. Raises :class:`RecordError` otherwise.
    """
    fair = record.get("fair")
    if fair is None:
        if expected is not None:
            raise RecordError("the record carries no seed material, so it cannot be checked "
                              "against a commitment (R8a)")
        return "unproven"
    committed, secret, salt, contributions = _material(fair)
    if commitment(secret, salt) != committed:
        raise RecordError(f"the revealed secret and salt do not match the commitment "
                          f"{committed[:16]}… (R8a)")
    if expected is not None and expected.strip().lower() != committed:
        raise RecordError(f"the record's commitment {committed[:16]}… is not the one given, "
                          f"{expected.strip()[:16]}… (R8a)")
    seed = derive_seed(secret, salt, contributions)
    if "seed" in fair and fair["seed"] != seed:
        raise RecordError("the revealed seed does not follow from the secret, the salt and "
                          "the contributions (R8a)")
    options = Options.from_dict(record.get("options"))
    deals = record["deals"]
    first, _ = Match.new(options, seed)          # the engine's own R6 / R7 draw
    if deals and deals[0]["dealer"] != first.dealer:
        why = "the partner draw (R7)" if options.partner_draw else "R6"
        raise RecordError(f"the first dealer is seat {first.dealer} by the revealed seed "
                          f"and {why}, not seat {deals[0]['dealer']}", deal=1)
    for number, deal in enumerate(deals, start=1):
        dealer = deal["dealer"]
        hands, talon = rules.deal(rules.deal_rng(seed, number), dealer)   # R8
        shares = {left_of(dealer): talon[0::2], dealer: talon[1::2]} if options.chanter \
            else {}
        for seat, hand in enumerate(deal["hands"]):
            allowed = set(hands[seat]) | set(shares.get(seat, ()))        # R9's exchange
            for card in hand:
                if card not in allowed:
                    raise RecordError("this card was not dealt to this seat: the hand does "
                                      "not follow from the revealed seed (R8)",
                                      deal=number, seat=seat, card=card)
    return "proven"


__all__ = [
    "MAX_CONTRIBUTION_LEN",
    "SCHEME",
    "check_record",
    "commitment",
    "derive_seed",
    "is_contribution",
    "new_secret",
    "reveal",
]
