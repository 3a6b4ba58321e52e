"""R1-R3: the 48-card pack, its two-character notation and the fixed strength table."""

from __future__ import annotations

import pytest

from server.game import (
    ALL_CARDS,
    MAJEURES,
    STRENGTH,
    Card,
    UnknownCardCode,
    card_name,
    parse_card,
    sort_by_strength,
)

RANKS = "123456789VCR"
SUITS = "ocbe"
EXPECTED_CODES = {r + s for r in RANKS for s in SUITS}


def test_r1_pack_has_48_distinct_cards_no_tens() -> None:
    assert len(ALL_CARDS) == 48
    assert set(ALL_CARDS) == EXPECTED_CODES
    assert all(len(c) == 2 for c in ALL_CARDS)
    assert {c[0] for c in ALL_CARDS} == set(RANKS) and {c[1] for c in ALL_CARDS} == set(SUITS)


@pytest.mark.parametrize("code", sorted(EXPECTED_CODES))
def test_r2_parse_accepts_every_code(code: str) -> None:
    assert parse_card(code) == code
    card = Card.parse(code)
    assert str(card) == code
    assert card.rank == code[0] and card.suit == code[1]
    assert card == Card(code) and hash(card) == hash(Card(code))
    assert repr(card) == f"Card({code!r})"


@pytest.mark.parametrize(
    "text",
    [
        "", "3", "3O", "3C", "v o", "vo", "Vo ", " Vo", "rb", "RB", "10o", "11c", "12b",
        "0o", "3x", "Xo", "3oo", "o3", "Valet", "ro", "cE", "1E", None, 3, 3.0, b"3o",
        ["3o"], ("3", "o"),
    ],
)
def test_r2_parse_rejects_anything_else(text: object) -> None:
    with pytest.raises(UnknownCardCode) as err:
        parse_card(text)
    assert "not a card code" in str(err.value)
    with pytest.raises(UnknownCardCode):
        Card(text)  # type: ignore[arg-type]


def test_r2_parse_is_case_sensitive_for_every_code() -> None:
    for code in EXPECTED_CODES:
        for variant in {code.upper(), code.lower(), code.swapcase()} - {code}:
            if variant in EXPECTED_CODES:
                # e.g. "Cc" swapped is "cC": never a code; "Vc" lower "vc": never a code.
                continue
            with pytest.raises(UnknownCardCode):
                parse_card(variant)


def test_r2_unknown_card_code_is_a_value_error() -> None:
    assert issubclass(UnknownCardCode, ValueError)


R3_TABLE = {
    19: ["3o"], 18: ["3c"], 17: ["2o"], 16: ["2c"], 15: ["9c"], 14: ["9o"], 13: ["2b"],
    12: ["2e"], 11: ["1o", "1c", "1b", "1e"], 10: ["Ro", "Rc", "Rb", "Re"],
    9: ["Co", "Cc", "Cb", "Ce"], 8: ["Vo", "Vc", "Vb", "Ve"], 7: ["9b", "9e"],
    6: ["8o", "8c", "8b", "8e"], 5: ["7o", "7c", "7b", "7e"], 4: ["6o", "6c", "6b", "6e"],
    3: ["5o", "5c", "5b", "5e"], 2: ["4o", "4c", "4b", "4e"], 1: ["3b", "3e"],
}


def test_r3_strength_table_exact() -> None:
    expected = {c: s for s, cards in R3_TABLE.items() for c in cards}
    assert len(expected) == 48
    assert expected == STRENGTH
    for code in ALL_CARDS:
        assert Card(code).strength == expected[code]


def test_r3_cartes_majeures_are_unique_strengths_12_to_19() -> None:
    assert set(MAJEURES) == {"3o", "3c", "2o", "2c", "9c", "9o", "2b", "2e"}
    strengths = sorted(STRENGTH[c] for c in MAJEURES)
    assert strengths == list(range(12, 20))
    for code in MAJEURES:
        assert sum(1 for c in ALL_CARDS if STRENGTH[c] == STRENGTH[code]) == 1


def test_r3_suit_only_matters_through_table() -> None:
    # Same rank, different suit: equal unless one of them is a carte majeure.
    assert STRENGTH["1o"] == STRENGTH["1e"]
    assert STRENGTH["3o"] > STRENGTH["3c"] > STRENGTH["3b"] == STRENGTH["3e"]
    assert STRENGTH["9c"] > STRENGTH["9o"] > STRENGTH["9b"] == STRENGTH["9e"]
    assert STRENGTH["2e"] > STRENGTH["1o"] > STRENGTH["Ro"] > STRENGTH["Co"] > STRENGTH["Vo"]
    assert STRENGTH["Vo"] > STRENGTH["9b"] > STRENGTH["8o"] > STRENGTH["4o"] > STRENGTH["3b"]


@pytest.mark.parametrize(
    ("code", "name"),
    [
        ("3o", "Monsieur"), ("3c", "Madame"), ("2o", "Le Borgne"), ("2c", "La Vache"),
        ("9c", "Grand-neuf"), ("9o", "Petit-neuf"), ("2b", "Deux de chêne"),
        ("2e", "Deux d'écrit"), ("1e", "Ace of swords"), ("Rb", "Roi of batons"),
        ("Cc", "Cavalière of cups"), ("Vo", "Valet of coins"), ("3b", "Three of batons"),
        ("9e", "Nine of swords"), ("4o", "Four of coins"),
    ],
)
def test_r3_names(code: str, name: str) -> None:
    assert card_name(code) == name
    assert Card.parse(code).name == name


def test_r3_sort_by_strength_is_strongest_first_and_stable() -> None:
    cards = ["4o", "3o", "1e", "1o", "3b", "9c"]
    assert sort_by_strength(cards) == ["3o", "9c", "1o", "1e", "4o", "3b"]
    assert sort_by_strength(list(reversed(cards))) == sort_by_strength(cards)
    full = sort_by_strength(list(ALL_CARDS))
    assert [STRENGTH[c] for c in full] == sorted(STRENGTH.values(), reverse=True)
