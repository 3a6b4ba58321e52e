"""The independent fair-deal verifier (conformance/independent/verify_fair.py) against the
spec's own test vectors (R8a), against records of real matches played on a real server
(R8a, R17), and against tampered records (R18: a deal that does not follow from its seed
is rejected).

The verifier was written from docs/RULES.md alone, without reading the project's code or
its two verifiers; where the text was not enough, its guesses and what settled them are
in conformance/independent/FINDINGS.md. The matches are played through the public
protocol (tests/server's network players), only to obtain real records.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import re
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from conformance.independent import verify_fair as vf
from server.app import running
from tests.server.conftest import server_settings
from tests.server.netclient import NetClient, ServerError
from tests.server.players import autoplay

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "conformance" / "independent" / "verify_fair.py"


def rules_vector() -> dict[str, Any]:
    """The JSON test vectors printed in docs/RULES.md R8a, read from the rule book itself."""
    text = (ROOT / "docs" / "RULES.md").read_text(encoding="utf-8")
    found = re.search(r"```json\n(\{\n \"secret\".*?)\n```", text, re.S)
    assert found, "R8a's test vectors are no longer in docs/RULES.md"
    vector: dict[str, Any] = json.loads(found.group(1))
    return vector


VEC = rules_vector()
SEED = VEC["seed"]


# --- (1) the vectors of R8a -----------------------------------------------------------------


def test_r8a_vector_commitment_and_seed() -> None:
    assert vf.commitment_of(VEC["secret"], VEC["salt"]) == VEC["commitment"]
    assert vf.seed_of(VEC["secret"], VEC["salt"], VEC["contributions"]) == SEED


def test_r8a_vector_seed_depends_on_every_contribution_slot() -> None:
    """R8a step 3: cN is seat N's contribution, empty for none; moving one changes the seed."""
    moved = [None, "9f2c41d0", "00ff00ff00ff00ff00ff00ff00ff00ff", "09"]
    assert vf.seed_of(VEC["secret"], VEC["salt"], moved) != SEED


def test_r8a_vector_deal_stream_block_and_words() -> None:
    stream = vf.Stream(SEED, "deal:1")
    assert stream.block(0).hex() == VEC["deal:1 block 0"]
    assert [stream.word() for _ in VEC["deal:1 words"]] == VEC["deal:1 words"]


def test_r8a_vector_deal_1_pack() -> None:
    assert " ".join(vf.deal_pack(SEED, 1)) == VEC["deal:1 pack"]


def test_r8a_vector_first_dealer_r6() -> None:
    assert vf.random_first_dealer(SEED) == VEC["first_dealer"]


@pytest.mark.parametrize("reseat", ["clockwise", "ascending"])
def test_r8a_vector_partner_draw_r7(reseat: str) -> None:
    """Both readings of R7's re-seating give the vector's seating (F3 of
    conformance/independent/FINDINGS.md): the vector cannot tell them apart."""
    draw = vf.partner_draw(SEED, reseat)
    turned = " ".join(f"{seat}:{card}" for seat, card in draw["turned"])
    assert turned == VEC["partner_draw"]["turned"]
    assert draw["seating"] == VEC["partner_draw"]["seating"]
    assert draw["first_dealer"] == VEC["partner_draw"]["first_dealer"]


def test_r7_reseat_readings_differ_when_monsieur_follows_madame() -> None:
    """F3: the two readings part, e.g. when Madame's holder sits just right of Monsieur's."""
    seatings = {}
    for reseat in ("clockwise", "ascending"):
        found = None
        for n in range(200):
            draw = vf.partner_draw(f"{n:064x}", reseat)
            h = draw["holders"]
            if (h["3o"] - h["3c"]) % 4 == 1 and h["3o"] != 0:
                found = (n, draw["seating"])
                break
        seatings[reseat] = found
    assert seatings["clockwise"] is not None and seatings["ascending"] is not None
    assert seatings["clockwise"][0] == seatings["ascending"][0]
    assert seatings["clockwise"][1] != seatings["ascending"][1]


