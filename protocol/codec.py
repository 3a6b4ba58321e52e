"""Encoding and decoding of frames: the only place bytes become messages.

Decoding is two-speed. The fast path is one typed ``msgspec`` decode, which validates
every field while parsing. Only when it fails do we re-read the frame step by step to
decide *which* error code applies (bad msgpack, not a map, unknown type, bad field, bad
card) and to recover the command ``id``: errors are rare, so precision costs nothing on the
hot path. Whatever goes wrong, :class:`ProtocolError` is the only exception that leaves.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import msgspec

from . import limits
from .cards import CARD_PATTERN
from .errors import ErrorCode, ProtocolError
from .events import EVENT_TYPES
from .fields import ErrorDetails
from .messages import (
    CLIENT_TYPES,
    SERVER_TYPES,
    ClientCommand,
    Error,
    Event,
    ServerMessage,
    _LenientEvent,
    _unknown_event,
)
from .versions import SUPPORTED_VERSIONS

_ENCODER = msgspec.msgpack.Encoder()
_CLIENT_DECODER: msgspec.msgpack.Decoder[Any] = msgspec.msgpack.Decoder(ClientCommand)
_SERVER_DECODER: msgspec.msgpack.Decoder[Any] = msgspec.msgpack.Decoder(ServerMessage)
_ANY_DECODER: msgspec.msgpack.Decoder[Any] = msgspec.msgpack.Decoder()
_PATH_RE = re.compile(r" - at `(\$[^`]*)`$")
_MISSING_RE = re.compile(r"missing required field `([^`]*)`")
_CARD_HINT = f"matching regex {CARD_PATTERN!r}"
_BINARY = (bytes, bytearray, memoryview)


def encode(msg: msgspec.Struct) -> bytes:
    """Encode any protocol message (command, server message) as one msgpack map.

    Fields are written in declaration order with ``type`` first; fields equal to their
    default are still written (nil for None), so peers never have to know our defaults.
    """
    return _ENCODER.encode(msg)


def _check_frame(frame: object, limit: int) -> None:
    """Refuse text frames and oversize frames before any decoding work is spent on them."""
    if not isinstance(frame, _BINARY):
        raise ProtocolError(ErrorCode.BAD_FRAME, "frames must be binary (msgpack), not text")
    if len(frame) > limit:
        raise ProtocolError(
            ErrorCode.FRAME_TOO_LARGE,
            f"frame is {len(frame)} bytes; the limit is {limit}",
            details={"limit": limit},
        )


def decode_client(frame: bytes) -> ClientCommand:
    """Decode and validate one client frame into a command struct.

    Raises :class:`ProtocolError` (and nothing else) with code ``frame_too_large``,
    ``bad_frame``, ``unknown_type``, ``invalid_field`` or ``unknown_card``; ``.id`` is set
    when the frame's ``id`` could be read, so the server can echo it.
    """
    _check_frame(frame, limits.MAX_FRAME_BYTES)
    try:
        return _CLIENT_DECODER.decode(frame)  # type: ignore[no-any-return]
    except Exception:
        pass
    raise _classify(frame, CLIENT_TYPES)


def decode_server(frame: bytes) -> ServerMessage:
    """Decode and validate one server frame (for clients and tests).

    An ``event`` whose payload type is unknown (a newer minor version) decodes to an
    :class:`~protocol.events.UnknownEvent` payload instead of failing; an unknown top-level
    type raises ``unknown_type`` (clients ignore such frames).
    """
    _check_frame(frame, limits.MAX_SERVER_FRAME_BYTES)
    try:
        return _SERVER_DECODER.decode(frame)  # type: ignore[no-any-return]
    except Exception:
        pass
    try:
        raw = _ANY_DECODER.decode(frame)
        if isinstance(raw, dict) and raw.get("type") == "event":
            payload = raw.get("event")
            if isinstance(payload, dict) and payload.get("type") not in EVENT_TYPES:
                return _unknown_event(msgspec.convert(raw, _LenientEvent))
    except Exception:
        pass
    raise _classify(frame, SERVER_TYPES)


def _recover_id(raw: dict[Any, Any]) -> int | None:
    """The frame's command id if it is a valid one, so an error can be matched to it."""
    value = raw.get("id")
    if type(value) is int and 0 <= value <= limits.MAX_COMMAND_ID:
        return value
    return None


