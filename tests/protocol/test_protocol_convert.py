"""Plain maps at the wire's edge → typed structs, and a client's leniency for newer versions."""

from __future__ import annotations

import msgpack
import pytest

import protocol


def test_options_defaults() -> None:
    opts = protocol.options_from_dict({})
    assert opts == protocol.TableOptions()
    assert (opts.deals, opts.mordienne, opts.chanter, opts.signals) == (5, True, False, "private")
    assert (opts.first_dealer, opts.signal_risk, opts.bot_delay_ms, opts.grace_s) == (
        "random",
        0.25,
        600,
        120,
    )


def test_options_that_do_not_fit_are_refused() -> None:
    with pytest.raises(protocol.EventError):
        protocol.options_from_dict({"deals": 0})


def test_client_survives_unknown_event_type() -> None:
    """New event types are a minor change: an old client decodes them as UnknownEvent."""
    frame = msgpack.packb(
        {"type": "event", "table": "t", "seq": 9, "event": {"type": "emote", "seat": 1}}
    )
    msg = protocol.decode_server(frame)
    assert msg == protocol.Event(
        table="t", seq=9, event=protocol.UnknownEvent(type="emote", data={"seat": 1})
    )


def test_client_rejects_malformed_known_event() -> None:
    frame = msgpack.packb(
        {"type": "event", "table": "t", "seq": 9, "event": {"type": "card_played", "seat": 9}}
    )
    with pytest.raises(protocol.ProtocolError) as info:
        protocol.decode_server(frame)
    assert info.value.code is protocol.ErrorCode.INVALID_FIELD


def test_placeholder_absent_or_nil() -> None:
    """A hidden event reaches the viewer as its bare sequence number."""
    for raw in (
        {"type": "event", "table": "t", "seq": 5},
        {"type": "event", "table": "t", "seq": 5, "event": None},
    ):
        assert protocol.decode_server(msgpack.packb(raw)) == protocol.placeholder("t", 5)


def test_server_error_with_newer_code_still_decodes() -> None:
    frame = msgpack.packb({"type": "error", "id": None, "code": "some_future_code", "message": ""})
    assert protocol.decode_server(frame).code == "some_future_code"  # type: ignore[union-attr]