@pytest.mark.parametrize("signal", VEC["signals"], ids=lambda s: s["label"])
def test_r8a_vector_risky_signals_r16(signal: dict[str, Any]) -> None:
    stream = vf.Stream(SEED, signal["label"])
    assert [stream.word(), stream.word()] == signal["words"]
    k = int(signal["label"].split(":")[1])
    assert list(vf.noticed(SEED, k, 0.25)) == signal["noticed_at_0.25"]


# --- (2) real records, played on a real server ----------------------------------------------


@contextlib.asynccontextmanager
async def serve(redis_url: str, key_prefix: str) -> AsyncIterator[str]:
    """A real server on 127.0.0.1 (the test Redis); yields its websocket URL."""
    # Four clients play as fast as their turns come: the command rate limit (a separate
    # concern, tests/server) is lifted so a busy machine cannot turn a play away.
    async with running(server_settings(redis_url, key_prefix, rate_per_second=1000,
                                       rate_burst=1000)) as srv:
        yield f"ws://127.0.0.1:{srv.port}"


async def play_match(
    redis_url: str,
    key_prefix: str,
    options: dict[str, Any],
    contributions: list[str | None],
    signals: bool,
) -> dict[str, Any]:
    async with serve(redis_url, key_prefix) as url:
        return await play_on(url, options, contributions, signals)


async def play_on(
    url: str, options: dict[str, Any], contributions: list[str | None], signals: bool
) -> dict[str, Any]:
    """Four network players, named p0..p3 in their seats before any draw (R7), play one
    match (R8a contributions as given); return its record.

    With ``signals`` each player sends one signal right after each of its hands is dealt.
    """
    clients = [await NetClient.open(url, f"p{i}") for i in range(4)]
    try:
        opts = {"bot_delay_ms": 0, **options}
        table = (await clients[0].call("create_table", options=opts))["table"]
        for i in (1, 2, 3):
            extra = {"contribution": contributions[i]} if contributions[i] else {}
            await clients[i].call("join", table=table, seat=i, **extra)
        extra = {"contribution": contributions[0]} if contributions[0] else {}
        await clients[0].call("start", table=table, **extra)
        seats = [0, 1, 2, 3]
        if options.get("partner_draw"):
            entry = await clients[0].wait_event(lambda e: e["type"] == "partner_draw")
            seats = list(entry["event"]["seating"])
        tasks = [autoplay(c, table, seats[i], timeout=60) for i, c in enumerate(clients)]
        if signals:
            tasks += [signaller(c, table, seats[i]) for i, c in enumerate(clients)]
        results = await asyncio.gather(*tasks)
        over = results[0]
        assert over is not None and over["type"] == "match_over"
        record: dict[str, Any] = over["record"]
        fetched = await clients[1].call("get_record", table=table)
        assert fetched["record"] == record
        return record
    finally:
        for c in clients:
            await c.close()


async def signaller(client: NetClient, table: str, seat: int) -> None:
    """Send one signal after each hand_dealt of this seat, until the match is over."""
    index = 0
    while True:
        await client.wait_until(lambda i=index: len(client.events) > i, timeout=60)
        event = client.events[index]["event"]
        index += 1
        if event is None:
            continue
        if event["type"] == "match_over":
            return
        if event["type"] == "hand_dealt" and event["seat"] == seat:
            # The deal may already be over: the record says what was really sent.
            with contextlib.suppress(ServerError):
                await client.call("signal", table=table, signal="aces", n=1 + seat % 4)


def check(record: dict[str, Any], shown: str | None = None) -> dict[str, Any]:
    verdict = vf.verify(record, shown)
    assert verdict["valid"], (verdict, json.dumps(record)[:3000])
    return verdict


