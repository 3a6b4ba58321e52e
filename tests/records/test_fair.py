"""Provably fair deals (R8a): the seed's derivation, and verification of revealed records.

A record of a fairly dealt match carries its seed material (``fair``); ``verify`` accepts
it only if the secret and salt match the commitment and every deal follows from the seed
(R6, R7, R8, R9's exchange). Records without seed material still verify, as "unproven".
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.game import Match, Options, fair
from server.game.record import RecordError, export_record, verify_record
from server.game.record_cli import main

from .builders import build_deal, build_record
from .snippet import check_fair

hexes = st.text("0123456789abcdef", min_size=1, max_size=64)
contribution_lists = st.lists(st.none() | hexes, min_size=4, max_size=4)
secrets_ = st.text("0123456789abcdef", min_size=64, max_size=64)
salts = st.text("0123456789abcdef", min_size=32, max_size=32)


def fair_record(secret: str, salt: str, contributions: list[str | None], *,
                play_seed: int = 1, **options: Any) -> dict[str, Any]:
    """A match dealt from the R8a seed, played at random to its end, with ``fair`` revealed
    as the server writes it."""
    seed = fair.derive_seed(secret, salt, contributions)
    match, _ = Match.new(Options(**options), seed)
    rng = random.Random(play_seed)
    while not match.over:
        assert match.to_act is not None
        match.apply(rng.choice(match.legal_actions(match.to_act)))
    record = json.loads(json.dumps(export_record(match)))
    record["fair"] = fair.reveal(secret, salt, contributions)
    return record


# ---------------------------------------------------------------- the derivation


def test_r8a_the_derivation_is_the_documented_one() -> None:
    """Pinned values: the formulas of docs/RULES.md R8a, so a change to them fails here."""
    secret, salt = "ab" * 32, "cd" * 16
    assert fair.commitment(secret, salt) == \
        __import__("hashlib").sha256(f"aluette-commit/1:{secret}:{salt}".encode()).hexdigest()
    assert fair.derive_seed(secret, salt, ["01", None, "ff", None]) == \
        __import__("hashlib").sha256(
            f"aluette-seed/1:{secret}:{salt}:01,,ff,".encode()).hexdigest()


@settings(max_examples=200)
@given(secret=secrets_, salt=salts, contributions=contribution_lists,
       seat=st.integers(0, 3), other=hexes)
def test_r8a_every_contribution_changes_the_seed(secret: str, salt: str,
                                                 contributions: list[str | None], seat: int,
                                                 other: str) -> None:
    """No seat's contribution is ignored, and the seats' order matters."""
    seed = fair.derive_seed(secret, salt, contributions)
    assert seed == fair.derive_seed(secret, salt, list(contributions))   # deterministic
    changed = list(contributions)
    changed[seat] = other if other != contributions[seat] else None
    assert fair.derive_seed(secret, salt, changed) != seed
    assert len(seed) == 64 and set(seed) <= set("0123456789abcdef")


@settings(max_examples=200)
@given(secret=secrets_, salt=salts, contributions=contribution_lists, other=secrets_)
def test_r8a_the_secret_and_the_salt_both_change_seed_and_commitment(
        secret: str, salt: str, contributions: list[str | None], other: str) -> None:
    if other == secret:
        return
    assert fair.commitment(other, salt) != fair.commitment(secret, salt)
    assert fair.commitment(secret, other[:32]) != fair.commitment(secret, salt) \
        or other[:32] == salt
    assert fair.derive_seed(other, salt, contributions) != \
        fair.derive_seed(secret, salt, contributions)


def test_r8a_new_secrets_are_fresh_hex() -> None:
    drawn = {fair.new_secret() for _ in range(50)}
    assert len(drawn) == 50
    for secret, salt in drawn:
        assert len(secret) == 64 and len(salt) == 32
        int(secret, 16), int(salt, 16)


# ---------------------------------------------------------------- verification


@settings(max_examples=25)
@given(secret=secrets_, salt=salts, contributions=contribution_lists,
       play_seed=st.integers(0, 2**16), chanter=st.booleans(), draw=st.booleans(),
       deals=st.integers(1, 3))
def test_r8a_a_fairly_dealt_record_is_proven(secret: str, salt: str,
                                             contributions: list[str | None], play_seed: int,
                                             chanter: bool, draw: bool, deals: int) -> None:
    record = fair_record(secret, salt, contributions, play_seed=play_seed, chanter=chanter,
                         partner_draw=draw, deals=deals)
    assert verify_record(record)["fair"] == "proven"
    committed = fair.commitment(secret, salt)
    assert verify_record(record, committed)["fair"] == "proven"
    assert verify_record(record, committed.upper())["fair"] == "proven"


@settings(max_examples=25)
@given(secret=secrets_, salt=salts, contributions=contribution_lists,
       seat=st.integers(0, 3), other=hexes)
def test_r8a_a_changed_contribution_is_rejected(secret: str, salt: str,
                                                contributions: list[str | None], seat: int,
                                                other: str) -> None:
    """Whether the record keeps the seed it claims or drops it, a contribution that is not
    the one the deals came from is caught (by the seed, or by the hands, R8)."""
    record = fair_record(secret, salt, contributions, deals=1)
    forged = copy.deepcopy(record)
    forged["fair"]["contributions"][seat] = other if other != contributions[seat] else None
    with pytest.raises(RecordError, match="seed"):
        verify_record(forged)
    del forged["fair"]["seed"]
    with pytest.raises(RecordError, match=r"does not follow from the revealed seed|first dealer"):
        verify_record(forged)


@settings(max_examples=25)
@given(secret=secrets_, salt=salts, other=secrets_)
def test_r8a_seed_material_that_does_not_match_the_commitment_is_rejected(
        secret: str, salt: str, other: str) -> None:
    if other == secret:
        return
    record = fair_record(secret, salt, [None] * 4, deals=1)
    forged = copy.deepcopy(record)
    forged["fair"]["secret"] = other
    with pytest.raises(RecordError, match="do not match the commitment"):
        verify_record(forged)


def test_r8_hands_swapped_between_seats_replay_but_are_not_the_deal() -> None:
    """A record whose tricks are legal (R18) but whose hands are not those the seed deals:
    two seats' hands and plays exchanged consistently."""
    record = fair_record("1" * 64, "2" * 32, ["aa", "bb", None, "cc"], deals=1)
    forged = copy.deepcopy(record)
    deal = forged["deals"][0]
    a, b = 0, 2
    card_a, card_b = deal["hands"][a][0], deal["hands"][b][0]
    swap = {card_a: card_b, card_b: card_a}
    deal["hands"] = [[swap.get(c, c) for c in h] for h in deal["hands"]]
    deal["tricks"] = [[swap.get(c, c) for c in t] for t in deal["tricks"]]
    verify_record({k: v for k, v in forged.items() if k != "fair"})      # legal under R18
    with pytest.raises(RecordError, match="not dealt to this seat") as err:
        verify_record(forged)
    assert err.value.deal == 1 and err.value.seat in (a, b)


