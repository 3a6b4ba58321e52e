"""Redis persistence for Aluette Online: versioned write-through tables, sessions, records.

The websocket shell uses exactly this surface (see ``runtime.py``)::

    try:
        async with open_storage(StorageConfig(redis_url=..., data_dir=...)) as storage:
            hub = Hub(storage.store, ...)      # /healthz: storage.check(), storage.status()
            ...
    except StoreError as exc:                  # refused at startup: one line, exit 2
        ...

See ``keys.py`` for the key layout, ``identity.py`` for the store identity, ``embedded.py``
for the embedded server and ``errors.py`` for the error tree. ``EmbeddedStore`` and
``connect`` remain for tests, benchmarks and tools that need a bare server or client.
"""

from __future__ import annotations

from server.store.client import connect
from server.store.embedded import EmbeddedStore
from server.store.errors import (
    DataDirInUse,
    EmbeddedStoreError,
    IdentityMismatch,
    StorageStartupError,
    StorageUnavailable,
    StoreEmpty,
    StoreError,
    VersionConflict,
)
from server.store.keys import hash_token
from server.store.runtime import Storage, StorageConfig, open_storage
from server.store.store import Store, StoredTable

__all__ = [
    "DataDirInUse",
    "EmbeddedStore",
    "EmbeddedStoreError",
    "IdentityMismatch",
    "Storage",
    "StorageConfig",
    "StorageStartupError",
    "StorageUnavailable",
    "Store",
    "StoreEmpty",
    "StoreError",
    "StoredTable",
    "VersionConflict",
    "connect",
    "hash_token",
    "open_storage",
]
