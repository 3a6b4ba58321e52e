"""``--event-loop uvloop`` (issue 32; server/loops.py): the server on libuv's event loop.

The server's own code touches the loop's transports directly in a few places (the write
buffer bound of a slow reader, the event bus's connection taken over by a protocol of our
own, the keepalive of a silent peer): those are where another loop could behave
differently, so their tests run again here, on uvloop, server and clients alike (the loop
is chosen by ``pytest_asyncio_loop_factories`` in this folder's conftest.py), beside whole
matches played over the network. Then the real command line: a server process asked for
uvloop runs on it, and one asked for it where it cannot be imported runs on asyncio's and
says why.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator

import pytest

from server.config import parse_settings
from tests.durability.conftest import ServerProcess, free_port

from ..netclient import NetClient
from ..players import autoplay

# The same tests, collected again in this module: here they run on uvloop.
from ..test_cluster_bus import (  # noqa: F401
    test_after_its_connection_is_lost_the_bus_hears_every_held_table_again,
    test_held_tables_are_heard_and_a_table_let_go_is_not,
)
from ..test_lifecycle import test_a_slow_reader_is_dropped_and_resumes_whole  # noqa: F401
from ..test_play import (  # noqa: F401
    test_bad_moves_are_refused_with_their_code_and_change_nothing,
    test_four_humans_play_a_whole_match_and_the_stored_record_verifies,
    test_spectator_sees_every_public_event_and_no_hidden_card_or_signal,
)
from ..test_wire_writes import (  # noqa: F401
    test_a_silent_peer_that_never_answers_the_ping_is_dropped,
)


async def test_these_tests_run_on_uvloop() -> None:
    import uvloop

    assert isinstance(asyncio.get_running_loop(), uvloop.Loop)


def test_an_event_loop_the_server_does_not_know_is_refused(capsys) -> None:
    with pytest.raises(SystemExit):
        parse_settings(["--event-loop", "tokio"])
    assert "--event-loop must be asyncio or uvloop, not 'tokio'" in capsys.readouterr().err
    assert parse_settings([]).event_loop == "asyncio"
    assert parse_settings([], {"ALUETTE_EVENT_LOOP": "uvloop"}).event_loop == "uvloop"


async def bots_play_a_match(url: str) -> dict:  # type: ignore[type-arg]
    """A one-deal table of three bots (in the server's bot worker) and a human who plays
    every turn: the match it ends with."""
    ana = await NetClient.open(url, "Ana")
    try:
        table = (await ana.call("create_table", options={"deals": 1, "bot_delay_ms": 0}))[
            "table"]
        for seat in (1, 2, 3):
            await ana.call("add_bot", table=table, seat=seat, level="random")
        await ana.call("start", table=table)
        over = await autoplay(ana, table, 0)
        assert over is not None
        return over
    finally:
        await ana.close()


@contextlib.asynccontextmanager
async def server_process(*args: str) -> AsyncIterator[tuple[str, str]]:
    """``python -m server.app ARGS`` on a free port (tests/durability's ServerProcess): its
    line saying where it listens and on which loop, and everything it said up to it. It
    must stop cleanly on SIGTERM (killed if it does not)."""
    proc = ServerProcess(["--port", str(free_port()), *args])
    await proc.start()
    try:
        yield proc.output[-1], "".join(proc.output)
        assert await proc.terminate() == 0
    finally:
        if proc.proc is not None and proc.proc.returncode is None:
            proc.proc.kill()
            await proc.proc.wait()


async def test_a_server_asked_for_uvloop_runs_a_match_on_it(redis_url, key_prefix,
                                                           redis_client) -> None:
    async with server_process("--redis-url", redis_url, "--key-prefix", key_prefix,
                              "--bot-workers", "1", "--event-loop", "uvloop") as (line, _):
        assert "event loop: uvloop)" in line, line
        assert (await bots_play_a_match(line.split("listening on ")[1].split()[0]))["record"]


async def test_without_uvloop_the_server_says_so_and_runs_on_asyncio(
        redis_url, key_prefix, redis_client, tmp_path, monkeypatch) -> None:
    # An installation without the extra: here, a uvloop that cannot be imported.
    (tmp_path / "uvloop.py").write_text("raise ImportError('not installed here')\n")
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}:{':'.join(sys.path)}")
    async with server_process("--redis-url", redis_url, "--key-prefix", key_prefix,
                              "--bot-workers", "1", "--event-loop", "uvloop") as (line, said):
        assert "event loop: asyncio)" in line, line
        assert "uvloop cannot be imported (not installed here); running on asyncio's" in said
        assert (await bots_play_a_match(line.split("listening on ")[1].split()[0]))["record"]