def test_r6_a_first_dealer_the_seed_did_not_choose_is_rejected() -> None:
    record = fair_record("3" * 64, "4" * 32, [None, "01", None, None], deals=2)
    forged = copy.deepcopy(record)
    for deal in forged["deals"]:      # the whole table one seat on: legal, but not R6
        deal["dealer"] = (deal["dealer"] + 1) % 4
        deal["hands"] = [deal["hands"][(s - 1) % 4] for s in range(4)]
    verify_record({k: v for k, v in forged.items() if k != "fair"})      # legal under R18
    with pytest.raises(RecordError, match="first dealer"):
        verify_record(forged)


def test_r8a_records_without_seed_material_verify_as_unproven() -> None:
    record = build_record([build_deal(3, [0] * 9)])
    assert verify_record(record)["fair"] == "unproven"
    with pytest.raises(RecordError, match="no seed material"):
        verify_record(record, "0" * 64)


def test_r8a_a_commitment_other_than_the_one_shown_is_rejected() -> None:
    record = fair_record("5" * 64, "6" * 32, [None] * 4, deals=1)
    with pytest.raises(RecordError, match="not the one given"):
        verify_record(record, fair.commitment("7" * 64, "6" * 32))


@pytest.mark.parametrize(("change", "message"), [
    (lambda f: f.update(scheme="aluette-fair/0"), "scheme"),
    (lambda f: f.update(secret="XY" * 32), "secret must be 64"),
    (lambda f: f.update(salt="ab"), "salt must be 32"),
    (lambda f: f.update(contributions=["ab"] * 3), "four seats"),
    (lambda f: f.update(contributions=["AB", None, None, None]), "lowercase hex"),
    (lambda f: f.pop("commitment"), "commitment must be 64"),
])
def test_r8a_malformed_seed_material_is_rejected(change: Any, message: str) -> None:
    record = fair_record("8" * 64, "9" * 32, [None] * 4, deals=1)
    change(record["fair"])
    with pytest.raises(RecordError, match=message):
        verify_record(record)


