"""Match records: export and verification by replay (R17, R18) and the scoring they derive."""

from __future__ import annotations

import copy
import json
import random
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from client_cli.record_cli import main
from server.game import ChanterVote, Match, Options, Signal
from server.game.record import RecordError, export_record, verify_record

from .builders import build_deal, build_record

S = None  # a spoiled trick


def verify_one(winners: list[int | None], dealer: int = 3, **options: object) -> dict:
    return verify_record(build_record([build_deal(dealer, winners)], **options))["deals"][0]


def test_builder_produces_the_requested_winners():
    winners = [1, S, 2, 2, 0, S, 3, 3, 3]
    deal = verify_one(winners)
    assert [t["winner"] for t in deal["tricks"]] == winners


def test_r10_r11_leaders_follow_winners_and_spoiled_tricks():
    deal = verify_one([1, S, 2, S, 0, 0, 3, S, 1], dealer=3)
    leaders = [t["leader"] for t in deal["tricks"]]
    # R10: left of dealer 3 leads; R11: the winner leads, a spoiled trick keeps its leader.
    assert leaders == [0, 1, 1, 2, 2, 0, 0, 3, 3]


def test_r12_all_nine_spoiled_nobody_scores():
    deal = verify_one([S] * 9)
    assert deal["winner"] is None and deal["points"] == [0, 0]
    assert deal["trick_counts"] == [0, 0, 0, 0] and deal["mordienne"] is False


def test_r12_tie_for_most_tricks_goes_to_who_reached_it_first():
    # Seats 1 and 2 both win 3; seat 2 reaches its third at trick 6, seat 1 at trick 9.
    deal = verify_one([1, 2, 2, 1, 0, 2, 3, 0, 1])
    assert deal["trick_counts"] == [2, 3, 3, 1]
    assert deal["winner"] == 2 and deal["points"] == [1, 0]


def test_r5_r12_partners_are_not_pooled():
    # Seats 0 and 2 win 5 tricks between them, but seat 1 alone has the most (4).
    deal = verify_one([1, 0, 0, 0, 2, 2, 1, 1, 1])
    assert deal["trick_counts"] == [3, 4, 2, 0]
    assert deal["winner"] == 1 and deal["points"] == [0, 1]


def test_r13_last_run_is_mordienne_for_two_points():
    deal = verify_one([0, S, 2, S, 1, 3, 3, 3, 3])
    assert deal["winner"] == 3 and deal["mordienne"] is True and deal["points"] == [0, 2]


def test_r13_last_two_tricks_are_enough():
    deal = verify_one([S, S, S, S, S, S, S, 1, 1])
    assert deal["winner"] == 1 and deal["mordienne"] is True and deal["points"] == [0, 2]


def test_r13_broken_by_an_earlier_trick_won():
    deal = verify_one([S, 2, 0, 1, S, 2, 2, 2, 2])
    assert deal["winner"] == 2 and deal["mordienne"] is False and deal["points"] == [1, 0]


def test_r13_broken_by_a_spoiled_trick_inside_the_run():
    deal = verify_one([0, 1, S, 3, S, 2, 2, S, 2])
    assert deal["winner"] == 2 and deal["mordienne"] is False and deal["points"] == [1, 0]


def test_r13_broken_by_a_spoiled_last_trick():
    deal = verify_one([S, S, S, S, 0, 1, 3, 3, S])
    assert deal["winner"] == 3 and deal["mordienne"] is False and deal["points"] == [0, 1]


def test_r13_a_single_last_trick_is_not_mordienne():
    deal = verify_one([S, S, S, S, S, S, S, S, 0])
    assert deal["winner"] == 0 and deal["mordienne"] is False and deal["points"] == [1, 0]


def test_r13_off_scores_one_point():
    deal = verify_one([S, S, S, S, S, 1, 1, 1, 1], mordienne=False)
    assert deal["mordienne"] is False and deal["points"] == [0, 1]


def test_r13a_a_clean_sweep_is_mordienne():
    deal = verify_one([0] * 9, dealer=3)
    assert deal["trick_counts"] == [9, 0, 0, 0]
    assert deal["mordienne"] is True and deal["points"] == [2, 0]


