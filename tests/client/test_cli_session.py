"""A restarted client takes its seat back (issue 6 and 7): the session survives the client."""

from __future__ import annotations

import re

from .conftest import Cli, ServerProcess

CREATED = re.compile(r"Created table (t[0-9a-f]+)")


def start_table(cli: Cli) -> str:
    cli.expect("Type `help`")
    cli.send("create deals=1 delay=0")
    table = str(cli.expect(CREATED).group(1))
    cli.send("bots random")
    cli.expect("Seat 3: a random bot sits down")
    cli.send("start")
    cli.expect("The match starts!")
    cli.wait_turn()
    return table


def test_a_restarted_client_takes_its_seat_back(server_proc: ServerProcess, spawn) -> None:
    first = spawn("--server", server_proc.url, "--name", "Ana")
    table = start_table(first)
    first.child.terminate(force=True)          # the terminal dies mid-match
    again = spawn("--server", server_proc.url, "--name", "Ana")
    again.expect(re.escape(f"Took back your seat at {table}"))
    again.send("show")                         # the table as the snapshot rebuilt it
    hand = again.wait_turn()                   # nobody played for us: still our turn
    assert len(hand) == 9
    again.send("1")
    again.expect(re.escape(f"you play {hand[0]}"))
    again.quit()


def test_new_session_flag_starts_afresh(server_proc: ServerProcess, spawn) -> None:
    first = spawn("--server", server_proc.url, "--name", "Bo")
    start_table(first)
    first.quit()
    fresh = spawn("--server", server_proc.url, "--name", "Bo", "--new-session")
    fresh.expect("Type `help`")
    assert "Took back" not in fresh.child.before
    fresh.quit()
