"""Provably fair deals over the network (R8a, issue 15): the commitment is public before
anyone contributes, the contributions are shown before any card, the seed material is
nowhere a client can read before the end, and the record proves the deals after it."""

from __future__ import annotations

import asyncio

from protocol import CreateTable
from server.game import fair
from server.game.record import verify_record
from server.store.bus import unpack_entry
from server.table.delta import restore
from server.table.mutations import Work, begin_match, new_table
from server.table.state import SeatState, TableState
from tests.records.snippet import NODE, check_fair, run_node

from .players import autoplay

OPTIONS = {"deals": 1, "bot_delay_ms": 0, "first_dealer": 3}


async def test_r8a_the_commitment_comes_before_the_contributions_and_proves_the_deals(connect):
    ana, bo, cy, di = [await connect(n) for n in ("Ana", "Bo", "Cy", "Di")]
    table = (await ana.call("create_table", options=OPTIONS))["table"]
    head = (await ana.wait_event(lambda e: e["type"] == "table_changed"))["event"]["table"]
    committed = head["next_commitment"]
    assert len(committed) == 64 and head["match"] == 0
    # Bo reads it in the lobby before he contributes; the others in the table's head.
    listed = (await bo.call("list_tables"))["tables"]
    assert [t["next_commitment"] for t in listed if t["table"] == table] == [committed]
    await bo.call("join", table=table, seat=1, contribution="b0b0")
    await cy.call("join", table=table, seat=2)
    await cy.call("join", table=table, contribution="c1c1")        # seated: contributes
    await di.call("join", table=table, seat=3, contribution="d0")
    await di.call("join", table=table, contribution="d1d1")        # the latest one counts
    for c in (bo, cy, di):
        seen = [e["event"]["table"]["next_commitment"] for e in c.events
                if e["event"]["type"] == "table_changed"]
        assert seen and set(seen) == {committed}
    await ana.call("start", table=table, contribution="a0a0")
    for c in (ana, bo, cy, di):
        deal = await c.wait_event(lambda e: e["type"] == "hand_dealt")
        kinds = [e["event"]["type"] for e in c.events[:c.events.index(deal)]]
        assert kinds[-2:] == ["deals_committed", "deal_started"], kinds   # before any card
        assert c.payloads("deals_committed") == [{
            "type": "deals_committed", "match": 1, "commitment": committed,
            "contributions": ["a0a0", "b0b0", "c1c1", "d1d1"]}]
    playing = (await ana.wait_event(lambda e: e["type"] == "table_changed"
                                    and e["table"]["status"] == "playing"))["event"]["table"]
    assert playing["match"] == 1 and playing["next_commitment"] not in (None, committed)
    over = await asyncio.gather(*(autoplay(c, table, i) for i, c in
                                  enumerate((ana, bo, cy, di))))
    record = over[0]["record"]
    assert record["fair"]["commitment"] == committed and record["match"] == 1
    assert verify_record(record, committed) == {**verify_record(record), "fair": "proven"}
    check_fair()(record, committed)          # docs/RULES.md's ten lines agree
    assert record["fair"]["seed"] == fair.derive_seed(
        record["fair"]["secret"], record["fair"]["salt"], ["a0a0", "b0b0", "c1c1", "d1d1"])


async def test_r8a_a_real_match_with_exchanges_and_noticed_signals_is_proven_by_all_three(
        connect, tmp_path):
    """A match played over the network with chanter (R9) and risky signals (R16): its
    record gives each exchange and who received each signal, and the server's verifier and
    docs/verify/'s two programs all prove it from the commitment the table showed."""
    ana = await connect("Ana")
    table = (await ana.call("create_table", options={
        **OPTIONS, "deals": 2, "chanter": True, "signals": "risky",
        "signal_risk": 0.5}))["table"]
    head = (await ana.wait_event(lambda e: e["type"] == "table_changed"))["event"]["table"]
    await ana.call("start", table=table, contribution="a0a0")
    for signal in ("useless_hand", "going_mordienne", "useless_hand"):
        await ana.call("signal", table=table, signal=signal)
    over = await autoplay(ana, table, 0)
    assert over is not None
    record = over["record"]
    committed = head["next_commitment"]
    assert record["fair"]["scheme"] == "aluette-fair/2"
    assert len(record["deals"][0]["signals"]) >= 3
    assert all("chanter" in d for d in record["deals"])
    assert verify_record(record, committed)["fair"] == "proven"
    check_fair()(record, committed)
    if NODE is not None:
        done = run_node(record, committed, tmp_path)
        assert done.returncode == 0, done.stderr


