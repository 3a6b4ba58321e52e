"""Resume is bounded (issue 30, item 5; the red team's high finding, "resume amplification").

Ten connections of one address kept sending ``resume {last_seq: 0}`` for a public table:
each got its whole log replayed (about 1,600 events), everyone else's ping went to hundreds
of ms, and admission control still said ``busy: false`` (bench/resume_probe.py measures
it). Now:

- a stranger (a player who never watched the table) gets a head, never the log;
- a spectator far behind (more than ``SPECTATOR_REPLAY_MAX`` events) gets a head;
- every replay is paid for by its address (``--replay-per-address``) and the process
  (``--replay-per-process``): a resume they cannot pay for gets a head, and a replay larger
  than an address's bucket is never sent, not even to a seated player;
- the process's budget running out makes admission control busy (``/healthz``, new
  sessions refused with ``server_busy``);
- an address's resumes, heads included, are paced (``--resumes-per-address``).

A head is always a correct answer to a resume (docs/PROTOCOL.md, "Reconnecting"): the
client is where the snapshot says, and live events follow in order.

Real server on 127.0.0.1 with bots playing a real match; no mocks.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import msgpack
from websockets.asyncio.client import connect as ws_connect

from server.app import running
from server.table.watching import SPECTATOR_REPLAY_MAX

from .conftest import server_settings
from .netclient import NetClient


@dataclass
class Finished:
    table: str
    last: int                 # the spectators' sequence at the table (public events)
    creator: dict[str, Any]   # the seated creator's welcome
    creator_ids: Any
    watcher: NetClient        # a spectator who watched it all


async def finished_match(url: str, deals: int = 2) -> Finished:
    """A public match of four bots played to its end: the creator (seat 0) leaves with
    grace 0, so a bot plays the seat; a spectator keeps the bots going and sees it all."""
    ana = await NetClient.open(url, "Ana")
    table = (await ana.call("create_table", options={
        "deals": deals, "bot_delay_ms": 0, "grace_s": 0, "first_dealer": 3}))["table"]
    for seat in (1, 2, 3):
        await ana.call("add_bot", table=table, seat=seat, level="random")
    await ana.call("start", table=table)
    sam = await NetClient.open(url, "Sam")
    await sam.call("spectate", table=table)
    await ana.close()
    await sam.wait_event(lambda e: e["type"] == "match_over", timeout=120)
    last = max(sam.seqs(table))
    assert last > SPECTATOR_REPLAY_MAX + 10, last    # far enough behind to matter
    return Finished(table, last, ana.welcome, ana.ids, sam)


async def resume(client: NetClient, table: str, last_seq: int) -> dict[str, Any]:
    return await client.call("resume", token=client.welcome["session"], table=table,
                             last_seq=last_seq)


async def current_seq(client: NetClient, table: str) -> int:
    """Where the client's sequence at ``table`` stands now: a resume past any sequence
    number asks for a head, which replays nothing (and costs no budget)."""
    return int((await resume(client, table, 2**53 - 1))["seq"])


def spectators_told(client: NetClient, table: str, n: int) -> Any:
    return lambda: any(e["table"] == table and e["event"]["type"] == "table_changed"
                       and e["event"]["table"]["spectators"] == n for e in client.events)


async def test_a_stranger_or_a_spectator_far_behind_gets_a_snapshot(connect, url) -> None:
    done = await finished_match(url)
    # Strangers: they never watched the table. Not the log, however little they ask for.
    cy = await connect("Cy")
    got = await resume(cy, done.table, 0)
    assert got["snapshot"] is True and got["replayed"] == 0, got
    dee = await connect("Dee")
    got = await resume(dee, done.table, got["seq"] - 3)
    assert got["snapshot"] is True and got["replayed"] == 0, got
    # Cy watches it now (the resume made Cy a spectator): a small gap is replayed.
    await cy.wait_until(spectators_told(cy, done.table, 3))     # Sam, Cy, Dee
    now = await current_seq(cy, done.table)
    got = await resume(cy, done.table, now - 3)
    assert got["snapshot"] is False and got["replayed"] == 3, got
    # The spectator who watched it all comes back on a new connection: far behind, a
    # snapshot; a few events behind, those events.
    sam = done.watcher
    back = await connect("Sam", token=sam.welcome["session"], ids=sam.ids)
    far = await resume(back, done.table, 0)
    assert far["snapshot"] is True and far["replayed"] == 0, far
    # (Sam's old connection closing may still announce a spectator count meanwhile: the
    # replay is then that much longer, and still exactly the events after last_seq.)
    last_seq = far["seq"] - 5
    near = await resume(back, done.table, last_seq)
    assert near["snapshot"] is False and near["replayed"] == near["seq"] - last_seq, near
    assert 5 <= near["replayed"] <= 8
    await back.wait_until(lambda: max(back.seqs(done.table)) >= near["seq"])
    seqs = [e["seq"] for e in back.events if e["table"] == done.table]
    assert seqs[-near["replayed"]:] == list(range(last_seq + 1, near["seq"] + 1))


async def test_replays_are_paid_for_by_the_address(redis_url, key_prefix,
                                                   redis_client) -> None:
    per_address = 30.0                        # a bucket of 60 events
    async with running(server_settings(redis_url, key_prefix,
                                       replay_per_address=per_address)) as srv:
        url = f"ws://127.0.0.1:{srv.port}"
        done = await finished_match(url)
        # A seated player further behind than the bucket: never replayed.
        ana = await NetClient.open(url, "Ana", token=done.creator["session"],
                                   ids=done.creator_ids)
        got = await resume(ana, done.table, 0)
        assert got["seat"] == 0 and got["snapshot"] is True, got
        # A spectator of the table, resuming 25 events back again and again from one
        # address: replays while the bucket pays, snapshots after.
        sam = done.watcher
        now = await current_seq(sam, done.table)
        started = time.monotonic()
        answers = [await resume(sam, done.table, now - 25) for _ in range(8)]
        elapsed = time.monotonic() - started
        replayed = sum(a["replayed"] for a in answers)
        assert answers[0]["replayed"] == 25
        assert any(a["snapshot"] for a in answers)
        assert replayed <= 2 * per_address + per_address * elapsed, (replayed, elapsed)
        assert (await srv.hub.health())["replays"]["heads_instead"] >= 1
        await ana.close()
        await sam.close()


async def test_a_spent_process_budget_makes_admission_control_busy(
        redis_url, key_prefix, redis_client) -> None:
    # The loop's own lag never trips here (10 s): only the replays can make it busy.
    settings = server_settings(redis_url, key_prefix, busy_lag_ms=10_000,
                               replay_per_address=1000, replay_per_process=20)
    async with running(settings) as srv:
        url = f"ws://127.0.0.1:{srv.port}"
        done = await finished_match(url)
        sam = done.watcher
        first = await resume(sam, done.table, done.last - 30)      # 30 of the 40
        assert first["replayed"] == 30
        assert not srv.hub.lag.busy()
        second = await resume(sam, done.table, done.last - 30)
        assert second["snapshot"] is True and second["replayed"] == 0, second
        health = await srv.hub.health()
        assert health["busy"] is True and health["replays"]["pressed"] is True
        # A new player is asked to come back later; the spectator is still served.
        stranger = await ws_connect(url, compression=None)
        await stranger.send(msgpack.packb({"type": "hello", "id": 1, "versions": [1],
                                           "name": "Cy"}))
        reply = msgpack.unpackb(await stranger.recv())
        assert reply["type"] == "error" and reply["code"] == "server_busy", reply
        await stranger.close()
        near = await resume(sam, done.table, done.last)            # nothing to replay
        assert near["snapshot"] is False and near["replayed"] == 0
        await sam.close()


async def test_an_addresss_resumes_are_paced(redis_url, key_prefix, redis_client) -> None:
    """Even a resume answered by a head costs frames and a view: past
    ``--resumes-per-address`` (four times that at once) an address's resumes wait their
    turn instead of being carried out at the command rate of every connection."""
    per_s = 4.0
    async with running(server_settings(redis_url, key_prefix,
                                       resumes_per_address=per_s)) as srv:
        url = f"ws://127.0.0.1:{srv.port}"
        done = await finished_match(url)
        sam = done.watcher
        extra = 8
        started = time.monotonic()
        for _ in range(int(4 * per_s) + extra):
            got = await resume(sam, done.table, 2**53 - 1)
            assert got["snapshot"] is True
        elapsed = time.monotonic() - started
        assert elapsed >= 0.9 * extra / per_s, elapsed
        assert (await srv.hub.health())["replays"]["resumes_paced_s"] > 0
        await sam.close()
