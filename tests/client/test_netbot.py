"""``aluette --bot``: bots that play over the network from their own seat's view.

Four network bots play a whole match (chanter on, so votes and discards too; risky signals)
against an in-process server; then a bot process joins a human's table through the console
script.
"""

from __future__ import annotations

import asyncio
import io
import re
from collections.abc import AsyncIterator
from typing import Any

import pexpect
import pytest
from rich.console import Console

from client_cli.netbot import NetBot
from server.app import Running, running
from server.config import Settings
from server.game.record import export_record, verify_record

from .conftest import BIN, Cli, ServerProcess, _Log, cli_env, plain


@pytest.fixture
async def inproc(redis_url: str, key_prefix: str, redis_client: Any) -> AsyncIterator[Running]:
    settings = Settings(host="127.0.0.1", port=0, redis_url=redis_url, key_prefix=key_prefix,
                        sweep_interval_s=3600, busy_lag_ms=0)
    async with running(settings) as srv:
        yield srv


def quiet_console() -> Console:
    return Console(file=io.StringIO(), width=200)


@pytest.mark.parametrize("level", ["random", "normal"])
async def test_four_network_bots_play_a_match(inproc: Running, level: str) -> None:
    url = f"ws://127.0.0.1:{inproc.port}"
    first = NetBot(url, level, "B0", quiet_console(), seed=1,
                   options={"deals": 2, "chanter": True, "signals": "risky",
                            "bot_delay_ms": 0, "auto_start": True})
    task0 = asyncio.create_task(first.run())
    async with asyncio.timeout(10):
        await first.seated.wait()
    assert first.table is not None
    others = [NetBot(url, level, f"B{i}", quiet_console(), table=first.table, seed=i)
              for i in (1, 2, 3)]
    tasks = [task0]
    for b in others:        # one after another: each has sent its contribution once seated
        tasks.append(asyncio.create_task(b.run()))
        async with asyncio.timeout(10):
            await b.seated.wait()
    async with asyncio.timeout(90):
        codes = await asyncio.gather(*tasks)
    assert codes == [0, 0, 0, 0]
    views = [b.conn.tables[first.table].view for b in (first, *others)]
    assert all(v is not None and v.phase == "match_over" for v in views)
    table = inproc.hub.tables[first.table]
    assert table.match is not None and table.match.over
    # Every bot's model ends where the server's match ended (R14).
    assert {tuple(v.points) for v in views if v} == {tuple(table.match.points)}
    assert all(s.kind == "human" for s in table.state.seats)   # nobody was replaced
    # ... and every seat says a program plays it (hello {bot: true}, protocol 1.5)
    assert [s.bot for s in table.info().seats] == [True] * 4
    record = export_record(table.match, ["B0", "B1", "B2", "B3"])
    summary = verify_record(record)
    assert summary["points"] == list(table.match.points)
    # R8a: each bot that sat down before the match started put a contribution of its own
    # into the seed (the last seat of an auto-start table starts the match as it sits, so
    # it has none), and each bot's model found the revealed record proves the deals.
    seed = table.state.match_seed
    assert seed is not None
    contributions = seed.contributions
    seats = [b.conn.tables[first.table].seat for b in (first, *others)]
    assert seats == [0, 1, 2, 3]
    assert all(contributions[s] is not None for s in range(3)), contributions
    assert contributions[3] is None
    assert len(set(contributions[:3])) == 3
    for b in (first, *others):
        m = b.conn.tables[first.table]
        assert m.fair_note is not None and m.fair_note[0], m.fair_note
        assert m.fair_note_of == "match_over"


def test_bot_process_joins_a_humans_table(server_proc: ServerProcess, spawn) -> None:
    ana = spawn("--server", server_proc.url, "--name", "Ana")
    ana.expect("Type `help`")
    ana.send("create deals=1 delay=0")
    table = ana.expect(r"Created table (t[0-9a-f]+)").group(1)
    bot = Cli(pexpect.spawn(str(BIN / "aluette"),
                            ["--server", server_proc.url, "--bot", "easy", "--table", table],
                            env=cli_env(), dimensions=(60, 200), encoding="utf-8", timeout=20))
    bot.child.logfile_read = _Log()
    bot.expect(rf"easy bot sits at seat 1 of table {table}")
    ana.expect("Seat 1: easy bot sits down")
    ana.send("bots random")
    ana.expect("Seat 3: a random bot sits down")
    ana.send("start")
    for _ in range(9):
        hand = ana.wait_turn()
        ana.send(hand[0])
        ana.expect(re.escape(f"you play {hand[0]}"))
    ana.expect(r"Match over")
    bot.expect(r"Match over")
    bot.child.expect(pexpect.EOF, timeout=10)
    bot.child.wait()
    assert bot.child.exitstatus == 0, plain(bot.output)[-3000:]
    ana.quit()


async def test_a_network_bot_whose_hand_has_not_arrived_waits_instead_of_stopping() -> None:
    """Issue 12, item 5: ``aluette --bot`` caught between ``deal_started`` and
    ``hand_dealt`` (its turn, no card yet) must neither crash nor send anything; once the
    hand is there it acts."""
    from client_cli.model import TableModel
    from server.game import Match, Options
    from server.game import view as seat_view

    m, _ = Match.new(Options(deals=1, first_dealer=3), 4)
    v = seat_view(m, 0)
    assert v.to_act == 0
    v.hand = []
    bot = NetBot("ws://127.0.0.1:9", "normal", "B", quiet_console(), seed=0)
    model = TableModel(table="t", seat=0, view=v)
    assert model.my_turn
    await bot._act(model)                 # no exception, and no command sent (no server)
    assert bot._acted is None             # it will look again after the next event


def _expert_lead(think_s: float | None) -> tuple[NetBot, dict[str, Any]]:
    from server.game import Match, Options
    from server.game import view as seat_view

    m, _ = Match.new(Options(deals=1, first_dealer=3), 0)
    assert m.to_act is not None
    bot = NetBot("ws://127.0.0.1:9", "expert", "B", quiet_console(), seed=0, think_s=think_s)
    return bot, seat_view(m, m.to_act)


def test_a_network_expert_keeps_the_servers_cap_on_thinking(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 12 (decision time): ``aluette --bot expert`` caps its search as a server's bots
    do (``--think-ms``, 80 by default): out of time after its first worlds, it plays the
    best card found so far. The search's clock is replaced, so nothing sleeps."""
    from client_cli.main import parse_args
    from server.bots import expert

    readings: list[float] = []

    def late() -> float:          # the first reading starts the clock; every later one is late
        readings.append(0.0)
        return 0.0 if len(readings) == 1 else 10.0

    monkeypatch.setattr(expert, "clock", late)
    assert parse_args(["--bot", "expert"]).think_ms == 80.0
    bot, v = _expert_lead(parse_args(["--bot", "expert"]).think_ms / 1000.0)
    assert bot.choose(v).card in v.hand          # type: ignore[union-attr]
    # Started, then checked once a world from MIN_WORLDS on: stopped at the first check.
    assert len(readings) == 2


def test_a_network_bot_told_no_cap_never_reads_the_clock(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from client_cli.main import parse_args
    from server.bots import expert

    def never() -> float:
        raise AssertionError("the clock was read without a cap")

    monkeypatch.setattr(expert, "clock", never)
    bot, v = _expert_lead(parse_args(["--bot", "expert", "--think-ms", "0"]).think_ms / 1000.0)
    assert bot.choose(v).card in v.hand          # type: ignore[union-attr]
    with pytest.raises(SystemExit):
        parse_args(["--bot", "expert", "--think-ms", "-1"])
