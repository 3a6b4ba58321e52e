"""The storage error tree (docs/ARCHITECTURE.md convention 6: one documented error tree).

::

    StoreError                 base: anything this package raises on purpose
    ├── StorageUnavailable     Redis could not serve the call (down, timeout, loading, OOM,
    │                          read-only replica, ...). Transient: the caller reports
    │                          "service unavailable" and may retry later; no state changed
    │                          *that the caller was told about*.
    └── VersionConflict        optimistic-concurrency failure: the stored version is not the
                               one the caller based its write on. Nothing was written.

Redis exceptions never escape a ``Store`` method: the websocket shell should not need to
know which client library sits underneath, and a library exception leaking to a handler
would be an "internal error" (a bug) rather than the outage it really is.
"""

from __future__ import annotations


class StoreError(Exception):
    """Base class of every error the store raises deliberately."""


class StorageUnavailable(StoreError):
    """Redis did not answer, or answered that it cannot serve us right now.

    Raised within a couple of seconds of an outage (short socket timeouts, one quick
    retry) so a player's move fails fast instead of hanging the table.
    """


class VersionConflict(StoreError):
    """A write based on ``expected`` found another version (or no table) in Redis.

    ``actual`` is the stored version, or ``None`` when the table does not exist (it was
    deleted, or never created). Whoever gets this lost a race and must reload.
    """

    def __init__(self, table_id: str, expected: int | None, actual: int | None) -> None:
        self.table_id = table_id
        self.expected = expected
        self.actual = actual
        if expected is None:
            msg = f"table {table_id!r} already exists (version {actual})"
        elif actual is None:
            msg = f"table {table_id!r} does not exist (expected version {expected})"
        else:
            msg = f"table {table_id!r} is at version {actual}, not {expected}"
        super().__init__(msg)
