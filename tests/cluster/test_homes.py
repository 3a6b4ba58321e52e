"""A table's home (issue 32, protocol 1.6 ``home``): a player connected to a process that
does not run their table is told the address of the one that does, the terminal client
moves there, and the process left behind stops hearing the table.

Why: players of one table spread over two processes made both processes pay for every
commit (1.47-1.57x one process's CPU per command, BENCHMARKS.md); kept on the table's
process, 1.12-1.14x. Real processes, one real store.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import protocol
from client_cli.connection import Connection
from tests.durability.conftest import free_port
from tests.server.netclient import NetClient
from tests.server.test_health import http_get

from .conftest import Fleet, registered
from .test_processes import owner_of


async def advertised(fleet: Fleet, n: int) -> None:
    """``n`` processes, each advertising the URL it is reached at."""
    for _ in range(n):
        port = free_port()
        await fleet.start("--advertise-url", f"ws://127.0.0.1:{port}", port=port)


async def homes_after_a_ping(client: NetClient) -> list[dict[str, Any]]:
    """The ``home`` messages received so far. A connection's commands are carried out in
    order and ``home`` goes out before the next one starts, so what came before the pong
    is all there is to come for the commands before it."""
    await client.request("ping")
    return [m for m in client.messages if m["type"] == "home"]


async def health(port: int) -> dict[str, Any]:
    status, body = await http_get(port, "/healthz")
    assert status == 200
    return body


async def test_a_player_at_a_table_run_elsewhere_is_told_its_home(fleet: Fleet):
    await advertised(fleet, 2)
    ana = await NetClient.open(fleet.url(0), "Ana")
    table = (await ana.call("create_table", options={"deals": 1}))["table"]
    # The creator's process runs the table: nothing to tell.
    assert await homes_after_a_ping(ana) == []

    bob = await NetClient.open(fleet.url(1), "Bob")
    await bob.call("join", table=table, seat=1)
    homes = await homes_after_a_ping(bob)
    assert homes == [{"type": "home", "table": table, "url": fleet.url(0)}]
    # After the head, never before it: the head is the first thing a join's viewer reads.
    kinds = [m["type"] if m["type"] != "event" else m["event"]["type"]
             for m in bob.messages]
    assert kinds.index("home") > kinds.index("table_changed")

    cy = await NetClient.open(fleet.url(1), "Cy")        # a spectator too
    await cy.call("spectate", table=table)
    assert [h["url"] for h in await homes_after_a_ping(cy)] == [fleet.url(0)]

    # A connection at two tables run by two processes has no one home: told nothing.
    dan = await NetClient.open(fleet.url(1), "Dan")
    await dan.call("create_table", options={"deals": 1})
    await dan.call("spectate", table=table)
    assert await homes_after_a_ping(dan) == []

    # A resume on the wrong process (after a drop, say) is told too.
    bob2 = await NetClient.open(fleet.url(1), "Bob", token=bob.welcome["session"])
    await bob2.call("resume", token=bob2.welcome["session"], table=table, last_seq=0)
    assert [h["url"] for h in await homes_after_a_ping(bob2)] == [fleet.url(0)]
    for c in (ana, bob, bob2, cy, dan):
        await c.close()


async def test_nobody_is_told_a_home_where_no_address_is_advertised(fleet: Fleet):
    for _ in range(2):
        await fleet.start()
    ana = await NetClient.open(fleet.url(0), "Ana")
    table = (await ana.call("create_table", options={"deals": 1}))["table"]
    bob = await NetClient.open(fleet.url(1), "Bob")
    await bob.call("join", table=table, seat=1)
    assert await homes_after_a_ping(bob) == []
    for c in (ana, bob):
        await c.close()


async def test_the_client_moves_home_and_plays_there_and_the_other_process_rests(
        fleet: Fleet):
    await advertised(fleet, 2)
    ana = await NetClient.open(fleet.url(0), "Ana")
    table = (await ana.call("create_table", options={
        "deals": 1, "bot_delay_ms": 0, "signals": "off"}))["table"]
    news: list[tuple[str, str]] = []
    changed = asyncio.Event()

    def status(kind: str, text: str) -> None:
        news.append((kind, text))
        changed.set()

    async def until(done: Callable[[], bool]) -> None:
        """Until ``done()``, looked at after each event or news of Bob's connection."""
        async with asyncio.timeout(15):
            while not done():
                changed.clear()
                await changed.wait()

    bob = Connection(fleet.url(1), "Bob", on_status=status,
                     on_event=lambda *_: changed.set())
    await bob.start()
    try:
        await bob.call(protocol.Join, table=table, seat=1)
        # Moved: the resume on the new connection brings a head (an event).
        await until(lambda: bob.home == fleet.url(0) and bob.online)
        # The process Bob left holds no connection of his and no longer hears the table
        # (the cost, not a rule).
        async with asyncio.timeout(15):
            while True:
                left = await health(fleet.ports[1])
                if left["connections"] == 0 and left["resting_tables"] == 1:
                    break
                await asyncio.sleep(0.1)
        home = await health(fleet.ports[0])
        assert home["connections"] == 2          # Ana and Bob, both on the table's process
        # A move is not a lost connection: the person is told nothing of it.
        assert not [k for k, _ in news if k in ("lost", "reconnected")]

        # The match plays on at Bob's new connection: R8, his hand of nine.
        await ana.call("start", table=table)
        await until(lambda: (v := bob.tables[table].view) is not None and len(v.hand) == 9)
        view = bob.tables[table].view
        assert view is not None and bob.tables[table].seat == 1

        # Back on the process he left (a client that ignores ``home``): the resting table
        # wakes, reads what it missed, and his snapshot holds his nine cards.
        again = await NetClient.open(fleet.url(1), "Bob", token=bob.token)
        ok = await again.call("resume", token=again.welcome["session"], table=table,
                              last_seq=2**53 - 1)
        assert ok["snapshot"] is True
        snap = again.payloads("snapshot")[-1]
        assert sorted(snap["view"]["hand"]) == sorted(str(c) for c in view.hand)
        assert (await health(fleet.ports[1]))["resting_tables"] == 0
        await again.close()
    finally:
        await bob.close()
        await ana.close()


