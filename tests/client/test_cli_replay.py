"""Issue 28, Builds 1 and 2, in the terminal client (a real ``aluette`` in a pty, a real
server subprocess): once a match is over, ``replay`` steps through it trick by trick with
every hand face up, back and forth, and ``q`` returns to the table; ``review`` follows the
expert's review of our seat and opens the replay with its marks."""

from __future__ import annotations

import re

from .conftest import ServerProcess, plain
from .test_cli_game import open_table


def test_replay_steps_through_the_finished_match(server_proc: ServerProcess, spawn) -> None:
    ana = spawn("--server", server_proc.url, "--name", "Ana")
    open_table(ana)
    ana.send("start")
    played = []
    for _ in range(9):
        hand = ana.wait_turn()
        ana.send(hand[-1])
        ana.expect(re.escape(f"you play {hand[-1]}"))
        played.append(hand[-1])
    ana.expect(re.escape("Type `r` to play again"))
    ana.send("replay")
    ana.expect(r"Deal 1 of 1 · dealt by .+? · as dealt\s+\[1/10\]")
    ana.expect("Hands, face up")
    ana.send("n")
    ana.expect(r"trick 1 of 9\s+\[2/10\]")
    ana.expect(r"Trick 1: ")
    ana.send("g 1 9")
    ana.expect(r"trick 9 of 9\s+\[10/10\]")
    ana.expect("Deal 1 is over")
    ana.expect("Match: team 0")
    ana.send("b")
    ana.expect(r"trick 8 of 9\s+\[9/10\]")
    ana.send("what")
    ana.expect(re.escape("b: back"))
    ana.send("q")
    ana.expect("Replay over: back to the table.")
    ana.send("help")                          # input is the client's own again
    ana.expect(re.escape("replay [MATCH]"))
    out = plain(ana.output)
    assert all(card in out for card in played)
    # The expert's review of Ana's own decisions, followed with a progress bar, then the
    # replay again with the costly plays marked.
    ana.send("review")
    ana.expect(r"The expert's review of you: \d+% of the decisions as the expert would",
               timeout=60)
    ana.expect(re.escape("The replay, with the costly plays marked"))
    ana.expect(r"Deal 1 of 1 · dealt by .+? · as dealt")
    ana.send("q")
    ana.expect("Replay over: back to the table.")
    ana.quit()


def test_a_casual_table_answers_hint_and_is_marked(server_proc: ServerProcess, spawn) -> None:
    """Issue 28, Build 3: `create hints=on`, then `hint` on our turn says what the expert
    would play; the table's header says hints are on and it is not rated."""
    ana = spawn("--server", server_proc.url, "--name", "Ana")
    open_table(ana, "deals=1 delay=0 hints=on")
    ana.send("start")
    ana.expect(re.escape("hints on, not rated"))
    hand = ana.wait_turn()
    ana.send("hint")
    found = ana.expect(r"The expert would choose (\S\S)")
    assert found.group(1) in hand
    ana.expect(r"Expected points for your team this deal: ")
    ana.quit()


async def _private_match(url: str) -> tuple[str, str]:
    """A private one-deal match played to its end by a protocol client: (table, code)."""
    from tests.server.netclient import NetClient
    from tests.server.players import autoplay

    ana = await NetClient.open(url, "Ana")
    try:
        created = await ana.call("create_table", private=True, options={
            "deals": 1, "bot_delay_ms": 0, "first_dealer": 3})
        await ana.call("start", table=created["table"])
        assert await autoplay(ana, created["table"], 0) is not None
    finally:
        await ana.close()
    return created["table"], created["code"]


def test_a_private_tables_replay_link_opens_in_the_terminal(server_proc: ServerProcess,
                                                            spawn) -> None:
    """Issue 28, Build 1: the browser's Share link of a private table's replay (its code in
    the fragment) opens in the terminal too; the bare table id does not."""
    import asyncio

    table, code = asyncio.run(_private_match(server_proc.url))
    eve = spawn("--server", server_proc.url, "--name", "Eve")
    eve.expect("Type `help`")
    eve.send(f"replay {table}")
    eve.expect(re.escape("There is no such table"))
    eve.send(f"replay http://127.0.0.1:{server_proc.port}/r/{table}/1#code={code}")
    eve.expect(r"Deal 1 of 1 · dealt by .+? · as dealt\s+\[1/10\]")
    eve.send("n")
    eve.expect(r"trick 1 of 9\s+\[2/10\]")
    eve.send("q")
    eve.expect("Replay over")
    eve.send(f"replay {table} 1 {code}")
    eve.expect(r"Deal 1 of 1 · dealt by .+? · as dealt")
    eve.send("q")
    eve.quit()
