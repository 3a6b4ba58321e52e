"""Each decoding failure maps to its documented error code (docs/PROTOCOL.md, "Errors")."""

from __future__ import annotations

from typing import Any

import msgpack
import pytest

import protocol
from protocol import ErrorCode

PLAY = {"type": "play", "id": 42, "table": "t1", "card": "3o"}


def fails(frame: bytes) -> protocol.ProtocolError:
    with pytest.raises(protocol.ProtocolError) as info:
        protocol.decode_client(frame)
    return info.value


def with_(**changes: Any) -> bytes:
    return msgpack.packb({**PLAY, **changes})


def test_valid_play_decodes() -> None:
    assert protocol.decode_client(msgpack.packb(PLAY)) == protocol.Play(
        id=42, table="t1", card="3o"
    )


def test_unknown_fields_are_ignored() -> None:
    """Compatibility rule: readers ignore fields they do not know."""
    frame = msgpack.packb({**PLAY, "future": {"x": [1, 2]}})
    assert protocol.decode_client(frame) == protocol.Play(id=42, table="t1", card="3o")


@pytest.mark.parametrize("frame", [b"", b"\xc1", b"\x85\xa4type", b"\xdf\xff\xff\xff\xff"])
def test_invalid_msgpack_is_bad_frame(frame: bytes) -> None:
    exc = fails(frame)
    assert exc.code is ErrorCode.BAD_FRAME and exc.id is None


def test_trailing_bytes_are_bad_frame() -> None:
    assert fails(msgpack.packb(PLAY) + b"\x00").code is ErrorCode.BAD_FRAME


@pytest.mark.parametrize("value", [[PLAY], "play", 42, None, True])
def test_frame_not_a_map_is_bad_frame(value: Any) -> None:
    assert fails(msgpack.packb(value)).code is ErrorCode.BAD_FRAME


def test_text_frame_is_bad_frame() -> None:
    assert fails("{}").code is ErrorCode.BAD_FRAME  # type: ignore[arg-type]


def test_missing_type_is_unknown_type_with_id() -> None:
    exc = fails(msgpack.packb({"id": 7, "table": "t1"}))
    assert exc.code is ErrorCode.UNKNOWN_TYPE and exc.id == 7


@pytest.mark.parametrize("kind", ["fly", "welcome", "event", 3, None, "PLAY"])
def test_unknown_type(kind: Any) -> None:
    exc = fails(with_(type=kind))
    assert exc.code is ErrorCode.UNKNOWN_TYPE and exc.id == 42


@pytest.mark.parametrize(
    ("changes", "path"),
    [
        ({"table": 5}, "$.table"),  # wrong type
        ({"id": "seven"}, "$.id"),
        ({"id": True}, "$.id"),  # bool is not an int
        ({"id": -1}, "$.id"),  # out of range
        ({"id": 2**53 + 1}, "$.id"),
        ({"table": "x" * (protocol.MAX_TABLE_ID_LEN + 1)}, "$.table"),  # oversize string
        ({"table": ""}, "$.table"),
    ],
)
def test_bad_field_is_invalid_field_naming_the_path(changes: dict[str, Any], path: str) -> None:
    exc = fails(with_(**changes))
    assert exc.code is ErrorCode.INVALID_FIELD
    assert path in exc.message and exc.details == {"field": path}
    assert exc.id == (42 if "id" not in changes else None)


def test_missing_field_is_invalid_field() -> None:
    exc = fails(msgpack.packb({"type": "play", "id": 1, "table": "t1"}))
    assert exc.code is ErrorCode.INVALID_FIELD and "card" in exc.message and exc.id == 1


@pytest.mark.parametrize("seat", [-1, 4, 99])
def test_seat_out_of_range(seat: int) -> None:
    frame = msgpack.packb({"type": "add_bot", "id": 3, "table": "t1", "seat": seat})
    exc = fails(frame)
    assert exc.code is ErrorCode.INVALID_FIELD and "$.seat" in exc.message


def test_oversize_name() -> None:
    frame = msgpack.packb({"type": "hello", "id": 1, "versions": [1], "name": "A" * 33})
    exc = fails(frame)
    assert exc.code is ErrorCode.INVALID_FIELD and "$.name" in exc.message


