"""The browser client's pure modules under node (issue 13): the session module (ported from
protocol/session.py) against hand-made frames and against the frames of a real match
recorded from a real server, the table model against the server's own snapshots, and the
rules the page explains (R3, R11-R13a) against the engine. Skipped without node."""

from __future__ import annotations

import asyncio
import copy
import json
import os
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import msgpack
import pytest

import protocol
from server.game.cards import STRENGTH, card_name, sort_by_strength
from server.game.rules import deal_outcome
from tests.server.netclient import NetClient
from tests.server.players import Hand

from .conftest import ROOT

NODE = shutil.which("node")
JS = ROOT / "tests" / "web" / "js"
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")


def node(*args: str) -> subprocess.CompletedProcess[str]:
    assert NODE is not None
    return subprocess.run([NODE, *args], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)


def test_session_and_model_modules():
    """tests/web/js/*.test.mjs: every session rule frame by frame, the model event by
    event."""
    done = node("--test", str(JS / "session.test.mjs"), str(JS / "model.test.mjs"))
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout and "# pass " in done.stdout


def test_rules_and_text_agree_with_the_python_side(tmp_path: Path):
    rng = random.Random(13)
    outcomes = []
    seeds: list[list[int | None]] = [[None] * 9, [0] * 9, [1, 2, 3, 0, 1, 2, 3, 0, 1],
                                     [0, 0, 1, 1, None, 2, 2, 3, 3], [None] * 7 + [2, 2],
                                     [2, None, None, None, None, None, None, 2, 2]]
    for _ in range(3000):
        weights = rng.choice([(1, 1, 1, 1, 1), (1, 3, 1, 1, 1), (3, 1, 1, 1, 1)])
        seeds.append(rng.choices([None, 0, 1, 2, 3], weights=weights, k=9))
    for winners in seeds:
        winner, points, counts = deal_outcome(winners)
        team = [0, 0]
        if winner is not None:
            team[winner % 2] = points
        outcomes.append({"winners": winners, "winner": winner, "points": team,
                         "counts": counts, "mordienne": points == 2})
    shuffled = list(STRENGTH)
    rng.shuffle(shuffled)
    clean = ["  Ana\x1b[2J ", "Bo\u202eb", "a\u200bb", "x\ty\n z", "\u0085Cy\u2028Di\u2029",
             "\U000f0000p", "Zoë  Ünal", "<img src=x onerror=alert(1)>", "\ud7ff ok", ""]
    vectors = {
        "codes": list(protocol.CARD_CODES),
        "cards": [[c, STRENGTH[c], card_name(c)] for c in protocol.CARD_CODES],
        "sort": {"input": shuffled, "output": sort_by_strength(shuffled)},
        "clean": [[s, protocol.clean_text(s)] for s in clean],
        "outcomes": outcomes,
    }
    path = tmp_path / "vectors.json"
    path.write_text(json.dumps(vectors))
    done = node(str(JS / "vectors.mjs"), str(path))
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    summary = json.loads(done.stdout)
    assert summary["explained"] == len(outcomes) and summary["failures"] == []


class Recorder(NetClient):
    """A NetClient that also notes each command it sends and how many frames it had
    received by then (where the command goes in the replay)."""

    sent: list[tuple[int, dict[str, Any]]]

    async def request(self, kind: str, cid: int | None = None, **fields: Any) -> dict[str, Any]:
        if not hasattr(self, "sent"):
            self.sent = []
        cid = next(self.ids) if cid is None else cid
        self.sent.append((len(self.frames), {"type": kind, "id": cid, **fields}))
        return await super().request(kind, cid, **fields)


async def checkpoint(client: Recorder, table: str, checkpoints: list[dict[str, Any]]) -> None:
    """Ask for a fresh snapshot now (the table is waiting on this client, so nothing is in
    flight) and note it: the replayed model must equal it at this frame."""
    at = len(client.frames)
    await client.call("resume", token=client.welcome["session"], table=table,
                      last_seq=protocol.MAX_COMMAND_ID)
    await client.wait_until(lambda: any(
        protocol.to_dict(protocol.decode_server(f)).get("event", {}) and
        protocol.to_dict(protocol.decode_server(f))["event"]["type"] == "snapshot"
        for f in client.frames[at:]))
    for frame in client.frames[at:]:
        msg = msgpack.unpackb(frame)
        if msg.get("type") == "event" and (msg.get("event") or {}).get("type") == "snapshot":
            checkpoints.append({"at": at, "table": table, "view": msg["event"]["view"]})
            return