CONTRIBS = ["9f2c41d0", None, "00ff00ff00ff00ff00ff00ff00ff00ff", "0123456789abcdef" * 4]


async def test_real_record_plain_random_dealer_is_proven(
    redis_url: str, key_prefix: str, tmp_path: Path
) -> None:
    """R8a/R6: a 3-deal match with a random first dealer and three contributions."""
    record = await play_match(redis_url, key_prefix, {"deals": 3}, CONTRIBS, signals=False)
    verdict = check(record, record["fair"]["commitment"])
    assert verdict["contributors"] == 3
    assert verdict["checks"]["deals"] == 3
    assert verdict["checks"]["first_dealer_random"] == 1
    assert record["fair"]["contributions"] == CONTRIBS


async def test_real_record_chanter_risky_signals_is_proven(redis_url: str, key_prefix: str) -> None:
    """R9 exchange + R16 risky noticing across deals (signal:K counts over the match)."""
    options = {"deals": 2, "chanter": True, "signals": "risky", "signal_risk": 0.5}
    record = await play_match(redis_url, key_prefix, options, CONTRIBS, signals=True)
    verdict = check(record)
    assert verdict["checks"]["chanter_exchange"] == 2
    sent = sum(len(d["signals"]) for d in record["deals"])
    assert sent >= 2 and verdict["checks"]["signal_draws"] == sent


async def test_real_record_partner_draw_is_proven(redis_url: str, key_prefix: str) -> None:
    """R7: the draw's first dealer (Madame's holder at the new seat) deals deal 1."""
    options = {"deals": 2, "partner_draw": True, "signals": "risky"}
    record = await play_match(
        redis_url, key_prefix, options, [None, "ab", None, None], signals=True
    )
    verdict = check(record)
    assert verdict["checks"]["partner_draw"] == 1
    assert verdict["contributors"] == 1
    # The record's seats are after the draw; the players were p0..p3 before it (F4).
    seating = vf.partner_draw(record["fair"]["seed"])["seating"]
    assert [record["seats"][seating[old]] for old in range(4)] == ["p0", "p1", "p2", "p3"]


def seated_as(record: dict[str, Any], before: list[str], reseat: str) -> bool:
    """Whether the record's seats are ``before`` re-seated by R7's draw, read as ``reseat``."""
    seating = vf.partner_draw(record["fair"]["seed"], reseat)["seating"]
    return [record["seats"][seating[old]] for old in range(4)] == before


@pytest.mark.slow  # a random number of paced matches: 1-30 s
async def test_real_partner_draw_settles_the_reseating_reading(redis_url: str,
                                                                key_prefix: str) -> None:
    """F3: R7's "the other two take the remaining seats in their previous clockwise order"
    reads two ways; they differ in about one draw in six. Play one-deal matches (rematches,
    each with a new draw, R6) until a draw tells them apart ((5/6)^60 < 2e-5 that none
    does) and check which one the server plays: the clockwise reading (both orders counted
    from the Monsieur holder)."""
    options = {"deals": 1, "partner_draw": True, "signals": "off", "bot_delay_ms": 0}
    async with serve(redis_url, key_prefix) as url:
        clients = [await NetClient.open(url, f"p{i}") for i in range(4)]
        try:
            table = (await clients[0].call("create_table", options=options))["table"]
            for i in (1, 2, 3):
                await clients[i].call("join", table=table, seat=i)
            seats = [0, 1, 2, 3]  # each client's seat
            for round_ in range(60):
                before = [f"p{seats.index(s)}" for s in range(4)]
                marks = [len(c.events) for c in clients]
                if round_ == 0:
                    await clients[0].call("start", table=table, contribution="01")
                else:
                    if round_ >= 3:  # ten commands a match: keep under 20/s (PROTOCOL Limits)
                        await asyncio.sleep(0.55)
                    for c in clients:
                        await c.call("rematch", table=table)
                await clients[0].wait_until(lambda m=marks[0]: any(
                    e["event"] and e["event"]["type"] == "partner_draw"
                    for e in clients[0].events[m:]))
                draw = next(e["event"] for e in clients[0].events[marks[0]:]
                            if e["event"] and e["event"]["type"] == "partner_draw")
                seats = [draw["seating"][seats[i]] for i in range(4)]
                overs = await asyncio.gather(*(autoplay(c, table, seats[i], start=marks[i])
                                               for i, c in enumerate(clients)))
                assert overs[0] is not None
                record = overs[0]["record"]
                assert vf.verify(record)["valid"]
                seed = record["fair"]["seed"]
                if vf.partner_draw(seed, "clockwise")["seating"] != vf.partner_draw(
                        seed, "ascending")["seating"]:
                    break
            else:
                pytest.fail("no partner draw told the two readings of R7 apart")
        finally:
            for c in clients:
                await c.close()
    assert seated_as(record, before, "clockwise")
    assert not seated_as(record, before, "ascending")


