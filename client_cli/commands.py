"""Parsing what the user types: cards, create options, signals. Pure functions.

Every parser raises :class:`InputError` with a sentence the prompt can show as is.
"""

from __future__ import annotations

import re

from protocol import MAX_NAME_LEN, clean_text, is_card
from server.game.actions import SIGNALS
from server.game.cards import sort_by_strength

LEVELS = ("random", "easy", "normal", "expert")


class InputError(ValueError):
    """The user typed something we cannot use; the message says what to type instead."""


_TABLE_LINK = re.compile(r"https?://[^/\s]+/t/([A-Za-z0-9_-]{1,64})(?:#code=([A-Za-z0-9]{1,16}))?/?")


def parse_table_ref(text: str) -> tuple[str, str | None]:
    """A table as the user gave it: its id (or a start of one), or a browser's invitation
    link ``http://host:port/t/<id>#code=K7Q2HX`` (issue 31, item 7): (table, code or None)."""
    m = _TABLE_LINK.fullmatch(text.strip())
    if m:
        return m.group(1), m.group(2)
    return text, None


_REPLAY_LINK = re.compile(r"https?://[^/\s]+/r/([A-Za-z0-9_-]{1,64})(?:/([1-9][0-9]{0,5}))?"
                          r"(?:#code=([A-Za-z0-9]{1,16}))?/?")


def parse_replay_args(args: list[str]) -> tuple[str | None, int | None, str | None]:
    """What ``replay`` was given: nothing (this table's latest match), ``MATCH``, a browser's
    replay link ``http://host/r/<table>/<match>#code=K7Q2`` (issue 28: a private table's
    link carries its code), or ``TABLE [MATCH] [CODE]``: (table or None for this one,
    match or None for the latest, code or None)."""
    if not args:
        return None, None, None
    if len(args) == 1 and args[0].isdigit():
        return None, int(args[0]), None
    m = _REPLAY_LINK.fullmatch(args[0].strip())
    if m and len(args) == 1:
        return m.group(1), int(m.group(2)) if m.group(2) else None, m.group(3)
    table, code = parse_table_ref(args[0])
    rest = args[1:]
    match = int(rest.pop(0)) if rest and rest[0].isdigit() else None
    if len(rest) > 1 or (rest and code is not None):
        raise InputError("Type `replay`, `replay MATCH`, `replay TABLE [MATCH] [CODE]` or "
                         "paste a replay link.")
    return table, match, rest[0] if rest else code


def resolve_card(token: str, hand: list[str]) -> str:
    """A card code (R2, e.g. ``3o``) or a position in the shown hand (``1`` = strongest)."""
    token = token.strip()
    if token.isdigit():
        shown = sort_by_strength(hand)
        n = int(token)
        if not shown:
            raise InputError("You have no cards in hand.")
        if not 1 <= n <= len(shown):
            count = f"{len(shown)} card" + ("s" if len(shown) != 1 else "")
            span = "only 1" if len(shown) == 1 else f"1 to {len(shown)}"
            raise InputError(f"There is no card number {n}: your hand has {count} ({span}).")
        return shown[n - 1]
    if is_card(token):
        return token
    if len(token) == 2 and is_card(token[0].upper() + token[1].lower()):
        return token[0].upper() + token[1].lower()
    shown_token = clean_text(token)[:20]
    raise InputError(f"“{shown_token}” is not a card. Type a code: rank 1-9, V, C or R then "
                     "suit o, c, b or e (e.g. 3o, Rb), or the card's number in your hand.")


_BOOL = {"on": True, "yes": True, "true": True, "1": True,
         "off": False, "no": False, "false": False, "0": False}

#: Short option names → TableOptions fields.
_ALIASES = {
    "target": "target_points", "draw": "partner_draw", "dealer": "first_dealer",
    "risk": "signal_risk", "autostart": "auto_start", "delay": "bot_delay_ms",
    "timer": "turn_timer_s", "grace": "grace_s", "level": "bot_level", "bots": "bot_level",
}
_INTS = {"deals": (1, 50), "target_points": (1, 50), "bot_delay_ms": (0, 10_000),
         "turn_timer_s": (1, 3600), "grace_s": (0, 3600)}
_BOOLS = ("mordienne", "chanter", "partner_draw", "auto_start", "hints", "rated")


def parse_bool(text: str, what: str) -> bool:
    try:
        return _BOOL[text.lower()]
    except KeyError:
        raise InputError(f"{what} takes on or off, not “{clean_text(text)[:20]}”.") from None


