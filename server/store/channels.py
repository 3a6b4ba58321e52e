"""The tables' channels, heard at the cost of parsing them (issue 32).

With several processes, each hears every commit another process makes of a table it holds:
one message per command. redis-py's ``PubSub.get_message`` pays, per message, a task
wake-up, a timeout set and cancelled, a retry wrapper and a dict: 7% of each of two
processes' CPU at full pace (``py-spy``, 2026-12-03), more than the commit's own decode.

:class:`Channels` connects the way every other connection of this process does (the same
connection class, so AUTH, TLS and the store's identity check are redis-py's and
``client.IdentityGuard``'s), then takes the connection's transport over with an asyncio
protocol: the bytes that arrive are parsed by hiredis (the parser redis-py itself uses)
in ``data_received``, and every message is handed to ``on_message`` right there, with no
task in between. ``on_message`` must not block: the tables' inboxes are bounded
(``server/table/follower.py``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from typing import Any

import hiredis
import redis.asyncio as aioredis

from server.store.line import replies_in

log = logging.getLogger(__name__)

#: What a message on a channel is called in a reply: sharded (SPUBLISH) or not.
_MESSAGES = (b"smessage", b"message")
#: ... and the store's confirmation that a subscription is in effect.
_SUBSCRIBED = (b"ssubscribe", b"subscribe")


class ChannelsLost(ConnectionError):
    """The connection closed, or the store refused a subscription."""


class _Hearing(asyncio.Protocol):
    """The taken-over connection: parse what arrives, hand each message on."""

    def __init__(self, on_message: Callable[[bytes, bytes], None],
                 on_subscribed: Callable[[bytes], None]) -> None:
        self.on_message = on_message
        self.on_subscribed = on_subscribed
        self.parser = hiredis.Reader()
        self.lost: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        try:
            for reply in replies_in(self.parser, data):
                if isinstance(reply, list) and len(reply) == 3 and reply[0] in _MESSAGES:
                    self.on_message(reply[1], reply[2])
                elif isinstance(reply, list) and len(reply) == 3 and reply[0] in _SUBSCRIBED:
                    self.on_subscribed(reply[1])
                elif isinstance(reply, hiredis.ReplyError):
                    self._lose(ChannelsLost(f"the store refused: {reply}"))
                    return
                # Anything else confirms an unsubscription: nothing to do.
        except hiredis.ProtocolError as exc:
            self._lose(ChannelsLost(f"unreadable reply: {exc}"))

    def connection_lost(self, exc: Exception | None) -> None:
        self._lose(ChannelsLost(f"connection lost: {exc or 'closed'}"))

    def _lose(self, exc: ChannelsLost) -> None:
        if not self.lost.done():
            self.lost.set_exception(exc)
            # Retrieved here: a loss after the block ended (the close's own) has nobody
            # waiting, and asyncio would log it as never retrieved; waiters still get it.
            self.lost.exception()


class Channels:
    """One connection subscribed to some channels: ``on_message(channel, data)`` for each
    message, ``on_subscribed(channel)`` once a subscription is in effect (what was
    published before it was never heard here). Use as ``async with``: the connection
    closes with the block."""

    def __init__(self, redis: aioredis.Redis, on_message: Callable[[bytes, bytes], None],
                 on_subscribed: Callable[[bytes], None], *, sharded: bool = True) -> None:
        pool = redis.connection_pool
        self._connection: Any = pool.connection_class(**pool.connection_kwargs)
        self._hearing = _Hearing(on_message, on_subscribed)
        self._transport: asyncio.Transport | None = None
        self._subscribe = b"SSUBSCRIBE" if sharded else b"SUBSCRIBE"
        self._unsubscribe = b"SUNSUBSCRIBE" if sharded else b"UNSUBSCRIBE"

    async def __aenter__(self) -> Channels:
        await self._connection.connect()
        # redis-py's streams are done with: nothing is waiting in them after the
        # connection's own handshake, and from now on the bytes come here.
        transport = self._connection._writer.transport
        transport.set_protocol(self._hearing)
        self._transport = transport
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._transport is not None:
            self._transport.close()

    def subscribe(self, channels: Iterable[str]) -> None:
        self._send(self._subscribe, channels)

    def unsubscribe(self, channels: Iterable[str]) -> None:
        self._send(self._unsubscribe, channels)

    def _send(self, verb: bytes, channels: Iterable[str]) -> None:
        names = list(channels)
        if names and self._transport is not None and not self._transport.is_closing():
            # A few small commands when tables are held or let go, never a stream: the
            # transport's buffer cannot grow without bound.
            self._transport.write(hiredis.pack_command((verb, *names)))  # type: ignore[arg-type]

    async def lost(self) -> None:
        """Wait until the connection is lost (raises ``ChannelsLost``)."""
        await asyncio.shield(self._hearing.lost)
