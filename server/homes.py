"""Telling a player where their table is run (issue 32, protocol 1.6 ``home``).

With several processes on one store, a table's commands are applied by the process that
runs it (its lease holder) and delivered by every process that holds one of its viewers:
each viewer connected elsewhere makes a second process hear every commit, copy it and send
it on. Measured (BENCHMARKS.md, fifth session), players spread over two processes cost
1.47-1.57x one process's CPU per command; kept on their table's process, 1.12-1.14x.
So a connection that watches one table, run by another process that advertises its
address, is told that address after the table's head; the client reconnects there and
resumes. A connection at several tables is told nothing: no process is home to all.
"""

from __future__ import annotations

import protocol
from protocol.session import Send
from server.store import StorageUnavailable

from .cluster import Cluster
from .wire import Client


async def tell_home(cluster: Cluster, client: Client, table_id: str, *,
                    owned: bool) -> bool:
    """Send ``home`` to ``client`` if ``table_id`` is its only table and another live
    process runs it; True if it was sent. ``owned``: this process runs it (nothing to
    read: a join at a table made here costs no store call). Best effort: a store that
    does not answer tells nothing (the player plays on where they are)."""
    if owned or not cluster.settings.advertise_url or client.tables != {table_id}:
        return False
    try:
        url = await home_elsewhere(cluster, table_id)
    except (StorageUnavailable, ValueError):     # ValueError: a holder that is no id
        return False
    if url is None or not client.open:
        return False
    client.send(Send(protocol.encode(protocol.Home(table=table_id, url=url))))
    return True


async def home_elsewhere(cluster: Cluster, table_id: str) -> str | None:
    """The address of the live process that runs this table when it is not this one
    (read from the store: its lease's holder, and the address that holder advertises at
    each beat); None when it is this one, or its holder does not beat or advertise."""
    home = await cluster.store.home_of(table_id)
    if home is None:
        return None
    process, url = home
    if process == cluster.process or process not in cluster.live \
            or url == cluster.settings.advertise_url:
        return None
    return url