def parse_create(tokens: list[str]) -> tuple[dict[str, object], bool, str | None]:
    """``create deals=1 chanter=on private name=Friday`` → (options, private, name)."""
    options: dict[str, object] = {}
    private = False
    name: str | None = None
    for token in tokens:
        key, sep, value = token.partition("=")
        key = key.lower().replace("-", "_")
        if key == "private" and not sep:
            private = True
            continue
        if key in ("autostart", "auto_start", "chanter", "draw", "partner_draw") and not sep:
            options[_ALIASES.get(key, key)] = True
            continue
        if not sep:
            raise InputError(f"Options are written NAME=VALUE (e.g. deals=3), not "
                             f"“{clean_text(token)[:20]}”. Type `help create`.")
        if key == "name":
            name = clean_text(value)[:MAX_NAME_LEN] or None
            continue
        if key == "private":
            private = parse_bool(value, "private")
            continue
        field = _ALIASES.get(key, key)
        if field in _INTS:
            lo, hi = _INTS[field]
            if field in ("target_points", "turn_timer_s") and value.lower() in ("off", "none"):
                options[field] = None
                continue
            if not value.isdigit() or not lo <= int(value) <= hi:
                raise InputError(f"{key} must be a whole number from {lo} to {hi}.")
            options[field] = int(value)
        elif field in _BOOLS:
            options[field] = parse_bool(value, key)
        elif field == "first_dealer":
            if value == "random":
                options[field] = "random"
            elif value in ("0", "1", "2", "3"):
                options[field] = int(value)
            else:
                raise InputError("dealer must be random or a seat 0-3 (R6).")
        elif field == "signals":
            if value not in ("off", "private", "risky"):
                raise InputError("signals must be off, private or risky (R16).")
            options[field] = value
        elif field == "signal_risk":
            try:
                risk = float(value)
            except ValueError:
                risk = -1.0
            if not 0 <= risk <= 1:
                raise InputError("risk must be a number from 0 to 1 (R16).")
            options[field] = risk
        elif field == "bot_level":
            options[field] = parse_level(value)
        else:
            raise InputError(f"Unknown option “{clean_text(key)[:20]}”. Type `help create`.")
    return options, private, name


def parse_level(text: str) -> str:
    if text.lower() not in LEVELS:
        raise InputError(f"Bot levels are {', '.join(LEVELS)}.")
    return text.lower()


def parse_seat(text: str) -> int:
    if text not in ("0", "1", "2", "3"):
        raise InputError(f"Seats are numbered 0 to 3 (R4), not “{clean_text(text)[:10]}”.")
    return int(text)


_SIGNAL_ALIASES = {s.replace("_", ""): s for s in SIGNALS} | {
    s.replace("_", "-"): s for s in SIGNALS} | {"ace": "aces", "useless": "useless_hand",
                                                 "mordienne": "going_mordienne"}


def parse_signal(tokens: list[str]) -> tuple[str, int | None]:
    """``signal aces 2`` → ("aces", 2); ``signal monsieur`` → ("monsieur", None) (R15)."""
    if not tokens:
        raise InputError("Which signal? Type `signal` alone to list them.")
    name = tokens[0].lower()
    name = name if name in SIGNALS else _SIGNAL_ALIASES.get(name.replace("_", ""), name)
    if name not in SIGNALS:
        raise InputError(f"“{clean_text(tokens[0])[:20]}” is not a signal. Type `signal` to "
                         "list them (R15).")
    if name == "aces":
        if len(tokens) != 2 or tokens[1] not in ("1", "2", "3", "4"):
            raise InputError("Say how many aces you hold: `signal aces N`, N from 1 to 4.")
        return name, int(tokens[1])
    if len(tokens) > 1:
        raise InputError(f"The {name} signal takes no number.")
    return name, None


def resolve_sender(token: str, speakers: dict[str, tuple[str, int | None]]) -> str:
    """Whom to mute: a name (any case) or seat number of someone who has spoken at this
    table, or the sender id of their messages."""
    token = token.strip()
    if token in speakers:
        return token
    if token in ("0", "1", "2", "3"):
        at_seat = [s for s, (_, seat) in speakers.items() if seat == int(token)]
        if not at_seat:
            raise InputError(f"Nobody in seat {token} has spoken at this table yet.")
        return at_seat[-1]
    wanted = clean_text(token).casefold()
    named = [s for s, (name, _) in speakers.items() if clean_text(name).casefold() == wanted]
    shown = clean_text(token)[:20]
    if len(named) > 1:
        raise InputError(f"Two people called {shown} have spoken here: name the one you "
                         "mean by seat number.")
    if not named:
        raise InputError(f"Nobody called {shown} has spoken at this table yet (you can mute "
                         "someone once they have).")
    return named[0]


def parse_discard(tokens: list[str], hand: list[str]) -> list[str]:
    """Six distinct cards of the hand, by code or number (R9)."""
    if len(tokens) != 6:
        raise InputError(f"Discard exactly six cards (R9), not {len(tokens)}: "
                         "`discard` then six codes or numbers.")
    cards = [resolve_card(t, hand) for t in tokens]
    if len(set(cards)) != 6:
        raise InputError("The six discards must be six different cards (R9).")
    return cards
