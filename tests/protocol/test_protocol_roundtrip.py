"""Round-trip properties: every message type survives encode → decode unchanged."""

from __future__ import annotations

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from protocol_strategies import CLIENT_CLASSES, EVENT_CLASSES, SERVER_CLASSES, for_struct

import protocol


@pytest.mark.parametrize("cls", CLIENT_CLASSES, ids=lambda c: c.__name__)
@settings(max_examples=60)
@given(data=st.data())
def test_client_command_round_trip(cls: type, data: st.DataObject) -> None:
    cmd = data.draw(for_struct(cls))
    frame = protocol.encode(cmd)
    assert len(frame) <= protocol.MAX_FRAME_BYTES
    assert protocol.decode_client(frame) == cmd
    # Plain msgpack: another library reads it as a map whose `type` is the tag.
    assert msgpack.unpackb(frame)["type"] == cls.__struct_config__.tag


@pytest.mark.parametrize("cls", SERVER_CLASSES, ids=lambda c: c.__name__)
@settings(max_examples=60)
@given(data=st.data())
def test_server_message_round_trip(cls: type, data: st.DataObject) -> None:
    msg = data.draw(for_struct(cls))
    assert protocol.decode_server(protocol.encode(msg)) == msg


@pytest.mark.parametrize("cls", EVENT_CLASSES, ids=lambda c: c.__name__)
@settings(max_examples=40)
@given(data=st.data(), seq=st.integers(0, 2**40))
def test_every_event_type_round_trips_in_an_envelope(
    cls: type, data: st.DataObject, seq: int
) -> None:
    payload = data.draw(for_struct(cls))
    msg = protocol.Event(table="t1", seq=seq, event=payload)
    assert protocol.decode_server(protocol.encode(msg)) == msg


def test_catalogue_is_complete() -> None:
    """The issue's catalogue, by wire name: a missing or renamed type fails here."""
    assert set(protocol.CLIENT_TYPES) == {
        "hello",
        "resume",
        "ping",
        "list_tables",
        "create_table",
        "join",
        "leave",
        "add_bot",
        "remove_bot",
        "spectate",
        "start",
        "play",
        "chanter_vote",
        "discard",
        "signal",
        "get_record",
        "review",
        "hint",
        "rematch",
        "chat",
        "mute",
        "let_bot_play",
        "history",     # 1.5, issue 27
        "profile",
        "queue",
        "unqueue",
        # 1.5: accounts (issue 27)
        "register",
        "login",
        "change_password",
        "logout",
        "logout_all",
    }
    assert set(protocol.SERVER_TYPES) == {"welcome", "ok", "error", "pong", "event", "matched",
                                         "home"}
    assert set(protocol.EVENT_TYPES) == {
        "snapshot",
        "table_changed",
        "player_connected",
        "player_disconnected",
        "partner_draw",
        "deal_started",
        "hand_dealt",
        "chanter_vote",
        "chanter_result",
        "talon_dealt",
        "chanter_discarded",
        "card_played",
        "trick_done",
        "deal_scored",
        "match_over",
        "signal",
        "signal_sent",
        "turn",
        "deals_committed",
        "rematch_accepted",
        "chat",
        "chat_history",
        "turn_timed_out",
    }
