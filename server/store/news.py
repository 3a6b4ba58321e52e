"""One pub/sub channel's messages, for as long as a process wants them.

The processes on one store tell each other news on plain channels (the matchmaker's seats,
session changes). Pub/sub keeps nothing for a subscriber that was away, so each listener
keeps its own way to catch up (a poll, a read of the lobby); this only makes sure a lost
subscription is made again, after a pause, and that the connection it held is closed.
(Tables' commits travel on sharded channels, one per table, with their own bus:
server/cluster.py.)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

import redis.asyncio as aioredis

log = logging.getLogger(__name__)

#: The pause before subscribing again after the subscription failed (seconds).
RESUBSCRIBE_S = 0.5


async def listen(redis: aioredis.Redis, channel: str, heard: Callable[[bytes], Awaitable[None]],
                 what: str, stop: Callable[[], bool] = lambda: False) -> None:
    """Hand every message on ``channel`` to ``heard`` until ``stop()`` (or cancellation);
    ``what`` names the news in the log when the subscription is lost."""
    while not stop():
        pubsub = redis.pubsub()
        try:
            await pubsub.subscribe(channel)
            while not stop():
                msg = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                if msg is not None and msg.get("type") == "message":
                    await heard(msg["data"])
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("%s: %s; subscribing again", what, exc)
            await asyncio.sleep(RESUBSCRIBE_S)
        finally:
            with contextlib.suppress(Exception):
                await pubsub.aclose()  # type: ignore[no-untyped-call, unused-ignore]