async def test_real_record_no_contribution_says_server_alone(
    redis_url: str, key_prefix: str
) -> None:
    """R8a step 2: no contribution: still proven, and the verdict says nobody checked it."""
    record = await play_match(
        redis_url, key_prefix, {"deals": 1, "first_dealer": 1}, [None] * 4, signals=False
    )
    verdict = check(record)
    assert verdict["contributors"] == 0
    assert any("server alone" in n for n in verdict["notes"])


# --- (3) tampered records ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def real_record(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One real chanter + risky match record, shared by the tamper tests."""
    options = {"deals": 2, "chanter": True, "signals": "risky", "signal_risk": 0.5}
    record: dict[str, Any] = asyncio.run(
        play_match(
            redis_url, f"aluette-test-{uuid.uuid4().hex[:12]}", options, CONTRIBS, signals=True
        )
    )
    return record


def swap_card(record: dict[str, Any], deal: int) -> dict[str, Any]:
    """Swap one card of seat 0 with one of seat 1 in a deal, in the hands and the tricks,
    so that the tricks still replay (R18) but the deal no longer follows from the seed."""
    bad = copy.deepcopy(record)
    d = bad["deals"][deal]
    a, b = d["hands"][0][0], d["hands"][1][0]
    d["hands"][0][0], d["hands"][1][0] = b, a
    d["tricks"] = [[b if c == a else a if c == b else c for c in t] for t in d["tricks"]]
    return bad


def test_tampered_card_is_rejected(real_record: dict[str, Any]) -> None:
    assert vf.verify(real_record)["valid"]
    for deal in range(len(real_record["deals"])):
        verdict = vf.verify(swap_card(real_record, deal))
        assert not verdict["valid"]
        assert f"deal {deal + 1}" in verdict["error"]


def test_tampered_seed_material_is_rejected(real_record: dict[str, Any]) -> None:
    for field, value in (
        ("secret", "0" * 64),
        ("salt", "1" * 32),
        ("seed", "2" * 64),
        ("commitment", "3" * 64),
    ):
        bad = copy.deepcopy(real_record)
        bad["fair"][field] = value
        assert not vf.verify(bad)["valid"], field
    bad = copy.deepcopy(real_record)
    bad["fair"]["contributions"][1] = "ff"
    assert "seed" in vf.verify(bad)["error"]


