"""The client survives the server dying mid-deal (kill -9) and coming back on the same port.

It reconnects by itself with backoff, says hello with its newest (rotated) session token,
resumes the table from its last sequence number, tells the user, and the deal goes on.
"""

from __future__ import annotations

import re

from .conftest import ServerProcess, plain


def test_reconnects_after_the_server_is_killed(server_proc: ServerProcess, spawn) -> None:
    ana = spawn("--server", server_proc.url, "--name", "Ana")
    ana.expect("Type `help`")
    ana.send("create deals=1 delay=0")
    ana.expect(r"Created table (t[0-9a-f]+)")
    ana.send("bots random")
    ana.expect("Seat 3: a random bot sits down")
    ana.send("start")
    played = []
    for turn in range(9):
        hand = ana.wait_turn()
        if turn == 3:
            # Mid-deal, while it is our turn: the server dies without a goodbye ...
            server_proc.kill()
            ana.expect("Connection to the server lost; reconnecting")
            # ... and comes back on the same port with the same Redis.
            server_proc.start()
            ana.expect("Reconnected to the server; resuming your tables", timeout=30)
            hand_after = ana.wait_turn()          # the table is shown again, same hand
            assert hand_after == hand
        card = hand[0]
        ana.send(card)
        ana.expect(re.escape(f"you play {card}"))
        played.append(card)
    ana.expect(r"Match over: ")
    out = plain(ana.output)
    assert out.count("Reconnected to the server") == 1
    assert re.search(r"Resumed table t[0-9a-f]+ \((\d+ missed events replayed|from a fresh "
                     r"snapshot)\)", out)
    assert len(set(played)) == 9
    ana.quit()


def test_unreachable_server_is_reported(spawn) -> None:
    cli = spawn("--server", "ws://127.0.0.1:9", "--name", "Ana")
    cli.expect("cannot connect to ws://127.0.0.1:9")
    cli.child.expect("\\$|$", timeout=5)
    cli.child.wait()
    assert cli.child.exitstatus == 1
