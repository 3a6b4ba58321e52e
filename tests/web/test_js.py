"""The browser client's pure modules under node (issue 13): the session module (ported from
protocol/session.py) against hand-made frames and against the frames of a real match
recorded from a real server, the table model against the server's own snapshots, and the
rules the page explains (R3, R11-R13a) against the engine. Skipped without node."""

from __future__ import annotations

import asyncio
import json
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
