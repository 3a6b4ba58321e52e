"""Fuzzing the decoders: whatever the bytes, only ProtocolError escapes, with a known code."""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from protocol_samples import golden_messages
from protocol_strategies import client_commands, json_values

import protocol

CODES = set(protocol.ErrorCode)
CLIENT_FRAMES = [protocol.encode(m) for _, d, m in golden_messages() if d == "client"]
SERVER_FRAMES = [protocol.encode(m) for _, d, m in golden_messages() if d == "server"]


def _decode_client(frame: bytes) -> protocol.ProtocolError | None:
    try:
        protocol.decode_client(frame)
    except protocol.ProtocolError as exc:
        assert exc.code in CODES
        assert isinstance(exc.message, str) and exc.message
        assert exc.id is None or 0 <= exc.id <= protocol.MAX_COMMAND_ID
        return exc
    return None


def _decode_server(frame: bytes) -> None:
    try:
        protocol.decode_server(frame)
    except protocol.ProtocolError as exc:
        assert exc.code in CODES


@settings(max_examples=1000)
@given(st.binary(max_size=200))
def test_random_bytes(frame: bytes) -> None:
    _decode_client(frame)
    _decode_server(frame)


@st.composite
def mutated(draw: st.DrawFn, frames: list[bytes]) -> bytes:
    frame = bytearray(draw(st.sampled_from(frames)))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "set", "insert", "delete", "truncate"]))
        i = draw(st.integers(0, max(len(frame) - 1, 0)))
        if op == "flip" and frame:
            frame[i] ^= 1 << draw(st.integers(0, 7))
        elif op == "set" and frame:
            frame[i] = draw(st.integers(0, 255))
        elif op == "insert":
            frame[i:i] = draw(st.binary(min_size=1, max_size=4))
        elif op == "delete" and frame:
            del frame[i]
        elif op == "truncate":
            del frame[i:]
    return bytes(frame)


@settings(max_examples=1500, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(CLIENT_FRAMES))
def test_mutated_client_frames(frame: bytes) -> None:
    _decode_client(frame)


@settings(max_examples=800, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(SERVER_FRAMES))
def test_mutated_server_frames(frame: bytes) -> None:
    _decode_server(frame)


@settings(max_examples=600)
@given(cmd=client_commands, data=st.data())
def test_one_field_replaced_by_garbage(cmd: Any, data: st.DataObject) -> None:
    """Structured mutation: a valid command with one field set to any msgpack value.

    Either it still decodes, or the error is a field error that names the field and echoes
    the id (only `type` and `id` themselves can hide the id or the type).
    """
    raw = protocol.to_dict(cmd)
    key = data.draw(st.sampled_from(sorted(raw)))
    raw[key] = data.draw(json_values | st.binary(max_size=4) | st.floats())
    exc = _decode_client(msgspec.msgpack.encode(raw))
    if exc is None:
        return
    if key == "type":
        assert exc.code is protocol.ErrorCode.UNKNOWN_TYPE
    elif key == "id":
        assert exc.code is protocol.ErrorCode.INVALID_FIELD
    else:
        assert exc.code in {protocol.ErrorCode.INVALID_FIELD, protocol.ErrorCode.UNKNOWN_CARD}
        assert exc.id == cmd.id
        assert f"$.{key}" in exc.message


@settings(max_examples=300)
@given(
    st.recursive(
        st.none() | st.integers(-(2**63), 2**63) | st.text(max_size=3),
        lambda x: st.lists(x, max_size=2),
        max_leaves=4,
    )
)
def test_non_map_frames_are_bad_frame(value: object) -> None:
    exc = _decode_client(msgspec.msgpack.encode(value))
    assert exc is not None and exc.code is protocol.ErrorCode.BAD_FRAME


def test_deeply_nested_frame_is_rejected_not_crashing() -> None:
    frame = b"\x91" * 100_00 + b"\xc0"
    assert _decode_client(frame) is not None
    nested = b"\x82\xa4type\xa4play\xa4card" + b"\x91" * 5000 + b"\xc0"
    assert _decode_client(nested) is not None
