"""``Store``: versioned, write-through persistence of tables, logs, records and sessions.

One object over one ``redis.asyncio.Redis`` client, put together from parts with one job
each:

| part | module | job |
|---|---|---|
| ``StoreBase`` | ``base.py`` | the client, the key layout, the scripts; proof the store is down |
| ``TableStore`` | ``tables.py`` | tables: create, versioned commit, load, log, delete, lobby |
| ``LeaseStore`` | ``leases.py`` | processes: leases, presence, heartbeats, beacons |
| ``RecordStore`` | ``records.py`` | finished matches' records and their reviews |
| ``SessionStore`` | ``sessions.py`` | sessions, their tokens, the tables they watch |
"""

from __future__ import annotations

from server.store.base import NO_ANSWER, PROBE_S, time_public_calls
from server.store.leases import LeaseStore
from server.store.records import RecordStore
from server.store.sessions import SessionStore
from server.store.tables import StoredTable, TableStore, decode_log_entry, encode_log_entry

__all__ = ["NO_ANSWER", "PROBE_S", "Store", "StoredTable", "decode_log_entry",
           "encode_log_entry"]


class Store(TableStore, LeaseStore, RecordStore, SessionStore):
    """All persistence the server needs, over one ``redis.asyncio.Redis`` client.

    Every method is async and raises ``StorageUnavailable`` (never a redis exception)
    when Redis cannot serve it; ``ping`` alone never raises. The store owns no
    connection: the caller creates the client (``connect``) and closes it, in the order
    of its lifecycle context managers (docs/ARCHITECTURE.md convention 7).

    Index sets (``tables``, ``records``) live outside the per-table hash tag, so they are
    updated in a separate command from the table keys (a Cluster script cannot span
    slots). They are written *before* creation and cleaned *after* deletion, so an
    interrupted call leaves at worst an id whose ``load_*`` returns ``None``, never a
    table nobody can find.
    """


time_public_calls(Store)