def test_r14_match_totals_and_result():
    deals = [build_deal(3, [0] * 9), build_deal(0, [1, S, S, S, S, S, S, S, S]),
             build_deal(1, [S] * 9)]
    summary = verify_record(build_record(deals))
    assert summary["points"] == [2, 1] and summary["result"] == "team0"


def test_r14_equal_totals_are_a_draw():
    deals = [build_deal(3, [0, S, S, S, S, S, S, S, S]),
             build_deal(0, [1, S, S, S, S, S, S, S, S])]
    assert verify_record(build_record(deals))["result"] == "draw"


def test_r6_dealer_must_pass_left():
    deals = [build_deal(3, [S] * 9), build_deal(2, [S] * 9)]
    with pytest.raises(RecordError, match=r"deal 2: dealer 2 should be 0"):
        verify_record(build_record(deals))


def test_r14a_target_points_ends_the_match():
    deals = [build_deal(0, [1] + [S] * 8), build_deal(1, [3] + [S] * 8)]
    summary = verify_record(build_record(deals, target_points=2))
    assert summary["points"] == [0, 2] and summary["result"] == "team1"
    deals.append(build_deal(2, [S] * 9))
    with pytest.raises(RecordError, match="deal 3: deal after a team reached"):
        verify_record(build_record(deals, target_points=2))


# ---------------------------------------------------------------- broken records (R18)

def _broken(mutate) -> dict:
    record = build_record([build_deal(3, [1, S, 2, 2, 0, S, 3, 3, 3])])
    mutate(record["deals"][0])
    return record


def test_r18_card_not_in_that_seats_hand():
    def swap(deal):
        # Trick 2 (leader 1): seat 1 plays a card that is in seat 2's hand.
        deal["tricks"][1][0], deal["tricks"][1][1] = deal["tricks"][1][1], deal["tricks"][1][0]
    card = _broken(lambda d: None)["deals"][0]["tricks"][1][1]
    with pytest.raises(RecordError) as err:
        verify_record(_broken(swap))
    assert str(err.value) == f"deal 1, trick 2, seat 1, card {card}: card not in that seat's hand"


def test_r18_card_played_twice():
    def twice(deal):
        deal["tricks"][4][0] = deal["tricks"][0][1]
    with pytest.raises(RecordError, match=r"deal 1, trick 5, seat 2, card \w\w: card played twice"):
        verify_record(_broken(twice))


def test_r18_unknown_code():
    def unknown(deal):
        deal["tricks"][2][3] = "3x"
    with pytest.raises(RecordError, match=r"deal 1, trick 3, seat 0, card 3x: unknown card"):
        verify_record(_broken(unknown))


def test_r18_wrong_number_of_cards_in_a_trick_and_a_hand():
    with pytest.raises(
        RecordError, match=r"deal 1, trick 4: a trick has four cards, this one has 3"
    ):
        verify_record(_broken(lambda d: d["tricks"][3].pop()))
    with pytest.raises(RecordError, match=r"deal 1, seat 2: hand has 8 cards, expected 9"):
        verify_record(_broken(lambda d: d["hands"][2].pop()))


def test_r18_wrong_number_of_tricks():
    with pytest.raises(RecordError, match=r"deal 1: deal has 8 tricks, expected 9"):
        verify_record(_broken(lambda d: d["tricks"].pop()))


def test_r18_wrong_number_of_deals():
    record = _broken(lambda d: None)
    record["options"]["deals"] = 2
    with pytest.raises(RecordError, match="not over after 1 deals"):
        verify_record(record)


# ---------------------------------------------------------------- export and replay

def _random_match(seed: int, **options: object) -> Match:
    match, _ = Match.new(Options(**options), seed)
    rng = random.Random(seed)
    while not match.over:
        match.apply(rng.choice(match.legal_actions(match.to_act)))
    return match


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32), deals=st.integers(1, 6), chanter=st.booleans(),
       mordienne=st.booleans())
