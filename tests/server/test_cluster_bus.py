"""The event bus between processes (issue 11): a process drops its own commits unread.

Every commit publishes the document and the events on the table's channel for the other
processes; the process that made it has delivered them already. At full speed a lone
process spent 15% of its loop taking its own messages back through the table's queue and
lock; it now reads only the sender, the message's first element.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import msgpack

from server.app import Running, running
from server.store.bus import sender_of

from .conftest import server_settings
from .netclient import NetClient


def test_the_sender_is_read_without_the_rest_of_the_message() -> None:
    doc = b"\x00" * 5000
    message = msgpack.packb(["a1b2c3d4e5f6", 7, doc, [[1, None, b"event"]], 1.5])
    assert sender_of(message) == "a1b2c3d4e5f6"
    closed = msgpack.packb(["a1b2c3d4e5f6", -1, b"", [], 2.0])      # a table swept
    assert sender_of(closed) == "a1b2c3d4e5f6"


def test_a_message_that_is_not_ours_to_read_is_passed_on() -> None:
    assert sender_of(b"") is None
    assert sender_of(b"\xc1") is None                  # never valid msgpack
    assert sender_of(msgpack.packb({"not": "a list"})) is None
    assert sender_of(msgpack.packb([42, 1])) is None   # a sender that is not a process id


# --------------------------------------------------------------- subscriptions (issue 32)
# The bus subscribes to the channel of every table its process holds. It used to compare
# the whole held set with the subscribed one at every table made or let go: two set
# differences over every table held (an hour after their last play), 2.6% of a process at
# full pace. It now looks only at the tables watched or let go since its last look; these
# tests hold what it must still do, against a real server and store.


async def _subscribers(redis_client: Any, channel: str) -> int:
    reply = await redis_client.execute_command("PUBSUB", "SHARDNUMSUB", channel)
    return int(reply[1])


async def _until_subscribers(redis_client: Any, channels: list[str], want: int) -> None:
    """Wait, within 10 s, until each channel has ``want`` subscribers (the bus subscribes
    on its own task; the store's count says when it has, and has no event for it)."""
    async with asyncio.timeout(10):
        counts = [want] * len(channels)
        while [await _subscribers(redis_client, c) for c in channels] != counts:  # noqa: ASYNC110
            await asyncio.sleep(0.02)


@contextlib.asynccontextmanager
async def _three_held_tables(redis_url: str, key_prefix: str, redis_client: Any
                             ) -> AsyncIterator[tuple[Running, list[str], list[str]]]:
    """A server holding three tables, each heard on its channel: the server, the tables'
    ids and their channels."""
    async with running(server_settings(redis_url, key_prefix)) as srv:
        ana = await NetClient.open(f"ws://127.0.0.1:{srv.port}", "Ana")
        try:
            ids = [(await ana.call("create_table", options={"deals": 1}))["table"]
                   for _ in range(3)]
            channels = [srv.hub.store.keys.events(t) for t in ids]
            await _until_subscribers(redis_client, channels, 1)
            yield srv, ids, channels
        finally:
            await ana.close()


async def test_held_tables_are_heard_and_a_table_let_go_is_not(
        redis_url, key_prefix, redis_client) -> None:
    async with _three_held_tables(redis_url, key_prefix, redis_client) as (srv, ids, channels):
        hub = srv.hub
        hub.lobby.registry.let_go(hub.tables[ids[0]], tell=False)
        await _until_subscribers(redis_client, channels[:1], 0)
        assert [await _subscribers(redis_client, c) for c in channels[1:]] == [1, 1]
        # A table watched and let go before the bus looks is neither, and the bus's
        # bookkeeping says so (no await between: the bus cannot look meanwhile).
        cluster = hub.cluster
        cluster.watch("passing")
        cluster.unwatch("passing")
        assert cluster._subscriptions_due() == ([], [])


async def test_after_its_connection_is_lost_the_bus_hears_every_held_table_again(
        redis_url, key_prefix, redis_client) -> None:
    async with _three_held_tables(redis_url, key_prefix, redis_client) as (_, _, channels):
        # The bus's own connection: the one pub/sub client holding these three (the
        # store may serve other clients; only this one is closed).
        listed = (await redis_client.execute_command("CLIENT", "LIST", "TYPE", "pubsub"))
        text = listed.decode() if isinstance(listed, bytes) else listed
        bus = [dict(f.split("=", 1) for f in line.split() if "=" in f)
               for line in text.splitlines()]
        bus = [c for c in bus if c.get("ssub") == "3"]
        assert len(bus) == 1, bus
        await redis_client.execute_command("CLIENT", "KILL", "ID", bus[0]["id"])
        await _until_subscribers(redis_client, channels, 0)
        # Every held table, not only those made since: each was heard before the loss.
        await _until_subscribers(redis_client, channels, 1)
