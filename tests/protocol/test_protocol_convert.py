"""Engine dicts → typed events/views, and server-side leniency for newer versions."""

from __future__ import annotations

import msgpack
import pytest
from protocol_samples import table_info, table_view

import protocol


def test_event_from_dict_card_played() -> None:
    d = {"type": "card_played", "seat": 1, "card": "3o"}
    assert protocol.event_from_dict(d) == protocol.CardPlayed(seat=1, card="3o")


def test_event_from_dict_accepts_tuples_and_ignores_engine_bookkeeping() -> None:
    d = {
        "type": "trick_done",
        "number": 9,
        "leader": 2,
        "cards": ("Ro", "Re", "6b", "3e"),
        "winner": None,  # R11: spoiled
        "_visible_to": [0, 1, 2, 3],
    }
    ev = protocol.event_from_dict(d)
    assert ev == protocol.TrickDone(number=9, leader=2, cards=["Ro", "Re", "6b", "3e"], winner=None)


def test_event_from_dict_partner_draw_pairs() -> None:
    d = {"type": "partner_draw", "cards": [(0, "3c"), [1, "3o"]], "seating": [0, 1, 2, 3]}
    d["dealer"] = 0
    ev = protocol.event_from_dict(d)
    assert isinstance(ev, protocol.PartnerDraw) and ev.cards == [(0, "3c"), (1, "3o")]


def test_event_from_dict_snapshot_and_table_changed() -> None:
    view = protocol.to_dict(table_view())
    assert protocol.event_from_dict({"type": "snapshot", "view": view}) == protocol.Snapshot(
        view=table_view()
    )
    assert protocol.view_from_dict(view) == table_view()
    info = protocol.to_dict(table_info())
    assert protocol.table_info_from_dict(info) == table_info()


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


@pytest.mark.parametrize(
    "d",
    [
        {"type": "card_played", "seat": 4, "card": "3o"},
        {"type": "card_played", "seat": 1, "card": "3x"},
        {"type": "nope"},
        {"seat": 1},
        {"type": "trick_done", "number": 10, "leader": 0, "cards": ["3o"] * 4, "winner": 0},
        {"type": "signal", "from_seat": 0, "signal": "aces"},
    ],
)
def test_event_from_dict_rejects_bad_engine_output(d: dict[str, object]) -> None:
    with pytest.raises(protocol.EventError):
        protocol.event_from_dict(d)  # our bug, never a ProtocolError sent to a client


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