def test_r17_r18_replaying_an_exported_record_reproduces_the_match(seed, deals, chanter,
                                                                    mordienne):
    match = _random_match(seed, deals=deals, chanter=chanter, mordienne=mordienne)
    record = json.loads(json.dumps(export_record(match)))
    summary = verify_record(record)
    assert summary["points"] == match.points
    assert summary["result"] == match.result
    for stored, derived in zip(match.deals, summary["deals"], strict=True):
        assert derived["trick_counts"] == stored["trick_counts"]
        assert derived["winner"] == stored["winner"]
        assert derived["mordienne"] == stored["mordienne"]


def test_r17_unfinished_match_exports_and_verifies_as_unfinished():
    match, _ = Match.new(Options(deals=3), 5)
    rng = random.Random(5)
    for _ in range(50):          # deal 1 done, deal 2 in its fifth trick
        match.apply(rng.choice(match.legal_actions(match.to_act)))
    record = export_record(match)
    assert record["complete"] is False and "seed" not in record
    summary = verify_record(record)
    assert summary["result"] == "unfinished"
    assert len(summary["deals"]) == 2 and len(summary["deals"][1]["tricks"]) == 3


def test_r17_readers_ignore_unknown_fields():
    record = build_record([build_deal(3, [S] * 8 + [0])])
    record["venue"] = "Pornic"
    record["deals"][0]["comment"] = "windy"
    assert verify_record(record)["points"] == [1, 0]


def test_r17_seed_only_when_asked_signals_and_exchanges_once_the_match_is_over():
    match, _ = Match.new(Options(deals=2, chanter=True, signals="risky", signal_risk=1.0), 9)
    rng = random.Random(9)
    match.apply(Signal(1, "aces", 2))
    while len(match.deals) < 1:
        legal = match.legal_actions(match.to_act)
        match.apply(ChanterVote(match.to_act, True) if isinstance(legal[0], ChanterVote)
                    else rng.choice(legal))
    match.apply(Signal(3, "useless_hand"))
    running = export_record(match)
    assert "seed" not in running
    assert all("signals" not in d and "chanter" not in d for d in running["deals"])
    while not match.over:
        match.apply(rng.choice(match.legal_actions(match.to_act)))
    full = export_record(match, include_seed=True)
    assert full["seed"] == 9
    first, second = full["deals"]
    # R16: both opponents noticed (risk 1.0); "at": no card played yet.
    assert first["signals"] == [{"from_seat": 1, "signal": "aces", "n": 2, "to": [0, 2, 3],
                                 "at": 0}]
    assert second["signals"] == [{"from_seat": 3, "signal": "useless_hand", "n": None,
                                  "to": [0, 1, 2], "at": 0}]
    # R9: all four said yes in deal 1, so its two takers discarded six cards each.
    block = first["chanter"]
    assert block["votes"] == [True] * 4 and block["exchange"] is True
    dealer = first["dealer"]
    assert [len(d) for d in block["discards"]] == [
        6 if s in (dealer, (dealer + 1) % 4) else 0 for s in range(4)]
    assert not {c for d in block["discards"] for c in d} & {c for h in first["hands"] for c in h}
    assert second["chanter"]["exchange"] is (second["chanter"]["votes"] == [True] * 4)
    summary = verify_record(json.loads(json.dumps(full)))
    assert summary["deals"][0]["exchange"] is True


@pytest.mark.parametrize(("change", "message"), [
    (lambda b, d: b.update(votes=[True, True, None, True]), "until the first refusal"),
    (lambda b, d: b.update(votes=[None] * 4), "until the first refusal"),
    (lambda b, d: b.update(exchange=False), "exactly when all four voted yes"),
    (lambda b, d: b["discards"][(d + 2) % 4].append("3o"), "six cards for each"),
    (lambda b, d: b["discards"][d].__setitem__(0, "Zz"), "unknown card code"),
    (lambda b, d: b.update(votes="yes"), "four seats' votes"),
])
def test_r9_r18_a_chanter_block_that_breaks_the_rule_is_refused(change, message):
    match, _ = Match.new(Options(deals=1, chanter=True), 4)
    rng = random.Random(4)
    while not match.over:
        legal = match.legal_actions(match.to_act)
        match.apply(ChanterVote(match.to_act, True) if isinstance(legal[0], ChanterVote)
                    else rng.choice(legal))
    record = json.loads(json.dumps(export_record(match)))
    verify_record(record)
    deal = record["deals"][0]
    change(deal["chanter"], deal["dealer"])
    with pytest.raises(RecordError, match=message):
        verify_record(record)