def recording(client: Recorder, checkpoints: list[dict[str, Any]]) -> dict[str, Any]:
    return {"name": client.welcome["name"], "frames": [f.hex() for f in client.frames],
            "sent": [[i, c] for i, c in client.sent], "checkpoints": checkpoints}


async def drive(client: Recorder, table: str, seat: int, cps: list[dict[str, Any]],
                watcher: tuple[Recorder, list[dict[str, Any]]] | None = None) -> None:
    """Play one seat to the end of the match (vote yes, discard the weakest six, play the
    weakest card, signal once), asking for fresh snapshots at its 1st, 4th and 8th plays
    (the table waits on this seat then, so nothing is in flight) and at the end."""
    hand, index, turns = Hand(), 0, 0
    while True:
        await client.wait_until(lambda i=index: len(client.events) > i, timeout=60)
        entry = client.events[index]
        index += 1
        event = entry.get("event")
        if not event or entry["table"] != table:
            continue
        if event["type"] == "partner_draw":
            seat = event["seating"][seat]
        hand.apply(event, seat)
        if event["type"] == "match_over":
            break
        if event["type"] != "turn" or event["seat"] != seat:
            continue
        # Act only on the newest turn (the same walk as tests/server/players.autoplay).
        if any(e.get("event") and e["event"]["type"] in ("card_played", "turn",
               "chanter_vote", "chanter_discarded") for e in client.events[index:]):
            continue
        phase = event.get("phase") or "play"
        if phase == "chanter_vote":
            await client.call("chanter_vote", table=table, vote=True)
        elif phase == "chanter_discard":
            cards = sort_by_strength(hand.cards)[-6:]
            await client.call("discard", table=table, cards=cards)
            for c in cards:
                hand.cards.remove(c)
        else:
            turns += 1
            if turns in (1, 4, 8):
                await checkpoint(client, table, cps)
                if watcher is not None:
                    await checkpoint(watcher[0], table, watcher[1])
            if turns == 2:
                await client.call("signal", table=table, signal="aces",
                                  n=1 + sum(c[0] == "1" for c in hand.cards) % 4)
            await client.call("play", table=table, card=sort_by_strength(hand.cards)[-1])
    await checkpoint(client, table, cps)


async def play_recorded_match(url: str, options: dict[str, Any]) -> list[dict[str, Any]]:
    """Four players (every vote yes, so a chanter is always accepted) and Sam, watching,
    through a whole one-deal match; every frame each of them received is recorded."""
    players = [await Recorder.open(url, name) for name in ("Ana", "Bo", "Cy", "Di")]
    sam = await Recorder.open(url, "Sam")
    table = (await players[0].call("create_table", options=options, name="Replay"))["table"]
    await sam.call("spectate", table=table)
    for seat in (1, 2, 3):
        await players[seat].call("join", table=table, seat=seat)
    await players[0].call("start", table=table)
    cps: list[list[dict[str, Any]]] = [[] for _ in range(5)]
    await asyncio.gather(*(drive(c, table, i, cps[i], (sam, cps[4]) if i == 0 else None)
                           for i, c in enumerate(players)))
    await sam.wait_event(lambda e: e["type"] == "match_over")
    await checkpoint(sam, table, cps[4])
    out = [recording(c, cps[i]) for i, c in enumerate([*players, sam])]
    for c in [*players, sam]:
        await c.close()
    return out


@pytest.mark.parametrize("options", [
    {"deals": 1, "signals": "private", "first_dealer": 3},
    {"deals": 1, "signals": "risky", "signal_risk": 1.0, "chanter": True,
     "partner_draw": True},
], ids=["plain", "chanter-draw-risky"])
async def test_session_and_model_replay_a_real_match(web, tmp_path: Path, options):
    """The JS session and model fed every frame of a real match (four players and a
    spectator): no gap, every reply matched to its command, and at each checkpoint the
    model equals the server's snapshot."""
    recordings = await play_recorded_match(f"ws://127.0.0.1:{web.port}", options)
    kinds = {(msgpack.unpackb(bytes.fromhex(f)).get("event") or {}).get("type")
             for rec in recordings for f in rec["frames"]}
    assert {"signal", "signal_sent", "snapshot", "match_over"} <= kinds
    if options.get("chanter"):
        assert {"partner_draw", "talon_dealt", "chanter_discarded"} <= kinds
    for rec in recordings:
        assert len(rec["checkpoints"]) == 4
        path = tmp_path / f"{rec['name']}.json"
        path.write_text(json.dumps(rec))
        done = node(str(JS / "replay.mjs"), str(path))
        assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
        summary = json.loads(done.stdout)
        assert summary["checkpoints"] == 4 and summary["events"] > 40