# ---------------------------------------------------------------- the command


def test_cli_verify_says_proven_or_unproven_and_rejects_a_forgery_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = fair_record("a" * 64, "b" * 32, ["0123", None, None, "ff"], deals=2)
    committed = record["fair"]["commitment"]
    good, old, forged = tmp_path / "good.json", tmp_path / "old.json", tmp_path / "bad.json"
    good.write_text(json.dumps(record))
    old.write_text(json.dumps(build_record([build_deal(3, [0] * 9)])))
    bad = copy.deepcopy(record)
    bad["fair"]["salt"] = "c" * 32
    forged.write_text(json.dumps(bad))
    assert main(["verify", "--commitment", committed, str(good)]) == 0
    out = capsys.readouterr().out
    assert f"deals proven fair: they follow from the revealed seed, which matches " \
           f"commitment {committed[:16]}… (R8a)" in out
    assert main(["verify", str(old)]) == 0
    assert "deals unproven: the record carries no seed material" in capsys.readouterr().out
    assert main(["verify", str(good), str(forged)]) == 1
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        f"{forged}: the revealed secret and salt do not match the commitment "
        f"{committed[:16]}… (R8a)"]
    assert main(["verify", "--commitment", "0" * 64, str(good)]) == 1
    assert "is not the one given" in capsys.readouterr().err
    assert main(["verify", "--json", str(good)]) == 0
    assert json.loads(capsys.readouterr().out)["fair"] == "proven"
    assert main(["show", str(good)]) == 0
    assert "Deals proven fair" in capsys.readouterr().out


# ---------------------------------------------------------------- the documented snippet


@settings(max_examples=15)
@given(secret=secrets_, salt=salts, contributions=contribution_lists,
       play_seed=st.integers(0, 2**16), deals=st.integers(1, 4))
def test_r8a_the_ten_lines_of_the_rule_book_accept_a_fair_record(
        secret: str, salt: str, contributions: list[str | None], play_seed: int,
        deals: int) -> None:
    check = check_fair()
    record = fair_record(secret, salt, contributions, play_seed=play_seed, deals=deals)
    check(record, fair.commitment(secret, salt))


def test_r8a_the_ten_lines_of_the_rule_book_reject_what_verify_rejects() -> None:
    check = check_fair()
    record = fair_record("d" * 64, "e" * 32, ["01", "02", None, "03"], deals=2)
    committed = record["fair"]["commitment"]
    with pytest.raises(AssertionError, match="commitment"):
        check(record, fair.commitment("f" * 64, "e" * 32))
    forged = copy.deepcopy(record)
    forged["fair"]["contributions"][2] = "04"
    with pytest.raises(AssertionError, match="deal 1, seat"):
        check(forged, committed)
    swapped = copy.deepcopy(record)
    deal = swapped["deals"][1]
    deal["hands"][0][0], deal["hands"][2][0] = deal["hands"][2][0], deal["hands"][0][0]
    with pytest.raises(AssertionError, match="deal 2, seat 0"):
        check(swapped, committed)