def test_r16_r18_signals_that_break_the_rule_are_refused():
    match, _ = Match.new(Options(deals=1, signals="private"), 4)
    rng = random.Random(4)
    match.apply(Signal(0, "monsieur"))
    while not match.over:
        match.apply(rng.choice(match.legal_actions(match.to_act)))
    record = json.loads(json.dumps(export_record(match)))
    verify_record(record)
    for change, message in [
            (lambda s: s.update(to=[1, 2]), "opponents only with risky signals"),
            (lambda s: s.update(signal="wink"), "not a signal of R15"),
            (lambda s: s.update(signal="aces"), "not a signal of R15"),
            (lambda s: s.update(at=99), "counts the turn actions taken"),
            (lambda s: s.update(from_seat=7), "from_seat"),
    ]:
        forged = copy.deepcopy(record)
        change(forged["deals"][0]["signals"][0])
        with pytest.raises(RecordError, match=message):
            verify_record(forged)
    off = copy.deepcopy(record)
    off["options"]["signals"] = "off"
    with pytest.raises(RecordError, match="without signals"):
        verify_record(off)


# ---------------------------------------------------------------- the command

def test_cli_verify_json_one_line_per_file(tmp_path, capsys):
    a = tmp_path / "a.json"
    b = tmp_path / "b.json"
    a.write_text(json.dumps(build_record([build_deal(3, [0] * 9)])))
    b.write_text(json.dumps(build_record([build_deal(1, [S] * 9)])))
    assert main(["verify", "--json", "--allow-unproven", str(a), str(b)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(x)["points"] for x in lines] == [[2, 0], [0, 0]]
    first = json.loads(lines[0])
    assert first["result"] == "team0"
    assert first["deals"][0]["tricks"][0] == {"leader": 0, "winner": 0}
    assert set(first["deals"][0]) >= {"dealer", "tricks", "trick_counts", "winner", "points",
                                      "mordienne"}


def test_cli_bad_records_one_line_on_stderr_and_nonzero(tmp_path):
    good = build_record([build_deal(3, [0] * 9)])
    bad = copy.deepcopy(good)
    bad["deals"][0]["tricks"][3][2] = bad["deals"][0]["tricks"][2][2]
    files = {"bad.json": json.dumps(bad), "trunc.json": json.dumps(good)[:-20],
             "good.json": json.dumps(good)}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    run = subprocess.run(
        [sys.executable, "-m", "client_cli.record_cli", "verify", "--json", "--allow-unproven",
         *(str(tmp_path / n) for n in files)],
        capture_output=True, text=True, check=False,
    )
    assert run.returncode == 1
    errors = run.stderr.splitlines()
    assert len(errors) == 2 and "Traceback" not in run.stderr
    assert errors[0].startswith(f"{tmp_path / 'bad.json'}: deal 1, trick 4, seat 2, card ")
    assert "card played twice" in errors[0]
    assert errors[1].startswith(f"{tmp_path / 'trunc.json'}: malformed JSON")
    assert len(run.stdout.splitlines()) == 1


def test_cli_show_names_cards_spoiled_tricks_and_mordienne(tmp_path, capsys):
    path = tmp_path / "m.json"
    path.write_text(json.dumps(build_record([build_deal(3, [S, S, S, S, S, S, S, 2, 2])])))
    assert main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    assert "Monsieur" in out and "spoiled" in out and "MORDIENNE" in out
    assert "seat 2 (Cy) wins the deal with 2 tricks" in out
    assert "team 0 wins" in out