async def test_players_matched_on_a_process_that_does_not_run_their_table_are_told(
        fleet: Fleet, redis_client: Any):
    """Play now (issue 27) seats players wherever they are connected; those on a process
    other than the table's are told its home after the ``matched`` and its head, the
    others nothing."""
    for _ in range(2):
        port = free_port()
        await fleet.start("--advertise-url", f"ws://127.0.0.1:{port}", "--queue-tick", "0.05",
                          port=port)
    clients = [await NetClient.open(fleet.url(i % 2), f"Q{i}") for i in range(4)]
    try:
        await registered(fleet, redis_client, clients, "q")
        await asyncio.gather(*(c.call("queue", rated=True, options={"deals": 1})
                               for c in clients))
        for c in clients:
            await c.wait_until(lambda c=c: any(m["type"] == "matched" for m in c.messages),
                               timeout=15)
        (table,) = {m["table"] for c in clients for m in c.messages if m["type"] == "matched"}
        owner = await owner_of(fleet, table)
        # The matchmaker's news reaches a connection outside its command loop, so the
        # home is waited for; the table's own process tells its players first (it made
        # the table), so by then it has told them nothing, or would have.
        elsewhere = [c for i, c in enumerate(clients) if i % 2 != owner]
        for c in elsewhere:
            await c.wait_until(lambda c=c: any(m["type"] == "home" for m in c.messages),
                               timeout=15)
            homes = await homes_after_a_ping(c)
            assert homes == [{"type": "home", "table": table, "url": fleet.url(owner)}]
            kinds = [m["type"] for m in c.messages]
            assert kinds.index("home") > kinds.index("matched")
        for c in clients:
            if c not in elsewhere:
                assert await homes_after_a_ping(c) == []
    finally:
        for c in clients:
            await c.close()