def _classify(frame: bytes, types: Mapping[str, type[msgspec.Struct]]) -> ProtocolError:
    """Work out why ``frame`` failed the typed decode; never raises."""
    try:
        raw = _ANY_DECODER.decode(frame)
    except Exception as exc:
        return ProtocolError(ErrorCode.BAD_FRAME, f"not valid msgpack: {exc}")
    if not isinstance(raw, dict):
        return ProtocolError(
            ErrorCode.BAD_FRAME, f"a frame must be a msgpack map, got {type(raw).__name__}"
        )
    cid = _recover_id(raw)
    kind = raw.get("type")
    # A map with a string type and a valid id is a message, refused for what it says; the
    # malformed-frame limit counts only what is not (docs/PROTOCOL.md, "Limits").
    well_formed = isinstance(kind, str) and cid is not None
    if not isinstance(kind, str) or kind not in types:
        what = "missing `type`" if kind is None else f"unknown type {str(kind)[:40]!r}"
        return ProtocolError(ErrorCode.UNKNOWN_TYPE, what, id=cid, well_formed=well_formed)
    try:
        msgspec.convert(raw, types[kind])
    except msgspec.ValidationError as exc:
        message = str(exc)[: limits.MAX_MESSAGE_LEN]
        match = _PATH_RE.search(message)
        missing = _MISSING_RE.search(message)
        if missing:  # the path names the object; the field is the missing key inside it
            field = f"{match.group(1) if match else '$'}.{missing.group(1)}"
        else:
            field = match.group(1) if match else "$"
        details = {"field": field}
        if _CARD_HINT in message:
            where = match.group(1) if match else "$"
            message = f"not one of the 48 card codes of R2 (e.g. 3o, Rb) - at `{where}`"
            return ProtocolError(ErrorCode.UNKNOWN_CARD, message, id=cid, details=details,
                                 well_formed=well_formed)
        return ProtocolError(ErrorCode.INVALID_FIELD, message, id=cid, details=details,
                             well_formed=well_formed)
    except Exception as exc:
        return ProtocolError(ErrorCode.INVALID_FIELD, f"invalid frame: {exc}", id=cid,
                             well_formed=well_formed)
    # The untyped path accepted what the typed path refused (should not happen).
    return ProtocolError(ErrorCode.BAD_FRAME, "frame could not be decoded", id=cid)


# --------------------------------------------------------------------------- builders


def error_reply(exc: ProtocolError) -> Error:
    """The ``error`` message answering a :class:`ProtocolError` (id echoed if known)."""
    return Error(id=exc.id, code=exc.code.value, message=exc.message, details=exc.details)


def error(
    code: ErrorCode,
    message: str = "",
    *,
    id: int | None = None,
    details: ErrorDetails | None = None,
) -> Error:
    """An ``error`` message; ``message`` is truncated to MAX_MESSAGE_LEN."""
    return Error(id=id, code=code.value, message=message[: limits.MAX_MESSAGE_LEN], details=details)


def unsupported_version(id: int | None) -> Error:
    """The reply to a ``hello`` offering no version we speak (then close 4001)."""
    return error(
        ErrorCode.UNSUPPORTED_VERSION,
        f"supported versions: {list(SUPPORTED_VERSIONS)}",
        id=id,
        details={"supported": list(SUPPORTED_VERSIONS)},
    )


def placeholder(table: str, seq: int) -> Event:
    """The bare ``event`` a viewer gets for an event it may not see (keeps seqs gap-free)."""
    return Event(table=table, seq=seq, event=None)
