"""GET /metrics (issue 30, item 4): a real server's Prometheus figures move with its work,
and JSON log lines name their table and player."""

from __future__ import annotations

import asyncio
import io
import json
import logging

from prometheus_client.parser import text_string_to_metric_families

from server import logs
from server.app import running
from tests.server.conftest import server_settings

from .netclient import NetClient
from .players import autoplay, four_humans


async def scrape(port: int) -> tuple[str, dict[tuple[str, frozenset[tuple[str, str]]], float]]:
    """The /metrics page's content type and its samples, by name and labels."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                 "Connection: close\r\n\r\n".encode())
    await writer.drain()
    raw = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.split()[1] == b"200", head
    ctype = next(line.split(b":", 1)[1].strip().decode() for line in head.split(b"\r\n")
                 if line.lower().startswith(b"content-type:"))
    samples = {}
    for family in text_string_to_metric_families(body.decode()):
        for s in family.samples:
            samples[s.name, frozenset(s.labels.items())] = s.value
    return ctype, samples


def value(samples: dict, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def total(samples: dict, name: str, **labels: str) -> float:
    """The sum over every label set that includes ``labels``."""
    want = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and want <= ls)


async def test_metrics_move_with_commands_tables_store_and_bots(redis_url, key_prefix,
                                                                redis_client):
    async with running(server_settings(redis_url, key_prefix)) as srv:
        url = f"ws://127.0.0.1:{srv.port}"
        ctype, before = await scrape(srv.port)
        assert ctype.startswith("text/plain") and "version=" in ctype
        assert value(before, "aluette_commands_total", type="create_table", outcome="ok") == 0
        assert value(before, "process_resident_memory_bytes") > 0

        clients = [await NetClient.open(url, f"P{i}") for i in range(4)]
        table = await four_humans(clients, start=False)
        bad = await clients[0].request("play", table=table, card="3o")   # not playing yet
        assert bad["type"] == "error"
        _, waiting = await scrape(srv.port)
        assert value(waiting, "aluette_tables", status="waiting", phase="none") == 1
        await clients[0].call("start", table=table)
        await asyncio.gather(*(autoplay(c, table, i, max_plays=2)
                               for i, c in enumerate(clients)))
        _, after = await scrape(srv.port)

        assert value(after, "aluette_commands_total", type="create_table", outcome="ok") == 1
        assert value(after, "aluette_commands_total", type="join", outcome="ok") == 3
        assert value(after, "aluette_commands_total", type="play", outcome="ok") == 8
        assert value(after, "aluette_commands_total", type="play",
                     outcome=bad["code"]) == 1
        assert value(after, "aluette_command_seconds_count", type="play") == 9
        assert value(after, "aluette_command_seconds_sum", type="play") > 0
        assert value(after, "aluette_connections") == 5      # and the scrape's own
        assert value(after, "aluette_clients") == 4
        assert value(after, "aluette_sessions") == 4
        assert total(after, "aluette_tables", status="playing") == 1
        assert value(after, "aluette_tables_owned") == 1
        assert value(after, "aluette_store_call_seconds_count", op="commit") >= 8
        assert value(after, "aluette_store_failures_total", op="commit") == 0
        assert value(after, "aluette_tasks") > 0
        assert value(after, "aluette_uptime_seconds") > 0

        # A returning client resumes with a replay: counted, with the events it replayed.
        token = clients[0].welcome["session"]
        last = max(clients[0].seqs(table)) - 3
        await clients[0].close()
        back = await NetClient.open(url, "P0", token=token, ids=clients[0].ids)
        resumed = await back.call("resume", token=back.welcome["session"], table=table,
                                  last_seq=last)
        assert resumed["replayed"] >= 3       # and what happened since it left
        _, resumes = await scrape(srv.port)
        assert value(resumes, "aluette_resumes_total", kind="replay") == 1
        assert value(resumes, "aluette_resume_replayed_events_total") == resumed["replayed"]

        # The loop lag histogram is fed by the sampler's every sample.
        seen = value(resumes, "aluette_loop_lag_seconds_count")
        srv.hub.lag.record(40.0)
        _, lagged = await scrape(srv.port)
        assert value(lagged, "aluette_loop_lag_seconds_count") >= seen + 1
        assert value(lagged, "aluette_loop_lag_seconds_bucket", le="0.05") >= 1
        for c in [back, *clients[1:]]:
            await c.close()


async def test_bot_decisions_and_refusals_are_counted(redis_url, key_prefix, redis_client):
    settings = server_settings(redis_url, key_prefix, max_connections_per_address=2)
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
        _, samples = await scrape(srv.port)
        assert value(samples, "aluette_bot_decision_seconds_count") >= 1
        assert value(samples, "aluette_bot_timeouts_total") == 0

        # A third connection from this address is over --max-connections-per-address.
        second = await NetClient.open(url, "Bea")
        try:
            third = await NetClient.open(url, "Cid")
        except Exception:
            third = None
        if third is not None:
            await asyncio.wait_for(third.closed.wait(), 10)
        _, samples = await scrape(srv.port)
        assert value(samples, "aluette_admission_refusals_total",
                     reason="address_connections") == 1
        await second.close()
        await ana.close()


async def test_store_failures_are_counted(own_valkey, key_prefix):
    async with running(server_settings(own_valkey.connection_url, key_prefix)) as srv:
        ana = await NetClient.open(f"ws://127.0.0.1:{srv.port}", "Ana")
        own_valkey.stop()
        reply = await ana.request("create_table", options={"deals": 1})
        assert reply["type"] == "error" and reply["code"] == "storage_unavailable"
        _, samples = await scrape(srv.port)
        assert total(samples, "aluette_store_failures_total") >= 1
        assert value(samples, "aluette_commands_total", type="create_table",
                     outcome="storage_unavailable") == 1
        await ana.close()


def test_json_log_lines_name_their_table_and_player():
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logs.JsonFormatter())
    log = logging.getLogger("aluette.test.jsonlog")
    log.addHandler(handler)
    log.propagate = False
    try:
        token = logs.bind(player="p1", table="t9")
        log.warning("a seat went quiet: %s", 2)
        logs.unbind(token)
        log.error("no context", extra={"table": "t3"})
        try:
            raise ValueError("boom")
        except ValueError:
            log.exception("failed")
    finally:
        log.removeHandler(handler)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(lines) == 3
    assert lines[0]["msg"] == "a seat went quiet: 2" and lines[0]["level"] == "warning"
    assert (lines[0]["table"], lines[0]["player"]) == ("t9", "p1")
    assert lines[1]["table"] == "t3" and "player" not in lines[1]
    assert "ValueError: boom" in lines[2]["exc"]
