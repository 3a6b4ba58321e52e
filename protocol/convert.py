"""Plain dicts from the engine and lobby → typed protocol structs.

The engine is pure and knows nothing of the protocol (docs/ARCHITECTURE.md: data flows one way), so
it emits plain dicts; the server converts them here at the boundary. A mismatch is our
bug, raised as :class:`EventError` so it is logged rather than sent to a client.
"""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec

from .errors import EventError
from .events import EventPayload
from .views import TableInfo, TableOptions, TableView

T = TypeVar("T")


def _convert(d: Any, typ: Any, what: str) -> Any:
    try:
        return msgspec.convert(d, typ)
    except msgspec.ValidationError as exc:
        raise EventError(f"{what} does not match the protocol: {exc}") from exc


def event_from_dict(d: dict[str, Any]) -> EventPayload:
    """``{"type": "card_played", "seat": 1, "card": "3o"}`` → ``CardPlayed(seat=1, card="3o")``.

    Unknown keys are ignored (the engine may keep bookkeeping in its dicts); an unknown
    ``type`` or a bad field raises :class:`EventError`.
    """
    return _convert(d, EventPayload, "event")  # type: ignore[no-any-return]


def view_from_dict(d: dict[str, Any]) -> TableView:
    """The engine's per-viewer view dict → :class:`TableView`."""
    return _convert(d, TableView, "view")  # type: ignore[no-any-return]


def table_info_from_dict(d: dict[str, Any]) -> TableInfo:
    """The lobby's table dict → :class:`TableInfo`."""
    return _convert(d, TableInfo, "table info")  # type: ignore[no-any-return]


def options_from_dict(d: dict[str, Any]) -> TableOptions:
    """A stored options dict → :class:`TableOptions` (missing keys take their defaults)."""
    return _convert(d, TableOptions, "options")  # type: ignore[no-any-return]


def to_dict(msg: msgspec.Struct) -> Any:
    """Any protocol struct → the plain dict a msgpack/JSON reader sees (tuples as lists).

    Goes through the wire encoding on purpose: the result is exactly what a third-party
    client decodes, which is what we want to persist, log or compare in tests.
    """
    return msgspec.msgpack.decode(msgspec.msgpack.encode(msg))
