"""Provably fair deals (R8a): the seed's derivation, and verification of revealed records.

A record of a fairly dealt match carries its seed material (``fair``); ``verify`` accepts
it only if the secret and salt match the commitment and every deal follows from the seed
(R6, R7, R8, R9's exchange, R16's noticing). Records without seed material replay, but
only as "unproven". docs/verify/'s standalone verifiers are held to the same cases in
test_fair_v2.py.
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

from client_cli.record_cli import main
from server.game import ChanterVote, Match, Options, Signal, fair
from server.game.record import RecordError, export_record, verify_record

from .builders import build_deal, build_record

hexes = st.text("0123456789abcdef", min_size=1, max_size=64)
contribution_lists = st.lists(st.none() | hexes, min_size=4, max_size=4)
secrets_ = st.text("0123456789abcdef", min_size=64, max_size=64)
salts = st.text("0123456789abcdef", min_size=32, max_size=32)


def fair_record(secret: str, salt: str, contributions: list[str | None], *,
                play_seed: int = 1, scheme: int = fair.CURRENT, chanter_yes: bool = False,
                signal_every: int = 0, **options: Any) -> dict[str, Any]:
    """A match dealt from the R8a seed, played at random to its end, with ``fair`` revealed
    as the server writes it. ``chanter_yes``: every seat votes to chanter (R9), so the
    talon is exchanged; ``signal_every``: a random seat signals before every so many
    actions (R15, R16)."""
    seed = fair.derive_seed(secret, salt, contributions, scheme)
    match, _ = Match.new(Options(**options), seed, scheme)
    rng = random.Random(play_seed)
    steps = 0
    while not match.over:
        assert match.to_act is not None
        steps += 1
        if signal_every and steps % signal_every == 0:
            match.apply(Signal(rng.randrange(4), "useless_hand"))
        legal = match.legal_actions(match.to_act)
        if chanter_yes and isinstance(legal[0], ChanterVote):
            match.apply(ChanterVote(match.to_act, True))
        else:
            match.apply(rng.choice(legal))
    record = json.loads(json.dumps(export_record(match)))
    record["fair"] = fair.reveal(secret, salt, contributions, scheme)
    return record


# ---------------------------------------------------------------- the derivation


@pytest.mark.parametrize("scheme", [1, 2])
def test_r8a_the_derivation_is_the_documented_one(scheme: int) -> None:
    """Pinned values: the formulas of docs/RULES.md R8a (scheme 2, and 1 for old records),
    so a change to them fails here."""
    secret, salt = "ab" * 32, "cd" * 16
    sha = lambda text: __import__("hashlib").sha256(text.encode()).hexdigest()  # noqa: E731
    assert fair.commitment(secret, salt, scheme) == \
        sha(f"aluette-commit/{scheme}:{secret}:{salt}")
    assert fair.derive_seed(secret, salt, ["01", None, "ff", None], scheme) == \
        sha(f"aluette-seed/{scheme}:{secret}:{salt}:01,,ff,")
    assert fair.reveal(secret, salt, [None] * 4, scheme)["scheme"] == f"aluette-fair/{scheme}"


def test_r8a_the_scheme_is_bound_by_the_commitment() -> None:
    """The server cannot choose the derivation after seeing the contributions: the two
    schemes commit to different hashes of the same secret."""
    secret, salt = "ab" * 32, "cd" * 16
    assert fair.commitment(secret, salt, 1) != fair.commitment(secret, salt, 2)
    record = fair_record(secret, salt, [None, "01", None, None], deals=1)
    forged = copy.deepcopy(record)
    forged["fair"]["scheme"] = "aluette-fair/1"
    with pytest.raises(RecordError, match="do not match the commitment"):
        verify_record(forged)


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
    a, b = 0, 2

    def swapped(card_a: str, card_b: str) -> dict[str, Any]:
        forged = copy.deepcopy(record)
        deal = forged["deals"][0]
        swap = {card_a: card_b, card_b: card_a}
        deal["hands"] = [[swap.get(c, c) for c in h] for h in deal["hands"]]
        deal["tricks"] = [[swap.get(c, c) for c in t] for t in deal["tricks"]]
        return forged

    def legal(forged: dict[str, Any]) -> bool:
        try:
            verify_record({k: v for k, v in forged.items() if k != "fair"})
        except RecordError:
            return False
        return True

    hands = record["deals"][0]["hands"]
    forged = next(f for f in (swapped(x, y) for x in hands[a] for y in hands[b]) if legal(f))
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
    assert (f"deals proven fair: they follow from the revealed seed, which matches "
            f"commitment {committed}; 2 of 4 seats contributed to the seed (R8a)") in out
    # Without a fair-deal block a record replays, but is not proven: a failure unless asked.
    assert main(["verify", str(old)]) == 1
    captured = capsys.readouterr()
    assert "deals unproven: the record carries no fair-deal block" in captured.out
    assert captured.err.splitlines() == [
        f"{old}: unproven: the record has no fair-deal block, so nothing shows its deals "
        f"were not chosen (R8a); --allow-unproven accepts it"]
    assert main(["verify", "--allow-unproven", str(old)]) == 0
    assert "deals unproven" in capsys.readouterr().out
    assert main(["verify", str(good), str(forged)]) == 1
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        f"{forged}: the revealed secret and salt do not match the commitment "
        f"{committed} (R8a)"]
    assert main(["verify", "--commitment", "0" * 64, str(good)]) == 1
    assert "is not the one given" in capsys.readouterr().err
    assert main(["verify", "--json", str(good)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["fair"] == "proven" and summary["contributors"] == 2
    assert main(["show", str(good)]) == 0
    assert "Deals proven fair" in capsys.readouterr().out


def test_cli_verify_refuses_a_prefix_of_the_commitment_and_says_how_they_differ(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 31, item 6: a client once showed 16 digits, and the refusal then printed two
    strings that looked the same. Now the count and the full value are both in it."""
    record = fair_record("a" * 64, "b" * 32, ["0123", None, None, "ff"], deals=1)
    committed = record["fair"]["commitment"]
    path = tmp_path / "m.json"
    path.write_text(json.dumps(record))
    assert main(["verify", "--commitment", committed[:16], str(path)]) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line == (f"{path}: you gave 16 hex digits; the commitment has 64: {committed}; "
                    f"they are its first digits. Give all 64 digits, as the client shows "
                    f"them (R8a)")
    wrong = committed[:20] + ("0" if committed[20] != "0" else "1") + committed[21:]
    assert main(["verify", "--commitment", wrong, str(path)]) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert "they differ from digit 21 on" in line
    assert f"the record's {committed[:20]}[{committed[20:]}], given {wrong[:20]}[" in line
    assert main(["verify", "--commitment", "xyz", str(path)]) == 1
    assert "not hex digits ('x' is not one" in capsys.readouterr().err
    assert main(["verify", "--commitment", committed.upper(), str(path)]) == 0


