"""What the user types → cards, options, signals (pure parsing, no network)."""

from __future__ import annotations

import pytest

from client_cli.commands import (
    InputError,
    parse_create,
    parse_discard,
    parse_signal,
    resolve_card,
)
from client_cli.render import ERROR_SENTENCES, card_text, error_text, safe
from protocol import ErrorCode

HAND = ["4b", "3o", "Rb", "1e", "9c", "5o", "Vc", "2b", "8e"]


def test_cards_by_code_and_by_position() -> None:
    # Positions follow the shown order: strongest first (R3).
    assert resolve_card("1", HAND) == "3o"
    assert resolve_card("2", HAND) == "9c"
    assert resolve_card("9", HAND) == "4b"
    assert resolve_card("Rb", HAND) == "Rb"
    assert resolve_card("rb", HAND) == "Rb"          # forgiving about the rank's case
    assert resolve_card("7c", HAND) == "7c"          # not held: the server says so
    for bad in ("zz", "10", "0", "3x", "", "3o3o", "\x1b[2J"):
        with pytest.raises(InputError):
            resolve_card(bad, HAND)


def test_create_options() -> None:
    options, private, name = parse_create(
        ["deals=3", "chanter=on", "draw", "dealer=2", "signals=risky", "risk=0.5",
         "delay=0", "timer=30", "grace=10", "level=expert", "private", "name=Friday",
         "target=5", "mordienne=off", "autostart"])
    assert options == {"deals": 3, "chanter": True, "partner_draw": True, "first_dealer": 2,
                       "signals": "risky", "signal_risk": 0.5, "bot_delay_ms": 0,
                       "turn_timer_s": 30, "grace_s": 10, "bot_level": "expert",
                       "target_points": 5, "mordienne": False, "auto_start": True}
    assert private and name == "Friday"
    for bad in (["deals=0"], ["deals=x"], ["signals=loud"], ["risk=2"], ["dealer=5"],
                ["colour=red"], ["deals"], ["chanter=maybe"], ["level=god"]):
        with pytest.raises(InputError):
            parse_create(bad)


def test_signals_vocabulary() -> None:
    assert parse_signal(["monsieur"]) == ("monsieur", None)
    assert parse_signal(["aces", "2"]) == ("aces", 2)
    assert parse_signal(["deux-de-chene"]) == ("deux_de_chene", None)
    assert parse_signal(["useless"]) == ("useless_hand", None)
    for bad in ([], ["aces"], ["aces", "5"], ["monsieur", "1"], ["grimace"]):
        with pytest.raises(InputError):
            parse_signal(bad)


def test_discards() -> None:
    hand = [*HAND, "6o", "6c", "6b", "6e", "7o", "7b"]
    assert parse_discard(["10", "11", "12", "13", "14", "15"], hand) == \
        ["6o", "6c", "6b", "6e", "5o", "4b"]
    with pytest.raises(InputError):
        parse_discard(["1", "2", "3"], hand)
    with pytest.raises(InputError):
        parse_discard(["1", "1", "2", "3", "4", "5"], hand)


def test_every_error_code_has_a_sentence() -> None:
    for code in ErrorCode:
        if code.value in ("bad_frame", "frame_too_large", "unsupported_version",
                          "hello_required"):
            continue   # connection-level: the client never shows them for a command
        assert code.value in ERROR_SENTENCES, code
    assert "You do not hold 3o (Monsieur)" in error_text("card_not_in_hand", "", "3o").plain
    assert "refused" in error_text("from_the_future", "\x1b[2Jhi").plain
    assert "\x1b" not in error_text("from_the_future", "\x1b[2Jhi").plain


def test_safe_text_is_inert() -> None:
    t = safe("[bold]\x1b[31mEVIL\x1b]0;pwn\x07\u202e")
    assert t.plain == "[bold][31mEVIL]0;pwn"
    assert not t.spans                                   # no markup was interpreted
    assert card_text("3o").plain == "3o ◆ Monsieur"


def test_a_one_card_hand_is_said_in_the_singular() -> None:
    with pytest.raises(InputError, match=r"your hand has 1 card \(only 1\)\."):
        resolve_card("2", ["3o"])
    with pytest.raises(InputError, match=r"your hand has 2 cards \(1 to 2\)\."):
        resolve_card("3", ["3o", "4b"])


def test_replay_takes_this_table_a_match_another_table_or_a_replay_link() -> None:
    """Issue 28, Build 1: the terminal opens what the browser shares (a private table's
    replay link carries its join code)."""
    from client_cli.commands import parse_replay_args

    assert parse_replay_args([]) == (None, None, None)
    assert parse_replay_args(["2"]) == (None, 2, None)
    assert parse_replay_args(["http://h:8765/r/t-7f3a/2#code=K7Q2"]) == ("t-7f3a", 2, "K7Q2")
    assert parse_replay_args(["https://h/r/t-7f3a"]) == ("t-7f3a", None, None)
    assert parse_replay_args(["t-7f3a", "3", "K7Q2"]) == ("t-7f3a", 3, "K7Q2")
    assert parse_replay_args(["t-7f3a", "K7Q2"]) == ("t-7f3a", None, "K7Q2")
    assert parse_replay_args(["http://h/t/t-7f3a#code=K7Q2"]) == ("t-7f3a", None, "K7Q2")
    with pytest.raises(InputError):
        parse_replay_args(["t-7f3a", "1", "K7Q2", "extra"])
