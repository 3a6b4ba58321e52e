"""The commits' line (server/store/line.py, issue 32): calls pipelined on one connection of
the client's pool, each answered with its own reply, and nothing lost or left waiting when
that connection fails. Real Valkey."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from server.store import Store, connect
from server.store.line import Line


async def test_calls_made_together_share_one_write_and_each_gets_its_own_reply(
        redis_url: str, key_prefix: str, redis_client: aioredis.Redis) -> None:
    client = await connect(redis_url)
    try:
        line = Line(client)
        writes = 0
        await line.call("PING")
        replies = line._replies
        assert replies is not None
        write = replies.transport.write

        def counted(data: bytes) -> None:
            nonlocal writes
            writes += 1
            write(data)

        replies.transport.write = counted  # type: ignore[method-assign]
        keys = [f"{key_prefix}:{i}" for i in range(200)]
        got = await asyncio.gather(*(line.call("INCRBY", k, i) for i, k in enumerate(keys)))
        assert got == list(range(200))
        assert writes == 1                          # one turn of the loop, one write
        assert line._replies is replies              # and one connection
        assert await line.call("GET", keys[7]) == b"7"
        with pytest.raises(ResponseError):           # the store's error, as redis-py's
            await line.call("INCR", "not", "a", "command's", "arity")
        assert await line.call("GET", keys[9]) == b"9"     # the line goes on
    finally:
        await client.aclose()


async def test_a_caller_that_left_does_not_take_the_next_callers_reply(
        redis_url: str, key_prefix: str, redis_client: aioredis.Redis) -> None:
    client = await connect(redis_url)
    try:
        line = Line(client)
        await client.rpush(f"{key_prefix}:q", b"late")
        slow = asyncio.ensure_future(line.call("BLPOP", f"{key_prefix}:empty", 1))
        after = asyncio.ensure_future(line.call("LPOP", f"{key_prefix}:q"))
        await asyncio.sleep(0.05)                     # both are written: BLPOP blocks
        slow.cancel()
        assert await after == b"late"                 # its own reply, not BLPOP's None
        assert await line.call("PING") == b"PONG"
    finally:
        await client.aclose()


async def test_a_lost_connection_fails_its_calls_and_the_line_opens_again(
        redis_url: str, key_prefix: str, redis_client: aioredis.Redis) -> None:
    client = await connect(redis_url, max_connections=2)
    try:
        line = Line(client)
        line_id = await line.call("CLIENT", "ID")
        waiting = asyncio.ensure_future(line.call("BLPOP", f"{key_prefix}:empty", 2))
        await asyncio.sleep(0.05)
        await redis_client.execute_command("CLIENT", "KILL", "ID", line_id)
        with pytest.raises(RedisConnectionError):
            await waiting
        for _ in range(3):                         # each loss gives its connection back:
            assert await line.call("CLIENT", "ID") != line_id      # a pool of two lasts
            replies = line._replies
            assert replies is not None
            replies.transport.close()
            await asyncio.sleep(0)
        assert await client.ping()                 # the pool still has a connection free
    finally:
        await asyncio.wait_for(client.aclose(), 3)   # closing takes the line with it


async def test_no_answer_within_the_socket_timeout_closes_the_line(
        redis_url: str, key_prefix: str, redis_client: aioredis.Redis) -> None:
    client = await connect(redis_url, socket_timeout=0.2)
    try:
        line = Line(client)
        first = line.call("BLPOP", f"{key_prefix}:empty", 1)
        with pytest.raises(RedisTimeoutError):
            await first
        await redis_client.rpush(f"{key_prefix}:empty", b"x")
        # A new connection: the old one's BLPOP reply can never be taken for this one's.
        assert await line.call("LPOP", f"{key_prefix}:empty") in (b"x", None)
        assert await line.call("PING") == b"PONG"
    finally:
        await client.aclose()


async def test_a_script_the_store_does_not_know_is_sent_to_it(
        redis_url: str, key_prefix: str, redis_client: aioredis.Redis) -> None:
    client = await connect(redis_url)
    try:
        store = Store(client, key_prefix)
        # A script no one has loaded (its text is this test's own): NOSCRIPT, then loaded.
        script = client.register_script(f"return '{key_prefix}' .. ARGV[1]")
        assert store._line is not None
        with pytest.raises(NoScriptError):
            await store._line.call("EVALSHA", script.sha, 0, "x")
        assert await store.run_script(script, [], ["!"]) == f"{key_prefix}!".encode()
        assert await store.run_script(script, [], ["?"]) == f"{key_prefix}?".encode()
    finally:
        await client.aclose()
