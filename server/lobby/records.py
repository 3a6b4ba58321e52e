"""Finished matches' records (R17), as ``get_record`` answers them.

Each finished match's record is stored with the commit that ends it (and outlives the
table): the table's latest, and one per match number (a rematch is a match of its own). A
private table's records are only for those who sat at it, or who hold its join code (a
shared replay link, issue 28); anyone else is told there is no such table, exactly as if
there were none.
"""

from __future__ import annotations

import hmac

import msgpack
import msgspec

from protocol import CommandError, ErrorCode, ServiceError
from protocol.results import RecordResult
from server.store import StorageUnavailable, Store
from server.store.keys import check_id

from ..table import Table

_NONE = "no such table or record"


def _holds(code: str | None, actual: object) -> bool:
    """``code`` is the table's join code (compared in constant time)."""
    return (code is not None and isinstance(actual, str)
            and hmac.compare_digest(code.encode(), actual.encode()))


async def read_record(store: Store, held: Table | None, player: str, table_id: str,
                      match: int | None = None, code: str | None = None) -> RecordResult:
    """The record of ``table_id``'s match ``match`` (its latest if None) for ``player``,
    who may hold the table's join ``code``; ``held``: the table if this process holds it
    (its state says what is finished)."""
    try:
        check_id("table", table_id)
    except ValueError:
        raise CommandError(ErrorCode.NO_SUCH_TABLE, _NONE) from None
    if held is not None and not held.closed:
        st = held.state
        if (st.private and player not in st.members and st.seat_of(player) is None
                and not _holds(code, st.code)):
            raise CommandError(ErrorCode.NO_SUCH_TABLE, _NONE)
        finished = st.matches_finished()
        if match is not None and match > st.matches_started():
            raise CommandError(ErrorCode.NO_SUCH_TABLE, f"this table has no match {match}")
        if not 1 <= (match if match is not None else finished) <= finished:
            raise CommandError(ErrorCode.WRONG_PHASE, "the match is not over: its record "
                               "is private until it ends")
    try:
        raw = await store.load_record(table_id, match)
        if raw is None and match is not None:
            raw = await store.load_record(table_id)   # stored before match numbers
            if raw is not None and _record_match(raw) not in (match, None):
                raw = None
    except StorageUnavailable:
        raise ServiceError(ErrorCode.STORAGE_UNAVAILABLE, "storage is unavailable") from None
    if raw is None:
        raise CommandError(ErrorCode.NO_SUCH_TABLE, _NONE)
    try:
        wrapper = msgpack.unpackb(raw)
        private, members, body = wrapper["private"], wrapper["members"], wrapper["record"]
        secret = wrapper.get("code")                # None: stored before 1.5's codes
    except (ValueError, TypeError, KeyError, msgpack.UnpackException):
        private, members, body, secret = False, [], raw, None   # stored before access rules
    if private and player not in members and not _holds(code, secret):
        raise CommandError(ErrorCode.NO_SUCH_TABLE, _NONE)
    return RecordResult(table=table_id, record=msgspec.json.decode(body),
                        match=_record_match(raw) or match)


def _record_match(raw: bytes) -> int | None:
    """The match number a stored record says it is (None: stored before there were)."""
    try:
        number = msgpack.unpackb(raw).get("match")
    except (ValueError, TypeError, AttributeError, msgpack.UnpackException):
        return None
    return number if type(number) is int and number >= 1 else None
