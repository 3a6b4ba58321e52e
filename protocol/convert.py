"""Plain maps at the wire's edge → typed protocol structs, and back.

The engine, the server and the clients all speak the typed structs themselves (events,
views, table info), so nothing converts them on the way. What is left here are the edges
where a plain map comes in: options a person typed or a script passed (the terminal client,
the network bot), and the plain form of a struct for whatever persists, logs or compares
what a third-party client would decode.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from .errors import EventError
from .views import TableOptions


def options_from_dict(d: Mapping[str, object]) -> TableOptions:
    """An options map (missing keys take their defaults) → :class:`TableOptions`; a value
    that does not fit raises :class:`EventError`."""
    try:
        return msgspec.convert(d, TableOptions)
    except msgspec.ValidationError as exc:
        raise EventError(f"options do not match the protocol: {exc}") from exc


def to_dict(msg: msgspec.Struct) -> Any:
    """Any protocol struct → the plain dict a msgpack/JSON reader sees (tuples as lists).

    Goes through the wire encoding on purpose: the result is exactly what a third-party
    client decodes, which is what we want to persist, log or compare in tests.
    """
    return msgspec.msgpack.decode(msgspec.msgpack.encode(msg))