#: randrange(n) arguments for the port: small ones, the pack's sizes, and 31/32-bit ones
#: (where n.bit_length() and the rejection loop matter most).
BELOW = [1, 2, 3, 4, 5, 7, 12, 47, 48, 1000, 2**31 - 1, 2**31, 2**31 + 1, 2**32 - 1]
#: Seeds at the edges of random.seed(str): empty, leading NUL bytes, non-ASCII (two, three
#: and four UTF-8 bytes), long, and longer than the 624 words of state (init_by_array's key
#: loop then runs past N).
EDGE_TEXTS = ["", "0", "a", "\x00", "\x00\x00\x00\x00abc", "é", "日本語", "\U0001f0a1 aluette",
              "\uffff", "x" * 1000, "aluette" * 500]


def random_vector(text: str) -> dict[str, Any]:
    """What random.Random(text) draws, in the order fair.test.mjs draws it, and what the
    rules deal and draw from a fresh one."""
    from server.game import rules
    from server.game.cards import ALL_CARDS

    r = random.Random(text)
    out: dict[str, Any] = {"text": text}
    out["bits32"] = [r.getrandbits(32) for _ in range(6)]
    out["bits"] = [r.getrandbits(k) for k in range(33)]
    out["below"] = [[n, r.randrange(n)] for n in BELOW]
    shuffled = list(ALL_CARDS)
    r.shuffle(shuffled)
    out["shuffled"] = shuffled
    out["far"] = [x for i, x in enumerate((r.getrandbits(32) for _ in range(1300)), 1)
                  if i % 100 == 0]
    out["randrange4"] = random.Random(text).randrange(4)
    out["deals"] = [dict(zip(("hands", "talon"), rules.deal(random.Random(text), dealer),
                             strict=True)) for dealer in range(4)]
    draw = rules.partner_draw(random.Random(text))
    out["draw"] = {"cards": [list(c) for c in draw.cards], "seating": draw.seating,
                   "firstDealer": draw.first_dealer}
    return out


