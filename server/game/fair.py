"""Provably fair deals (R8a): the seed is committed to before anyone contributes, derived
from the server's secret and every player's contribution, and revealed after the match.

The engine itself is unchanged: it deals from a seed (docs/ARCHITECTURE.md convention 2).
This module only says where that seed comes from, and how anyone can check it afterwards:

- **Secret and salt.** For every match the server draws a secret (32 random bytes) and a
  salt (16 random bytes), written as lowercase hex.
- **Commitment.** ``SHA-256("aluette-commit/2:" + secret + ":" + salt)``, lowercase hex.
  It is published *before* any contribution is accepted (the table shows the commitment of
  its next match from the moment that match is prepared), so the server can no longer
  choose its secret once it has seen what the players sent: grinding secrets until one
  gives the deals it likes would change the commitment everyone already saw. The scheme's
  number is inside the hash, so the server cannot pick the derivation afterwards either.
  It covers the secret and the salt, not the contributions, because those arrive after
  it: a commitment that included them could only be made once they were known, which is
  exactly when the server must not be free to choose anymore.
- **Contributions.** Each seated player may send a contribution (1-64 lowercase hex
  digits; clients make a random one by default). They are shown to everyone when the
  match starts (they reveal nothing without the secret), so each player can see theirs
  was taken as sent.
- **Seed.** ``SHA-256("aluette-seed/2:" + secret + ":" + salt + ":" + c0 + "," + c1 +
  "," + c2 + "," + c3)``, lowercase hex, where ``cN`` is seat N's contribution at the
  start (before any partner draw, R7) or the empty string. Every random draw of the match
  (R6's first dealer, R7's draw, each deal's shuffle, R16's noticing) comes from this
  string by :mod:`.chance`'s SHA-256 streams, which docs/RULES.md specifies for any
  language. Nobody knows the seed before the start: the players do not know the secret,
  and the server does not know the contributions when it commits.
- **Reveal.** The match record (R17) of a finished match carries ``fair``: the scheme,
  the commitment, the secret, the salt, the contributions and the seed. Never before: the
  seed predicts every hand.

Scheme 1 (``aluette-fair/1``, the same with ``/1`` in both hashes and CPython's Mersenne
Twister for the draws) is how matches were dealt before; its records stay verifiable.

:func:`check_record` is what ``aluette-record verify`` runs; docs/verify/ holds the same
check as a short standalone program in Python and in JavaScript, for a third party.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Sequence
from typing import NamedTuple

from protocol.records import FairBlock, Record, RecordDeal

from . import chance, rules
from .errors import RecordError
from .match import Match
from .options import Options
from .seats import left_of, partner_of

#: The scheme of new matches, and every scheme a record may carry (name -> number).
SCHEME = "aluette-fair/2"
SCHEMES = {"aluette-fair/1": 1, "aluette-fair/2": 2}
CURRENT = SCHEMES[SCHEME]
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


def scheme_name(scheme: int) -> str:
    return f"aluette-fair/{scheme}"


def commitment(secret: str, salt: str, scheme: int = CURRENT) -> str:
    """What every viewer is shown before contributions are taken (R8a)."""
    return _sha256(f"aluette-commit/{scheme}:{secret}:{salt}")


def is_contribution(value: object) -> bool:
    return isinstance(value, str) and _CONTRIBUTION.match(value) is not None


def derive_seed(secret: str, salt: str, contributions: Sequence[str | None],
                scheme: int = CURRENT) -> str:
    """The seed the engine deals from (R8a): secret, salt and the four seats' contributions
    (None: that seat sent none, a bot's seat included)."""
    if len(contributions) != 4:
        raise ValueError("one contribution (or None) per seat")
    return _sha256(f"aluette-seed/{scheme}:{secret}:{salt}:"
                   + ",".join(c or "" for c in contributions))


def contributors(contributions: Sequence[str | None]) -> int:
    """How many seats contributed to a match's seed: none means the server alone chose it,
    so no player has checked it (R8a)."""
    return sum(1 for c in contributions if c)


def contributed_words(n: int) -> str:
    """How many players the seed took a contribution from, in words, flagging none: the
    same words in ``aluette-record verify`` and both clients (R8a)."""
    if n == 0:
        return ("no player contributed to the seed: the server alone chose it, so the deals "
                "are not checked by any player")
    return f"{n} of 4 seats contributed to the seed"


def reveal(secret: str, salt: str, contributions: Sequence[str | None],
           scheme: int = CURRENT) -> FairBlock:
    """The record's ``fair`` object (R17), written only once the match is over."""
    return {
        "scheme": scheme_name(scheme),
        "commitment": commitment(secret, salt, scheme),
        "secret": secret,
        "salt": salt,
        "contributions": list(contributions),
        # How many players the seed took a contribution from (0: the server alone chose).
        "contributors": contributors(contributions),
        "seed": derive_seed(secret, salt, contributions, scheme),
    }


def compare_commitment(given: str, committed: str) -> None:
    """Raise unless ``given`` (what a player was shown, typed or pasted) is ``committed``,
    saying exactly how the two differ: a prefix, however long, is refused (it would prove
    nothing about the other digits), and says so rather than looking like a match."""
    text = given.strip().lower()
    if not re.fullmatch(r"[0-9a-f]+", text):
        bad = next((c for c in text if c not in "0123456789abcdef"), "")
        raise RecordError(f"the commitment given is not hex digits ({bad!r} is not one; "
                          f"a commitment is 64 of 0-9 and a-f) (R8a)")
    if len(text) != len(committed):
        start = ("they are its first digits" if committed.startswith(text)
                 else "they are not even its first digits")
        raise RecordError(f"you gave {len(text)} hex digits; the commitment has "
                          f"{len(committed)}: {committed}; {start}. Give all "
                          f"{len(committed)} digits, as the client shows them (R8a)")
    if text != committed:
        at = next(i for i, (a, b) in enumerate(zip(text, committed, strict=True)) if a != b)
        raise RecordError(f"the record's commitment is not the one given: they differ from "
                          f"digit {at + 1} on (the record's {committed[:at]}[{committed[at:]}], "
                          f"given {text[:at]}[{text[at:]}]) (R8a)")


def _require_complete(number: int, deal: RecordDeal, options: Options) -> None:
    """Scheme 2 records say everything chance decided: each deal's chanter exchange (R9)
    and, with risky signals, every signal and who noticed it (R16)."""
    if options.chanter and deal.get("chanter") is None:
        raise RecordError("the record does not say whether the talon was exchanged, so its "
                          "hands cannot be checked exactly (R9, R17)", deal=number)
    if options.signals == "risky" and deal.get("signals") is None:
        raise RecordError("the record does not list the deal's signals, so who noticed them "
                          "cannot be checked (R16, R17)", deal=number)


def _check_hands(number: int, deal: RecordDeal,
                 dealt: tuple[list[list[str]], list[str]], chanter_on: bool) -> None:
    """R8 (and R9): every hand as played is exactly the hand the seed dealt, with the
    talon share taken and the discards left out when the record says the talon was
    exchanged. A record that does not say (matches dealt under scheme 1, before records
    were complete) is checked as far as it can be: each card was dealt to its seat or to
    the talon share it could have taken."""
    dealer = deal["dealer"]
    hands, talon = dealt
    expected = [set(h) for h in hands]
    shares = {left_of(dealer): talon[0::2], dealer: talon[1::2]}
    block = deal.get("chanter")
    if block is None and chanter_on:
        for seat, share in shares.items():
            expected[seat] |= set(share)
    elif block is not None and block["exchange"]:
        for seat, share in shares.items():
            held = expected[seat] | set(share)
            for card in block["discards"][seat]:
                if card not in held:
                    raise RecordError("this seat discarded a card it neither was dealt nor "
                                      "took from the talon (R9)", deal=number, seat=seat,
                                      card=card)
            expected[seat] = held - set(block["discards"][seat])
    for seat, hand in enumerate(deal["hands"]):
        for card in hand:
            if card not in expected[seat]:
                raise RecordError("this card was not dealt to this seat: the hand does "
                                  "not follow from the revealed seed (R8)",
                                  deal=number, seat=seat, card=card)


class Material(NamedTuple):
    """A record's ``fair``, well formed."""

    scheme: int
    commitment: str
    secret: str
    salt: str
    contributions: list[str | None]


def _material(fair: object) -> Material:
    if not isinstance(fair, dict):
        raise RecordError("fair must be an object (R8a)")
    scheme = SCHEMES.get(fair.get("scheme"))  # type: ignore[arg-type]
    if scheme is None:
        raise RecordError(f"fair.scheme must be one of {', '.join(map(repr, SCHEMES))}, "
                          f"not {fair.get('scheme')!r} (R8a)")
    for name, pattern, what in (("commitment", _DIGEST, "64"), ("secret", _SECRET, "64"),
                                ("salt", _SALT, "32")):
        if not isinstance(fair.get(name), str) or not pattern.match(fair[name]):
            raise RecordError(f"fair.{name} must be {what} lowercase hex digits (R8a)")
    contributions = fair.get("contributions")
    if (not isinstance(contributions, list) or len(contributions) != 4
            or not all(c is None or is_contribution(c) for c in contributions)):
        raise RecordError("fair.contributions must list four seats' contributions "
                          "(1-64 lowercase hex digits, or null) (R8a)")
    return Material(scheme, fair["commitment"], fair["secret"], fair["salt"], contributions)


def check_record(record: Record, expected: str | None = None) -> str:
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
    m = _material(fair)
    if commitment(m.secret, m.salt, m.scheme) != m.commitment:
        raise RecordError(f"the revealed secret and salt do not match the commitment "
                          f"{m.commitment} (R8a)")
    if expected is not None:
        compare_commitment(expected, m.commitment)
    seed = derive_seed(m.secret, m.salt, m.contributions, m.scheme)
    if "seed" in fair and fair["seed"] != seed:
        raise RecordError("the revealed seed does not follow from the secret, the salt and "
                          "the contributions (R8a)")
    options = Options.from_dict(record.get("options"))
    deals = record["deals"]
    first, _ = Match.new(options, seed, m.scheme)     # the engine's own R6 / R7 draw
    if deals and deals[0]["dealer"] != first.dealer:
        why = "the partner draw (R7)" if options.partner_draw else "R6"
        raise RecordError(f"the first dealer is seat {first.dealer} by the revealed seed "
                          f"and {why}, not seat {deals[0]['dealer']}", deal=1)
    drawn = record.get("partner_draw")
    if options.partner_draw and drawn is not None:
        said = {"cards": [list(c) for c in first.draw], "seating": list(first.seating)}
        if drawn != said:
            raise RecordError("the record's partner_draw is not the draw the revealed seed "
                              f"makes (R7): {said}")
    noticing = chance.draws if options.signals == "risky" else None
    signal_index = 0
    for number, deal in enumerate(deals, start=1):
        finished = len(deal["tricks"]) == rules.TRICKS_PER_DEAL
        if m.scheme >= 2 and finished:
            _require_complete(number, deal, options)
        _check_hands(number, deal, rules.deal(rules.deal_rng(seed, number, m.scheme),
                                              deal["dealer"]), options.chanter)
        for signal in deal.get("signals") or ():
            if noticing is not None:                                     # R16
                draw = noticing(m.scheme, seed, chance.signal_label(signal_index))
                sender = signal["from_seat"]
                to = sorted([partner_of(sender)] + [
                    opp for opp in (left_of(sender), (sender + 3) % 4)
                    if draw.notices(options.signal_risk)])
                if signal["to"] != to:
                    raise RecordError(f"signal {signal_index + 1} of the match reached seats "
                                      f"{signal['to']}, but the revealed seed says {to} (R16)",
                                      deal=number, seat=sender)
            signal_index += 1
    if "contributors" in fair and fair["contributors"] != contributors(m.contributions):
        raise RecordError(f"fair.contributors says {fair['contributors']!r}, but "
                          f"{contributors(m.contributions)} seats contributed (R8a)")
    return "proven"


__all__ = [
    "CURRENT",
    "MAX_CONTRIBUTION_LEN",
    "SCHEME",
    "SCHEMES",
    "Material",
    "check_record",
    "commitment",
    "compare_commitment",
    "contributed_words",
    "contributors",
    "derive_seed",
    "is_contribution",
    "new_secret",
    "reveal",
    "scheme_name",
]
