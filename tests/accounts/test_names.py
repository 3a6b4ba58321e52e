"""Account names (issue 27): one account per name after NFKC and case folding, confusable
names are one name (UTS #39 skeletons), reserved names are refused."""

from __future__ import annotations

import pytest

from server.accounts.names import (
    RESERVED_NAMES,
    NameRefused,
    check_account_name,
    name_key,
    skeleton,
)
from server.table.mutations import BOT_NAMES


@pytest.mark.parametrize(("a", "b"), [
    ("Ana", "ANA"), ("Ana", "ａｎａ"), ("Straße", "STRASSE"), ("Zoé", "Zoe\u0301"),
])
def test_one_key_after_nfkc_and_case_folding(a: str, b: str) -> None:
    assert name_key(a) == name_key(b)


@pytest.mark.parametrize(("a", "b"), [
    ("Ana", "Аna"),          # Cyrillic A
    ("Il1", "lll"),          # capital i, small L, digit one
    ("mary", "rnary"),       # rn looks like m
    ("BOB", "B0B"),          # O and zero
    ("paypal", "раypal"),    # Cyrillic er and a
])
def test_confusable_names_share_a_skeleton(a: str, b: str) -> None:
    assert name_key(a) != name_key(b)
    assert skeleton(a) == skeleton(b)


@pytest.mark.parametrize("name", ["Bob", "Zoé", "Ana-Maria", "山田太郎", "Jo 2", "O'Neil"])
def test_ordinary_names_pass(name: str) -> None:
    checked = check_account_name(name)
    assert checked.display == name


@pytest.mark.parametrize(("name", "reason"), [
    ("a", "length"), ("x" * 33, "length"), ("ana!", "characters"), ("-ana", "characters"),
    ("admin", "reserved"), ("ADMIN", "reserved"), ("Αdmin", "mixed_scripts"),
    ("Guest 1234", "reserved"), ("Invité 12", "reserved"), ("server", "reserved"),
    ("Loïc", "reserved"), ("bot-9", "reserved"), ("раypal", "mixed_scripts"),
])
def test_refused_names_say_why(name: str, reason: str) -> None:
    with pytest.raises(NameRefused) as refused:
        check_account_name(name)
    assert refused.value.reason == reason


def test_the_bots_seat_names_are_reserved() -> None:
    """Nobody registers as the bots' seat names (server/table/mutations.py)."""
    assert set(BOT_NAMES) <= RESERVED_NAMES
    for name in BOT_NAMES:
        with pytest.raises(NameRefused):
            check_account_name(name.upper())


def test_cleaning_comes_first() -> None:
    """Zero-width and bidi characters are gone before the name is judged."""
    assert check_account_name("A\u200bna\u202e").key == "ana"