def record_vectors(rng: random.Random) -> list[dict[str, Any]]:
    """Real records of matches dealt from their R8a seed and played at random to the end,
    genuine and tampered, each with what fair.check_record says of it (None: proven)."""
    from server.game import fair, rules
    from server.game.errors import RecordError
    from server.game.record import verify_record
    from tests.records.test_fair import fair_record

    configs: list[dict[str, Any]] = [
        {"deals": 1}, {"deals": 3}, {"deals": 2, "first_dealer": 2},
        {"deals": 2, "chanter": True}, {"deals": 3, "chanter": True},
        {"deals": 2, "partner_draw": True}, {"deals": 3, "partner_draw": True, "chanter": True},
        {"deals": 2, "first_dealer": 0, "chanter": True}, {"deals": 4, "chanter": True},
        {"deals": 2, "partner_draw": True, "chanter": True},
    ]
    out: list[dict[str, Any]] = []

    def add(name: str, record: dict[str, Any], expected: str | None) -> None:
        try:
            fair.check_record(record, expected)
            python = None
        except RecordError as err:
            python = str(err)
        out.append({"name": name, "record": record, "expected": expected, "python": python})

    for n, options in enumerate(configs * 2):
        secret, salt = fair.new_secret()
        contributions = [rng.choice([None, f"{rng.getrandbits(128):032x}", "0", "ab" * 32])
                         for _ in range(4)]
        record = fair_record(secret, salt, contributions, play_seed=n, **options)
        assert verify_record(record)["fair"] == "proven"
        committed = record["fair"]["commitment"]
        add("genuine", record, committed if n % 2 == 0 else None)

        swapped = copy.deepcopy(record)      # two seats' first cards exchanged, tricks too
        deal = swapped["deals"][-1]
        a, b = rng.sample(range(4), 2)
        swap = {deal["hands"][a][0]: deal["hands"][b][0], deal["hands"][b][0]: deal["hands"][a][0]}
        deal["hands"] = [[swap.get(c, c) for c in h] for h in deal["hands"]]
        deal["tricks"] = [[swap.get(c, c) for c in t] for t in deal["tricks"]]
        add("swapped", swapped, committed)

        rotated = copy.deepcopy(record)      # the whole table one seat on: R6/R7 say no
        for d in rotated["deals"]:
            d["dealer"] = (d["dealer"] + 1) % 4
            d["hands"] = [d["hands"][(s - 1) % 4] for s in range(4)]
        add("rotated", rotated, None)

        forged = copy.deepcopy(record)       # other seed material, consistent in itself
        forged["fair"] = fair.reveal(fair.new_secret()[0], salt, contributions)
        add("forged", forged, None)

        if len(record["deals"]) > 1:         # a later deal said to be dealt by another seat
            later = copy.deepcopy(record)
            later["deals"][-1]["dealer"] = (later["deals"][-1]["dealer"] + 2) % 4
            add("dealer", later, committed)

        if options.get("chanter"):           # R9's talon shares, card by card
            seed = record["fair"]["seed"]
            for number, d in enumerate(record["deals"], start=1):
                dealer = d["dealer"]
                _, talon = rules.deal(rules.deal_rng(seed, number), dealer)
                held = {c for h in d["hands"] for c in h}
                left = (dealer + 1) % 4
                for name, seat, share in (
                        ("dealer_share", dealer, talon[1::2]),
                        ("left_share", left, talon[0::2]),
                        ("left_share_to_dealer", dealer, talon[0::2]),
                        ("dealer_share_to_left", left, talon[1::2]),
                        ("talon_opposite", (dealer + 2) % 4, talon)):
                    free = [c for c in share if c not in held]
                    if free:
                        changed = copy.deepcopy(record)
                        changed["deals"][number - 1]["hands"][seat][0] = free[0]
                        add(name, changed, committed)
    return out


def test_fair_deal_checks_agree_with_the_server(tmp_path: Path):
    """R8a: the page's hashes are server/game/fair.py's, and a tampered reveal (seed,
    secret, salt, contributions, scheme) is reported as a failed check; its port of
    random.Random draws what CPython's does, its deals and partner draws are the rules', and
    it accepts the deals of real records and rejects tampered ones exactly as
    fair.check_record does (tests/web/js/fair.test.mjs)."""
    from server.game import fair
    from server.game.cards import ALL_CARDS

    rng = random.Random(8)
    reveals = []
    for n in range(6):
        secret, salt = fair.new_secret()
        contributions = [rng.choice([None, f"{rng.getrandbits(128):032x}", "0", "ab" * 32])
                         for _ in range(4)]
        if n == 0:
            contributions[0] = f"{rng.getrandbits(128):032x}"
        reveals.append(fair.reveal(secret, salt, contributions))
    texts = [f"{rng.getrandbits(256):064x}" for _ in range(200)] + EDGE_TEXTS
    texts += [f"aluette:{rng.getrandbits(256):064x}:{what}"
              for what in ("deal:1", "deal:9", "partner_draw", "first_dealer")]
    records = record_vectors(rng)
    outcomes = {(v["name"], v["python"] is None) for v in records}
    assert {("genuine", True), ("swapped", False), ("rotated", False), ("forged", False),
            ("dealer", False), ("dealer_share", True), ("left_share", True),
            ("left_share_to_dealer", False), ("dealer_share_to_left", False),
            ("talon_opposite", False)} <= outcomes, outcomes
    vectors = {"reveals": reveals, "all_cards": list(ALL_CARDS),
               "random": [random_vector(t) for t in texts], "records": records}
    path = tmp_path / "fair.json"
    path.write_text(json.dumps(vectors), encoding="utf-8")
    assert NODE is not None
    done = subprocess.run([NODE, "--test", str(JS / "fair.test.mjs")], capture_output=True,
                          text=True, timeout=120, cwd=ROOT,
                          env={**os.environ, "FAIR_VECTORS": str(path)})
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout and "# pass 10" in done.stdout
    assert "# skipped 0" in done.stdout
