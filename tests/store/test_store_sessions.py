"""Sessions: player data and resume tokens, stored only as sha256 digests."""

from __future__ import annotations

import asyncio
import secrets

import pytest
import redis.asyncio as aioredis

from server.store import Store, hash_token

from .store_kit import all_keys


async def test_player_data_round_trip(store: Store, redis_client: aioredis.Redis) -> None:
    assert await store.load_player("p1") is None
    await store.save_player("p1", b"\x81\xa4name\xa5Ana\xefs")
    assert await store.load_player("p1") == b"\x81\xa4name\xa5Ana\xefs"
    await store.save_player("p2", b"x", ttl_s=3600)
    assert 0 < await redis_client.ttl(store.keys.player("p2")) <= 3600


async def test_token_binding_and_rotation(store: Store) -> None:
    old, new = hash_token("tok-old"), hash_token("tok-new")
    assert await store.player_for_token(old) is None
    await store.bind_token(old, "p1")
    assert await store.player_for_token(old) == "p1"

    assert await store.rotate_token(old, new) == "p1"
    assert await store.player_for_token(old) is None
    assert await store.player_for_token(new) == "p1"
    # the old token can never be used again, even to rotate to yet another token
    assert await store.rotate_token(old, hash_token("tok-third")) is None
    assert await store.player_for_token(hash_token("tok-third")) is None
    assert await store.rotate_token(hash_token("never-issued"), hash_token("x")) is None


async def test_retried_rotation_reports_its_own_success(store: Store) -> None:
    old, new = hash_token("a"), hash_token("b")
    await store.bind_token(old, "p1")
    assert await store.rotate_token(old, new) == "p1"
    assert await store.rotate_token(old, new) == "p1"  # same call replayed after lost reply
    assert await store.player_for_token(old) is None


async def test_racing_rotations_have_exactly_one_winner(store: Store) -> None:
    old = hash_token("shared-old-token")
    await store.bind_token(old, "p1")
    news = [hash_token(f"new-{i}") for i in range(16)]
    results = await asyncio.gather(*(store.rotate_token(old, n) for n in news))
    winners = [n for n, r in zip(news, results, strict=True) if r == "p1"]
    assert len(winners) == 1 and results.count(None) == len(news) - 1
    for n in news:
        assert await store.player_for_token(n) == ("p1" if n in winners else None)
    assert await store.player_for_token(old) is None


async def test_token_ttl(store: Store, redis_client: aioredis.Redis) -> None:
    old, new = hash_token("a"), hash_token("b")
    await store.bind_token(old, "p1", ttl_s=600)
    assert 0 < await redis_client.ttl(store.keys.token(old)) <= 600
    await store.rotate_token(old, new, ttl_s=900)
    assert 600 < await redis_client.ttl(store.keys.token(new)) <= 900
    await store.rotate_token(new, old)
    assert await redis_client.ttl(store.keys.token(old)) == -1  # no ttl: persistent


async def test_raw_tokens_are_refused_and_never_stored(
    store: Store, redis_client: aioredis.Redis
) -> None:
    tokens = [secrets.token_urlsafe(32) for _ in range(3)]
    with pytest.raises(ValueError):
        await store.bind_token(tokens[0], "p1")  # the raw token, by mistake
    with pytest.raises(ValueError):
        await store.player_for_token(hash_token(tokens[0]).upper())
    await store.bind_token(hash_token(tokens[0]), "p1")
    await store.rotate_token(hash_token(tokens[0]), hash_token(tokens[1]))
    await store.bind_token(hash_token(tokens[2]), "p2")
    await store.save_player("p1", b"data")

    keys = await all_keys(redis_client, f"{store.prefix}:*")
    assert keys
    stored = b"".join(keys) + b"".join([await redis_client.dump(k) or b"" for k in keys])
    for token in tokens:
        assert token.encode() not in stored