@pytest.mark.parametrize("n", [5, 7])
def test_discard_needs_exactly_six_cards(n: int) -> None:
    cards = list(protocol.CARD_CODES[:n])
    exc = fails(msgpack.packb({"type": "discard", "id": 1, "table": "t", "cards": cards}))
    assert exc.code is ErrorCode.INVALID_FIELD and "$.cards" in exc.message


def test_oversize_list() -> None:
    frame = msgpack.packb({"type": "hello", "id": 1, "versions": list(range(17)), "name": "A"})
    assert fails(frame).code is ErrorCode.INVALID_FIELD


def test_option_out_of_range_names_nested_path() -> None:
    frame = msgpack.packb({"type": "create_table", "id": 1, "options": {"deals": 51}})
    exc = fails(frame)
    assert exc.code is ErrorCode.INVALID_FIELD and "$.options.deals" in exc.message


@pytest.mark.parametrize("card", ["3O", "10o", "3x", "0o", "o3", "3o\n", " 3o", "", "3", "Kc"])
def test_bad_card_code_is_unknown_card(card: str) -> None:
    """R2: exactly 48 case-sensitive codes; anything else is rejected clearly."""
    exc = fails(with_(card=card))
    assert exc.code is ErrorCode.UNKNOWN_CARD and exc.id == 42
    assert exc.details == {"field": "$.card"}


def test_bad_card_inside_a_list_names_its_index() -> None:
    cards = ["4o", "4c", "5b", "6e", "7o", "3z"]
    exc = fails(msgpack.packb({"type": "discard", "id": 1, "table": "t", "cards": cards}))
    assert exc.code is ErrorCode.UNKNOWN_CARD and "$.cards[5]" in exc.message


def test_card_of_wrong_type_is_invalid_field() -> None:
    assert fails(with_(card=3)).code is ErrorCode.INVALID_FIELD


def test_frame_too_large_checked_before_decoding() -> None:
    frame = b"\xc1" * (protocol.MAX_FRAME_BYTES + 1)  # would be bad_frame if decoded
    exc = fails(frame)
    assert exc.code is ErrorCode.FRAME_TOO_LARGE
    assert exc.details == {"limit": protocol.MAX_FRAME_BYTES}


def test_frame_at_the_limit_is_decoded() -> None:
    frame = msgpack.packb({**PLAY, "pad": "x" * 10})
    padded = msgpack.packb({**PLAY, "pad": "x" * (protocol.MAX_FRAME_BYTES - len(frame) - 3 + 10)})
    assert len(padded) <= protocol.MAX_FRAME_BYTES
    assert protocol.decode_client(padded).id == 42


@pytest.mark.parametrize(
    ("signal", "n", "ok"),
    [
        ("aces", 3, True),
        ("aces", None, False),
        ("aces", 5, False),
        ("madame", None, True),
        ("madame", 1, False),
        ("grimace", None, False),
    ],
)
def test_signal_n_only_for_aces(signal: str, n: int | None, ok: bool) -> None:
    """R15: `aces` carries n in 1..4; no other signal carries n."""
    raw = {"type": "signal", "id": 1, "table": "t", "signal": signal}
    if n is not None:
        raw["n"] = n
    frame = msgpack.packb(raw)
    if ok:
        assert protocol.decode_client(frame).signal == signal  # type: ignore[union-attr]
    else:
        assert fails(frame).code is ErrorCode.INVALID_FIELD


def test_hello_name_is_cleaned_and_must_not_be_empty() -> None:
    frame = msgpack.packb({"type": "hello", "id": 1, "versions": [1], "name": "\x1b[2J Bo\u202e"})
    assert protocol.decode_client(frame).name == "[2J Bo"  # type: ignore[union-attr]
    frame = msgpack.packb({"type": "hello", "id": 1, "versions": [1], "name": "\u200b\x07"})
    assert fails(frame).code is ErrorCode.INVALID_FIELD