def test_chanter_discards_are_checked_against_the_seed(real_record: dict[str, Any]) -> None:
    """R9/R8a: a taker discards six of its fifteen cards (nine dealt, six from the talon);
    which six is the player's choice, but a card from outside them is rejected."""
    # Another choice of discards (keep a discarded card, drop a kept one of the same
    # strength, R3, so every trick still has the same winner) is legal.
    swaps = [(n, s, kept, gone) for n, d in enumerate(real_record["deals"]) for s in range(4)
             for kept in d["hands"][s] for gone in d["chanter"]["discards"][s]
             if vf.strength(kept) == vf.strength(gone)]
    assert swaps, "no discard of the same strength as a kept card in this record"
    deal_index, taker, kept, gone = swaps[0]
    other = copy.deepcopy(real_record)
    d = other["deals"][deal_index]
    d["chanter"]["discards"][taker] = [kept if c == gone else c
                                       for c in d["chanter"]["discards"][taker]]
    d["hands"][taker] = [gone if c == kept else c for c in d["hands"][taker]]
    d["tricks"] = [[gone if c == kept else c for c in t] for t in d["tricks"]]
    assert vf.verify(other)["valid"]
    deal = real_record["deals"][deal_index]
    # A discard the taker never held is not.
    bad = copy.deepcopy(real_record)
    stranger = next(s for s in range(4) if not deal["chanter"]["discards"][s])
    bad["deals"][deal_index]["chanter"]["discards"][taker][0] = deal["hands"][stranger][0]
    verdict = vf.verify(bad)
    assert not verdict["valid"]
    assert f"deal {deal_index + 1}" in verdict["error"] and "R9" in verdict["error"]


def test_wrong_shown_commitment_or_prefix_is_rejected(real_record: dict[str, Any]) -> None:
    commitment = real_record["fair"]["commitment"]
    assert vf.verify(real_record, commitment)["valid"]
    assert not vf.verify(real_record, commitment[:16])["valid"]
    assert not vf.verify(real_record, "f" * 64)["valid"]


def test_tampered_signal_recipients_and_dealer_are_rejected(real_record: dict[str, Any]) -> None:
    bad = copy.deepcopy(real_record)
    sig = next(s for d in bad["deals"] for s in d["signals"])
    opponents = {(sig["from_seat"] + 1) % 4, (sig["from_seat"] + 3) % 4}
    sig["to"] = sorted(set(sig["to"]) ^ {min(opponents)})
    assert "R16" in vf.verify(bad)["error"]
    bad = copy.deepcopy(real_record)
    bad["deals"][0]["dealer"] = (bad["deals"][0]["dealer"] + 1) % 4
    assert not vf.verify(bad)["valid"]


def test_command_line_prints_the_verdict(real_record: dict[str, Any], tmp_path: Path) -> None:
    """The script: exit 0 and a proven verdict; exit 1 on a tampered record."""
    commitment = real_record["fair"]["commitment"]
    for record, code in ((real_record, 0), (swap_card(real_record, 0), 1)):
        path = tmp_path / "record.json"
        path.write_text(json.dumps(record))
        run = subprocess.run(
            [sys.executable, str(SCRIPT), str(path), "--commitment", commitment],
            capture_output=True,
            text=True,
            check=False,
        )
        assert run.returncode == code, run.stdout + run.stderr
        assert json.loads(run.stdout)["proven"] is (code == 0)


async def test_real_record_with_bots_voting_chanter_is_proven(redis_url: str,
                                                               key_prefix: str) -> None:
    """R9/R17: random bots vote for and against the chanter: votes, nulls after a refusal,
    and exchanges only when all four agreed, all checked against the seed."""
    async with serve(redis_url, key_prefix) as url:
        client = await NetClient.open(url, "p0")
        try:
            # A bot delay keeps our one player under the command rate (docs/PROTOCOL.md, Limits).
            opts = {"deals": 5, "chanter": True, "bot_delay_ms": 30, "signals": "risky"}
            table = (await client.call("create_table", options=opts))["table"]
            for seat in (1, 2, 3):
                await client.call("add_bot", table=table, seat=seat, level="random")
            await client.call("start", table=table, contribution="c0ffee")
            over = await autoplay(client, table, 0, timeout=60)
        finally:
            await client.close()
    assert over is not None
    record = over["record"]
    verdict = check(record)
    votes = [d["chanter"]["votes"] for d in record["deals"]]
    assert verdict["checks"]["deals"] == 5
    assert verdict["contributors"] == 1 and record["bots"] == [False, True, True, True]
    # votes[s] is seat s's vote (not the n-th voter's), null once a refusal ended the vote;
    # the verifier rejects any other layout, so reaching here confirms the reading (F9).
    assert any(False in v for v in votes), votes  # all-yes in 5 deals: < 2^-15 with random bots