def test_cli_verify_flags_a_seed_no_player_contributed_to(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 33, finding 5: with no contribution the server alone chose the deals; the
    record still proves they follow from the commitment, and says nobody checked it."""
    record = fair_record("a" * 64, "b" * 32, [None] * 4, deals=1)
    path = tmp_path / "m.json"
    path.write_text(json.dumps(record))
    assert main(["verify", str(path)]) == 0
    out = capsys.readouterr().out
    assert ("no player contributed to the seed: the server alone chose it, so the deals "
            "are not checked by any player (R8a)") in out


def test_r8a_the_record_says_how_many_players_contributed() -> None:
    """Issue 33, finding 5: the record itself says it, and a wrong count is refused."""
    record = fair_record("a" * 64, "b" * 32, ["01", None, None, "ff"], deals=1)
    assert record["fair"]["contributors"] == 2
    assert fair_record("a" * 64, "b" * 32, [None] * 4, deals=1)["fair"]["contributors"] == 0
    record["fair"]["contributors"] = 3
    with pytest.raises(RecordError, match=r"fair\.contributors says 3, but 2 seats"):
        verify_record(record)


def test_r7_the_record_carries_the_partner_draw_and_r8a_checks_it() -> None:
    """R17/R7 (the independent verifier's finding F4): with `partner_draw` the record says
    which cards were turned to which seat and where each seat moved, so the re-seating is
    checked against the seed and the contributions (seats before the draw) can be read."""
    record = fair_record("ab" * 32, "cd" * 16, ["01", None, None, None],
                         partner_draw=True, deals=1)
    drawn = record["partner_draw"]
    assert sorted(drawn["seating"]) == [0, 1, 2, 3]
    assert all(seat in range(4) and isinstance(card, str) for seat, card in drawn["cards"])
    assert verify_record(record)["fair"] == "proven"
    forged = copy.deepcopy(record)
    a, b = forged["partner_draw"]["seating"][:2]
    forged["partner_draw"]["seating"][:2] = [b, a]
    with pytest.raises(RecordError, match=r"partner_draw .*R7"):
        verify_record(forged)
    plain = fair_record("ab" * 32, "cd" * 16, [None] * 4, partner_draw=False, deals=1)
    assert "partner_draw" not in plain
