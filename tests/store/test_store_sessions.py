"""Sessions: one key per player, holding only digests of its tokens; every key expires."""

from __future__ import annotations

import asyncio
import secrets

import redis.asyncio as aioredis

from server.store import Store, hash_token

from .store_kit import all_keys


async def test_new_session_keeps_only_the_digest_and_expires(
        store: Store, redis_client: aioredis.Redis) -> None:
    token = secrets.token_urlsafe(24)
    await store.new_session("p1", "Ana", hash_token(token), ttl_s=600)
    assert await store.session_token("p1") == hash_token(token)
    assert 0 < await redis_client.ttl(store.keys.session("p1")) <= 600
    stored = [k for k in await all_keys(redis_client, f"{store.prefix}*")]
    values = [v for k in stored for v in await redis_client.hvals(k)]
    assert token.encode() not in b"".join(stored + values)


async def test_a_hello_rotates_and_kills_every_older_token(store: Store) -> None:
    a, b, c = (hash_token(x) for x in "abc")
    await store.new_session("p1", "Ana", a, ttl_s=600)
    assert await store.resume_session("p1", a, b, grace_s=30, ttl_s=600, now=1000) == "Ana"
    assert await store.session_token("p1") == b
    # The presented token (a) works during the grace, in case the welcome was lost...
    assert await store.resume_session("p1", a, c, grace_s=30, ttl_s=600, now=1010) == "Ana"
    # ...and b, which that second hello replaced before anyone used it, is dead now.
    assert await store.resume_session("p1", b, hash_token("d"), grace_s=30, ttl_s=600,
                                      now=1011) is None
    # After the grace the presented token is dead too.
    assert await store.resume_session("p1", a, hash_token("e"), grace_s=30, ttl_s=600,
                                      now=1100) is None
    assert await store.session_token("p1") == c


async def test_confirm_retires_the_presented_token_at_once(store: Store) -> None:
    a, b = hash_token("a"), hash_token("b")
    await store.new_session("p1", "Ana", a, ttl_s=600)
    await store.resume_session("p1", a, b, grace_s=30, ttl_s=600, now=1000)
    assert await store.confirm_session("p1", b, 600) is True
    assert await store.resume_session("p1", a, hash_token("x"), grace_s=30, ttl_s=600,
                                      now=1001) is None
    # A connection whose token was replaced since learns it.
    assert await store.confirm_session("p1", a, 600) is False


async def test_racing_hellos_with_one_token_leave_one_current_token(store: Store) -> None:
    a = hash_token("a")
    await store.new_session("p1", "Ana", a, ttl_s=600)
    news = [hash_token(f"n{i}") for i in range(20)]
    names = await asyncio.gather(*(store.resume_session("p1", a, n, grace_s=30, ttl_s=600,
                                                        now=1000) for n in news))
    assert names == ["Ana"] * 20
    current = await store.session_token("p1")
    assert current in news
    # Only the last writer's token is current: every other racing branch is dead.
    dead = [n for n in news if n != current]
    for n in dead:
        assert await store.resume_session("p1", n, hash_token("z"), grace_s=30, ttl_s=600,
                                          now=1001) is None


async def test_unknown_or_expired_session(store: Store, redis_client: aioredis.Redis) -> None:
    assert await store.resume_session("nobody", hash_token("a"), hash_token("b"), grace_s=30,
                                      ttl_s=600) is None
    await store.new_session("p2", "Bo", hash_token("a"), ttl_s=600)
    await store.touch_session("p2", 5)
    assert 0 < await redis_client.ttl(store.keys.session("p2")) <= 5
    await redis_client.delete(store.keys.session("p2"))   # what expiry does
    assert await store.resume_session("p2", hash_token("a"), hash_token("b"), grace_s=30,
                                      ttl_s=600) is None