def last_next_commitment(client: NetClient) -> str | None:
    """The `next_commitment` of the latest TableInfo this client was sent (R8a step 1)."""
    infos = [e["table"] for e in client.payloads("table_changed")]
    return infos[-1].get("next_commitment") if infos else None


async def test_rematch_record_follows_the_commitment_shown_before(redis_url: str,
                                                                   key_prefix: str) -> None:
    """R8a step 1, R6: each match has its own commitment, shown before anyone contributes
    (the rematch's from the moment the first match starts), and its own deals from deal:1."""
    async with serve(redis_url, key_prefix) as url:
        clients = [await NetClient.open(url, f"p{i}") for i in range(4)]
        try:
            opts = {"deals": 1, "bot_delay_ms": 0}
            table = (await clients[0].call("create_table", options=opts))["table"]
            for i in (1, 2, 3):
                await clients[i].call("join", table=table, seat=i)
            shown_1 = last_next_commitment(clients[3])
            await clients[0].call("start", table=table, contribution="aa")
            firsts = await asyncio.gather(*(autoplay(c, table, i) for i, c in enumerate(clients)))
            shown_2 = last_next_commitment(clients[3])
            marks = [len(c.events) for c in clients]
            for i, c in enumerate(clients):
                await c.call("rematch", table=table, contribution=f"{i + 1:02x}")
            await asyncio.gather(*(autoplay(c, table, i, start=marks[i])
                                   for i, c in enumerate(clients)))
            record_1 = (await clients[0].call("get_record", table=table, match=1))["record"]
            record_2 = (await clients[0].call("get_record", table=table, match=2))["record"]
        finally:
            for c in clients:
                await c.close()
    assert firsts[0] is not None and firsts[0]["record"] == record_1
    assert shown_1 and shown_2 and shown_1 != shown_2
    assert check(record_1, shown_1)["contributors"] == 1
    assert check(record_2, shown_2)["contributors"] == 4
    assert record_2["fair"]["contributions"] == ["01", "02", "03", "04"]
    assert not vf.verify(record_2, shown_1)["valid"]


async def test_real_record_target_points_is_proven(redis_url: str, key_prefix: str) -> None:
    """R14a: with target_points every deal still follows from deal:N, and play stopped at
    the first deal that took a team to the target (the verifier replays R10-R13 for it)."""
    options = {"target_points": 3, "signals": "off"}
    record = await play_match(redis_url, key_prefix, options, CONTRIBS, signals=False)
    verdict = check(record)
    assert max(verdict["points"]) >= 3
    assert verdict["checks"]["deals"] == len(record["deals"]) >= 2


@pytest.mark.parametrize("name", ["v1-plain.json", "v1-chanter-partner-draw.json"])
def test_stored_scheme_1_records_are_proven(name: str) -> None:
    """R8a "Scheme 1": the project's stored aluette-fair/1 records (data files only) follow
    from their seed under the scheme 1 text (Mersenne Twister streams)."""
    record = json.loads((ROOT / "tests" / "records" / "stored" / name).read_text())
    assert record["fair"]["scheme"] == "aluette-fair/1"
    verdict = check(record)
    assert verdict["checks"]["deals"] == len(record["deals"])
    bad = swap_card(record, 0)
    assert not vf.verify(bad)["valid"]
    bad = copy.deepcopy(record)
    bad["fair"]["scheme"] = "aluette-fair/2"
    assert "commitment" in vf.verify(bad)["error"]