def test_a_name_made_mostly_of_combining_marks_is_refused() -> None:
    """Issue 30: "Zalgo" names draw over the lobby's other lines, like such chat text
    (refused there as too_many_marks); any name field, hello's and create_table's alike.
    Names written with marks (Devanagari, decomposed accents) stay welcome."""
    zalgo = "A" + "\u0301\u0316\u0334" * 9
    for frame in (
            msgpack.packb({"type": "hello", "id": 1, "versions": [1], "name": zalgo}),
            msgpack.packb({"type": "create_table", "id": 2, "name": zalgo})):
        err = fails(frame)
        assert err.code is ErrorCode.INVALID_FIELD
        assert err.details == {"field": "$.name"}
    for fine in ("नमस्ते", "Ame\u0301lie", "e\u0301"):
        frame = msgpack.packb({"type": "hello", "id": 1, "versions": [1], "name": fine})
        assert protocol.decode_client(frame).name == fine  # type: ignore[union-attr]


def test_error_reply_echoes_id_and_code() -> None:
    exc = fails(with_(card="zz"))
    reply = protocol.decode_server(protocol.encode(protocol.error_reply(exc)))
    assert reply == protocol.Error(
        id=42, code="unknown_card", message=exc.message, details={"field": "$.card"}
    )


def test_error_code_list_is_closed_and_documented() -> None:
    required = [
        "bad_frame",
        "frame_too_large",
        "unsupported_version",
        "unknown_type",
        "invalid_field",
        "hello_required",
        "not_your_turn",
        "card_not_in_hand",
        "unknown_card",
        "wrong_phase",
        "match_over",
        "seat_taken",
        "table_full",
        "not_seated",
        "not_at_table",
        "no_such_table",
        "bad_code",
        "not_creator",
        "not_ready",
        "bad_token",
        "storage_unavailable",
        "rate_limited",
        "too_many_tables",
        "too_many_spectators",
        "signals_off",
        "bad_discard",
        "internal_error",
    ]
    assert set(required) <= {c.value for c in ErrorCode}
    from pathlib import Path

    doc = (Path(__file__).parents[2] / "docs" / "PROTOCOL.md").read_text()
    for code in ErrorCode:
        assert f"`{code.value}`" in doc, f"{code.value} is not documented"
    for close in protocol.CloseCode:
        assert str(int(close)) in doc, f"close code {int(close)} is not documented"


# ---------------------------------------------------------------- 1.3: chat, R8a


def chat(text: str) -> bytes:
    return msgpack.packb({"type": "chat", "id": 9, "table": "t1", "text": text})


def test_chat_text_is_cleaned_on_the_way_in() -> None:
    """Control, format and bidi characters go; whitespace runs collapse (clean_text)."""
    cmd = protocol.decode_client(chat("  gg\x1b[2J \u202eevil\u200b  wp\n"))
    assert isinstance(cmd, protocol.Chat) and cmd.text == "gg[2J evil wp"


@pytest.mark.parametrize("text", [
    "x" * (protocol.MAX_CHAT_LEN + 1),                   # too long once cleaned
    "\x00\x1b\u200b\u202e",                              # nothing left
    "a" * (protocol.MAX_CHAT_RAW_LEN + 1),               # too long even to clean
])
def test_chat_too_long_or_empty_after_cleaning_is_invalid_field(text: str) -> None:
    exc = fails(chat(text))
    assert exc.code is ErrorCode.INVALID_FIELD and exc.id == 9
    assert exc.details == {"field": "$.text"}


def test_chat_at_the_limit_after_cleaning_is_accepted() -> None:
    """The limit counts code points after cleaning: controls around it do not count."""
    text = "\x07" * 300 + "é" * protocol.MAX_CHAT_LEN
    cmd = protocol.decode_client(chat(text))
    assert isinstance(cmd, protocol.Chat) and len(cmd.text) == protocol.MAX_CHAT_LEN


@pytest.mark.parametrize("value", ["", "ABCD", "ab\n", "g1", "a" * 65, 12])
def test_a_contribution_is_1_to_64_lowercase_hex_digits(value: Any) -> None:
    """R8a: anything else in `contribution` is invalid_field, never silently changed."""
    frame = msgpack.packb({"type": "start", "id": 3, "table": "t1", "contribution": value})
    exc = fails(frame)
    assert exc.code is ErrorCode.INVALID_FIELD and exc.details == {"field": "$.contribution"}


def test_a_contribution_of_64_hex_digits_is_accepted() -> None:
    frame = msgpack.packb({"type": "rematch", "id": 3, "table": "t1",
                           "contribution": "0f" * 32})
    assert protocol.decode_client(frame) == protocol.Rematch(id=3, table="t1",
                                                             contribution="0f" * 32)
