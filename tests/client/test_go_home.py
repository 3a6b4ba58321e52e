"""Where the client will not follow a ``home`` (protocol 1.6, issue 32): the move is a
server's hint, and a client must not let it send the session's token in clear, leave
for something that is not a websocket, bounce between addresses, or go back to an address
that could not be reached. (Following one, with real processes: tests/cluster/
test_homes.py.)"""

from __future__ import annotations

from client_cli.connection import Connection


async def test_a_home_that_would_downgrade_or_is_not_a_websocket_is_refused():
    conn = Connection("wss://cards.example/", "Ana")
    assert conn.go_home("ws://cards.example/?home=server2") is False     # token in clear
    assert conn.go_home("https://cards.example/?home=server2") is False
    assert conn.go_home("wss://cards.example/") is False                 # where we are
    conn._unreachable.add("wss://cards.example/?home=server3")
    assert conn.go_home("wss://cards.example/?home=server3") is False
    assert conn.home is None and not conn._tasks       # nothing begun


async def test_a_second_move_within_the_interval_is_refused():
    conn = Connection("ws://127.0.0.1:9/", "Ana")       # nothing listens: renew times out
    assert conn.go_home("ws://127.0.0.1:9/?home=1") is True
    assert conn.home == "ws://127.0.0.1:9/?home=1"
    assert conn.go_home("ws://127.0.0.1:9/?home=2") is False      # HOME_EVERY_S
    assert conn.home == "ws://127.0.0.1:9/?home=1"
    await conn.close()