async def test_r8a_the_seed_material_is_in_no_frame_log_or_record_before_the_end(connect,
                                                                                server):
    ana, bo, eve = await connect("Ana"), await connect("Bo"), await connect("Eve")
    table = (await ana.call("create_table", options={**OPTIONS, "signals": "risky",
                                                    "signal_risk": 1.0}))["table"]
    await bo.call("join", table=table, seat=1, contribution="0123")
    await eve.call("spectate", table=table)
    await ana.call("start", table=table, contribution="4567")
    await ana.call("signal", table=table, signal="useless_hand")
    # Halfway through the match, read what the server keeps: the secret is in the table's
    # document (never sent), and nowhere else a client could reach.
    await asyncio.gather(autoplay(ana, table, 0, max_plays=4),
                         autoplay(bo, table, 1, max_plays=4))
    state, _ = restore(await server.hub.store.load_table(table))
    assert state.match_seed is not None and state.status == "playing"
    secrets = [state.match_seed.secret, state.match_seed.salt, state.match["seed"],
               state.next_seed.secret, state.next_seed.salt]
    log = await server.hub.store.read_log(table, 0)
    payloads = b"".join(e.payload for gseq, blob in log if (e := unpack_entry(gseq, blob)))
    assert b"deals_committed" in payloads                 # the log is the one clients replay
    assert await server.hub.store.load_record(table) is None
    assert (await eve.request("get_record", table=table))["code"] == "wrong_phase"
    for where in (payloads, *(b"".join(c.frames) for c in (ana, bo, eve))):
        for secret in secrets:
            assert secret.encode() not in where and secret[:12].encode() not in where
    # After the end the record reveals this match's material, never the next one's.
    over = await asyncio.gather(autoplay(ana, table, 0), autoplay(bo, table, 1))
    revealed = over[0]["record"]["fair"]
    assert [revealed["secret"], revealed["salt"], revealed["seed"]] == secrets[:3]
    everything = b"".join(b"".join(c.frames) for c in (ana, bo, eve))
    assert secrets[3].encode() not in everything and secrets[4].encode() not in everything


def test_r8a_a_table_stored_before_fair_deals_commits_when_its_match_starts():
    """A waiting table stored by an older server has no prepared secret: its match still
    gets seed material, committed to before any card, and a record that proves it."""
    state: TableState = new_table("t1", "ana", "Ana", CreateTable(id=1), 0.0, 1.0)
    state.next_seed = None
    state.seats = [SeatState(kind="human", name="Ana", player="ana", connected=True),
                   *[SeatState(kind="bot", name=f"B{i}", level="random") for i in (1, 2, 3)]]
    work = Work(state, None)
    begin_match(work)
    first = work.events[0].payload
    assert type(first).__name__ == "DealsCommitted"
    assert state.match_seed is not None and state.next_seed is not None
    assert first.commitment == state.match_seed.commitment      # type: ignore[union-attr]
    match = work.match
    assert match is not None and match.seed == fair.derive_seed(
        state.match_seed.secret, state.match_seed.salt, [None] * 4)


async def test_r8a_a_retried_command_keeps_the_contribution_that_was_applied(connect):
    """Issue 33, finding 5 (docs/PROTOCOL.md, "Fair deals"): a ``start`` resent after a lost
    answer, with the same id as the protocol asks, gets the first reply and is not applied
    again, so the match is dealt from the first contribution whatever the retry carries;
    resent as a new command it is refused and changes nothing. A seated player's ``join``
    during the match is taken as a contribution to the next match (the rematch)."""
    ana = await connect("Ana")
    table = (await ana.call("create_table", options=OPTIONS))["table"]
    first = await ana.request("start", cid=77, table=table, contribution="a1")
    assert first["type"] == "ok"
    again = await ana.request("start", cid=77, table=table, contribution="b2")
    assert again == first                                  # the original reply
    fresh = await ana.request("start", table=table, contribution="c3")
    assert fresh["type"] == "error" and fresh["code"] == "not_ready"
    await ana.wait_event(lambda e: e["type"] == "hand_dealt")
    assert [p["contributions"] for p in ana.payloads("deals_committed")] == [
        ["a1", None, None, None]]
    # A join while seated, during the match: for the next match, not this one.
    assert (await ana.call("join", table=table, contribution="d4"))["seat"] == 0
    over = await autoplay(ana, table, 0)
    assert over is not None and over["record"]["fair"]["contributions"] == ["a1", None, None,
                                                                             None]
    await ana.call("rematch", table=table)
    await ana.wait_event(lambda e: e["type"] == "deals_committed" and e["match"] == 2)
    assert [p["contributions"] for p in ana.payloads("deals_committed")] == [
        ["a1", None, None, None], ["d4", None, None, None]]
