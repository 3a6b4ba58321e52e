"""Redis persistence for Aluette Online: versioned write-through tables, sessions, records.

The websocket shell uses exactly this surface::

    async with EmbeddedStore(data_dir) as embedded:          # or a real Redis URL
        redis = await connect(embedded.url)
        store = Store(redis, prefix="aluette")
        ...
        await redis.aclose()

See ``keys.py`` for the key layout and ``errors.py`` for the error tree.
"""

from __future__ import annotations

from server.store.client import connect
from server.store.embedded import EmbeddedStore, EmbeddedStoreError
from server.store.errors import StorageUnavailable, StoreError, VersionConflict
from server.store.keys import hash_token
from server.store.store import Store

__all__ = [
    "EmbeddedStore",
    "EmbeddedStoreError",
    "StorageUnavailable",
    "Store",
    "StoreError",
    "VersionConflict",
    "connect",
    "hash_token",
]
