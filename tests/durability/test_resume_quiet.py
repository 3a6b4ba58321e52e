"""A resume that replays nothing is followed by nothing but news (issue 33, finding 4).

docs/PROTOCOL.md: a head (``table_changed`` + ``snapshot`` at the viewer's own seq) comes
after a snapshot resume, or to repair a viewer the server could not keep in sequence. An
independent client saw heads right after resumes that had replayed nothing, after a
restart whose last play before the kill had been applied: 4 of 5 viewers, in 5 of 6 runs.
"""

from __future__ import annotations

import asyncio

from tests.server.netclient import NetClient
from tests.server.players import autoplay, four_humans

from .conftest import reconnect


def _heads_after(client: NetClient, start: int) -> list[dict]:
    return [e for e in client.events[start:]
            if e.get("event") and e["event"]["type"] == "snapshot"]


async def test_no_head_after_a_restart_for_viewers_who_missed_nothing(server_process):
    proc = await server_process()
    url = server_process.url
    clients = [await NetClient.open(url, f"P{i}") for i in range(4)]
    table = await four_humans(clients, deals=2)
    watcher = await NetClient.open(url, "Watcher")
    await watcher.call("spectate", table=table)
    await asyncio.gather(*(autoplay(c, table, i, max_plays=3) for i, c in enumerate(clients)))
    # Every viewer has every event of the last play (its ack came, the events after it).
    for c in [*clients, watcher]:
        await c.wait_until(lambda c=c: sum(1 for e in c.events if e.get("event")
                                          and e["event"]["type"] == "card_played") == 12)
    await proc.kill()
    for c in [*clients, watcher]:
        await asyncio.wait_for(c.closed.wait(), 10)
    await server_process()                      # a new process, same port, same store
    marks = [len(c.events) for c in [*clients, watcher]]
    back = await asyncio.gather(*(reconnect(c, url) for c in [*clients, watcher]))
    # The seats' return is news (player_connected, table_changed): let it all arrive.
    for b in back:
        await b.call("ping")
    for b, mark in zip(back, marks, strict=True):
        assert _heads_after(b, mark) == [], b.welcome["name"]
    for b in back:
        await b.close()
