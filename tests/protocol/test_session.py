"""The session state machines of both ends, driven without any network (protocol/session.py).

What docs/PROTOCOL.md says about a session is decided here for the server, the terminal
client, the network bot and the tests alike: these cases pin it down frame by frame.
"""

from __future__ import annotations

import msgpack
import pytest

import protocol
from protocol import CloseCode, ErrorCode
from protocol.session import (
    ClientSession,
    Close,
    CommandReceived,
    Fatal,
    HelloReceived,
    Replied,
    Send,
    SequenceGap,
    ServerSession,
    SessionLost,
    TableEvent,
    TableLost,
    TableStream,
    Welcomed,
)


def frame(**fields: object) -> bytes:
    return msgpack.packb(fields)


def decoded(out: object) -> dict:
    assert isinstance(out, Send)
    return msgpack.unpackb(out.frame)


HELLO = frame(type="hello", id=1, versions=[1], name="Ana")


def open_server() -> ServerSession:
    s = ServerSession(now=0.0)
    [out] = s.receive(HELLO, 0.0)
    assert isinstance(out, HelloReceived) and out.version == 1
    welcome = s.accept_hello(out.hello, session="tok", player_id="p1", name="Ana")
    assert decoded(welcome)["type"] == "welcome"
    return s


# ------------------------------------------------------------------ server: hello first


def test_a_command_before_hello_is_refused_and_closes_4000() -> None:
    s = ServerSession(now=0.0)
    err, close = s.receive(frame(type="list_tables", id=3), 0.0)
    assert decoded(err)["code"] == "hello_required" and decoded(err)["id"] == 3
    assert close == Close(CloseCode.PROTOCOL_ERROR, "expected hello")
    assert s.receive(HELLO, 0.1) == []           # closed: nothing more is answered


def test_a_malformed_first_frame_closes_4000() -> None:
    s = ServerSession(now=0.0)
    err, close = s.receive(b"\xc1", 0.0)
    assert decoded(err)["code"] == "bad_frame"
    assert isinstance(close, Close) and close.code == CloseCode.PROTOCOL_ERROR


def test_unsupported_version_closes_4001() -> None:
    s = ServerSession(now=0.0)
    err, close = s.receive(frame(type="hello", id=1, versions=[9], name="Ana"), 0.0)
    assert decoded(err)["details"] == {"supported": [1]}
    assert isinstance(close, Close) and close.code == CloseCode.UNSUPPORTED_VERSION


@pytest.mark.parametrize(("code", "close"), [
    (ErrorCode.BAD_TOKEN, CloseCode.BAD_TOKEN),
    (ErrorCode.RATE_LIMITED, CloseCode.TRY_AGAIN_LATER),
    (ErrorCode.STORAGE_UNAVAILABLE, CloseCode.TRY_AGAIN_LATER),
    (ErrorCode.SHUTTING_DOWN, CloseCode.GOING_AWAY),
])
def test_a_refused_hello_closes_with_its_documented_code(code: ErrorCode,
                                                         close: CloseCode) -> None:
    s = ServerSession(now=0.0)
    [out] = s.receive(HELLO, 0.0)
    assert isinstance(out, HelloReceived)
    err, closing = s.refuse_hello(out.hello, protocol.CommandError(code, "no"))
    assert decoded(err)["code"] == code.value and decoded(err)["id"] == 1
    assert isinstance(closing, Close) and closing.code == close


def test_hello_twice_and_ping() -> None:
    s = open_server()
    [err] = s.receive(HELLO, 1.0)
    assert decoded(err)["code"] == "invalid_field"
    [pong] = s.receive(frame(type="ping", id=7), 1.0)
    assert decoded(pong) == {"type": "pong", "id": 7}
    [cmd] = s.receive(frame(type="list_tables", id=8), 1.0)
    assert isinstance(cmd, CommandReceived) and cmd.command.id == 8


# ------------------------------------------------------------------ server: limits


def test_every_frame_counts_towards_the_rate_limit_then_close_4003() -> None:
    s = ServerSession(now=0.0, rate_per_second=1, rate_burst=5, hard_multiplier=3)
    s.receive(HELLO, 0.0)
    outs = [s.receive(b"\xc1" if i % 2 else frame(type="ping", id=i), 0.0)
            for i in range(40)]
    flat = [o for batch in outs for o in batch]
    codes = [decoded(o).get("code") for o in flat if isinstance(o, Send)]
    assert "rate_limited" in codes
    assert Close(CloseCode.RATE_LIMITED, "too many commands") in flat


def test_ten_malformed_frames_within_a_minute_close_4000() -> None:
    s = open_server()
    for i in range(9):
        out = s.receive(b"\xc1", float(i))
        assert len(out) == 1 and decoded(out[0])["code"] == "bad_frame"
    _err, close = s.receive(b"\xc1", 9.0)
    assert close == Close(CloseCode.PROTOCOL_ERROR, "too many malformed frames")


def test_malformed_frames_spread_out_are_only_answered() -> None:
    s = open_server()
    for i in range(30):
        out = s.receive(b"\xc1", i * 7.0)          # one every 7 s: never 10 within 60 s
        assert [type(o) for o in out] == [Send]


#: Frames that are not messages: each counts towards the malformed-frame limit
#: (docs/PROTOCOL.md, "Limits": the 10th within 60 s closes with 4000).
COUNTED = {
    "not msgpack": b"\xc1",
    "trailing bytes": frame(type="ping", id=3) + b"\x00",
    "not a map": msgpack.packb([1, 2, 3]),
    "a text frame": "ping",
    "over 16 KiB": frame(type="list_tables", id=3, pad="x" * protocol.MAX_FRAME_BYTES),
    "no type": frame(id=3),
    "type not a string": frame(type=5, id=3),
    "no id": frame(type="ping"),
    "id not an int": frame(type="play", id="3", table="t", card="3o"),
    "id a float": frame(type="ping", id=3.0),
    "id negative": frame(type="ping", id=-1),
    "id too large": frame(type="ping", id=protocol.MAX_COMMAND_ID + 1),
    "unknown type, no id": frame(type="fly"),
}
#: Messages (a map, a string type, a valid id) refused for what they say: answered under
#: their id, never counted (issue 33: twelve `play {card: 5}` used to close the connection).
NOT_COUNTED = {
    "card not a string": (frame(type="play", id=3, table="t", card=5), "invalid_field"),
    "card unknown": (frame(type="play", id=3, table="t", card="Xx"), "unknown_card"),
    "field missing": (frame(type="play", id=3, card="3o"), "invalid_field"),
    "seat out of range": (frame(type="join", id=3, table="t", seat=7), "invalid_field"),
    "n without aces": (frame(type="signal", id=3, table="t", signal="madame", n=2),
                       "invalid_field"),
    "unknown type": (frame(type="fly", id=3), "unknown_type"),
    "a server message's type": (frame(type="welcome", id=3), "unknown_type"),
}


@pytest.mark.parametrize("bad", list(COUNTED.values()), ids=list(COUNTED))
def test_the_tenth_frame_that_is_not_a_message_closes_4000(bad: bytes | str) -> None:
    s = ServerSession(now=0.0, rate_per_second=1000, rate_burst=1000)
    s.receive(HELLO, 0.0)
    s.accept_hello(decode_hello(), session="tok", player_id="p1", name="Ana")
    for i in range(9):
        [err] = s.receive(bad, float(i))             # answered, and the connection stays
        assert decoded(err)["type"] == "error"
    err, close = s.receive(bad, 9.0)
    assert decoded(err)["type"] == "error"
    assert close == Close(CloseCode.PROTOCOL_ERROR, "too many malformed frames")


@pytest.mark.parametrize("bad", list(NOT_COUNTED.values()), ids=list(NOT_COUNTED))
def test_a_well_formed_message_refused_for_a_field_never_closes(bad: tuple[bytes, str]) -> None:
    s = ServerSession(now=0.0, rate_per_second=1000, rate_burst=1000)
    s.receive(HELLO, 0.0)
    s.accept_hello(decode_hello(), session="tok", player_id="p1", name="Ana")
    raw, code = bad
    for i in range(50):                            # five times the limit, within a second
        [err] = s.receive(raw, i / 100)
        assert decoded(err)["code"] == code and decoded(err)["id"] == 3
    # ... and they do not count towards the limit either: nine frames that do, then any
    # number of these, and the connection is still open; the tenth that counts closes it.
    for i in range(9):
        assert len(s.receive(b"\xc1", 1.0 + i / 100)) == 1
    assert len(s.receive(raw, 1.5)) == 1
    [cmd] = s.receive(frame(type="list_tables", id=4), 1.6)
    assert isinstance(cmd, CommandReceived)
    _err, close = s.receive(b"\xc1", 1.7)
    assert isinstance(close, Close) and close.code == CloseCode.PROTOCOL_ERROR


def test_the_first_frame_must_still_be_a_valid_hello() -> None:
    """Before the welcome, even a well-formed message refused for a field closes 4000."""
    s = ServerSession(now=0.0)
    err, close = s.receive(frame(type="hello", id=1, versions=[1], name=""), 0.0)
    assert decoded(err)["code"] == "invalid_field" and decoded(err)["id"] == 1
    assert close == Close(CloseCode.PROTOCOL_ERROR, "expected hello")


def decode_hello() -> protocol.Hello:
    command = protocol.decode_client(HELLO)
    assert isinstance(command, protocol.Hello)
    return command


# ------------------------------------------------------------------ server: events


def test_events_are_gap_free_and_duplicates_dropped() -> None:
    s = open_server()
    s.rebase("t", 4, [])
    assert s.event("t", 4, b"\x80") is None            # already had it
    assert s.event("t", 5, b"\x80") is not None
    with pytest.raises(SequenceGap):
        s.event("t", 7, b"\x80")
    with pytest.raises(SequenceGap):
        s.event("u", 1, b"\x80")                        # no head yet for that table


def test_resume_ok_then_replay_then_held_live_events_in_order() -> None:
    s = open_server()
    s.rebase("t", 10, [])
    s.begin_catchup("t")
    assert s.event("t", 13, b"\x81\xa1a\x01") is None   # live, held while the replay loads
    assert s.event("t", 14, b"\x81\xa1a\x02") is None
    ok = s.ok(5, {"table": "t"})
    frames = s.finish_resume("t", ok, [(11, b"\x80"), (12, b"\x80"), (13, b"\x80")], None)
    assert frames[0] is ok
    seqs = [decoded(f)["seq"] for f in frames[1:]]
    assert seqs == [11, 12, 13, 14]                      # the held 13 was a duplicate
    assert not s.needs_snapshot


def test_a_catchup_that_overflows_asks_for_a_snapshot() -> None:
    s = open_server()
    s.rebase("t", 0, [])
    s.begin_catchup("t")
    for seq in range(1, ServerSession.MAX_HELD + 5):
        s.event("t", seq, b"\x80")
    s.finish_resume("t", s.ok(5, {}), [], None)
    assert s.needs_snapshot


# ------------------------------------------------------------------ client


def welcome_frame(cid: int = 1, token: str = "tok2") -> bytes:
    return protocol.encode(protocol.Welcome(id=cid, version=1, session=token, player_id="p1",
                                            name="Ana"))


def event_frame(table: str, seq: int, payload: protocol.EventPayload | None) -> bytes:
    return protocol.encode(protocol.Event(table=table, seq=seq, event=payload))


def open_client(token: str | None = None) -> ClientSession:
    c = ClientSession("Ana", token=token)
    [hello] = c.connect()
    assert decoded(hello)["token"] == token
    [welcomed] = c.receive(welcome_frame())
    assert isinstance(welcomed, Welcomed) and c.token == "tok2"
    return c


def test_a_bot_client_says_so_in_every_hello() -> None:
    """1.5: a program says it is one, on its first connection and on every reconnection."""
    c = ClientSession("Robo", bot=True)
    [hello] = c.connect()
    assert decoded(hello)["bot"] is True
    c.receive(welcome_frame())
    c.connection_lost(1006)
    [again] = c.connect()
    assert decoded(again)["bot"] is True and decoded(again)["token"] == "tok2"
    [person] = ClientSession("Ana").connect()
    assert decoded(person)["bot"] is False


def test_client_follows_a_table_from_its_join_and_detects_a_gap() -> None:
    c = open_client()
    cid, [_send] = c.command(protocol.Join, table="t")
    ok = protocol.encode(protocol.Ok(id=cid, result={"table": "t", "seat": 2}))
    [replied] = c.receive(ok)
    assert isinstance(replied, Replied) and c.tables["t"].seat == 2
    info = protocol.TableInfo(table="t", seats=[protocol.SeatInfo()] * 4)
    # The head re-bases (seq 7), then events follow in order.
    [head] = c.receive(event_frame("t", 7, protocol.TableChanged(table=info)))
    assert isinstance(head, TableEvent) and c.tables["t"].seq == 7
    assert isinstance(c.receive(event_frame("t", 8, protocol.Turn(seat=1)))[0], TableEvent)
    assert c.receive(event_frame("t", 8, protocol.Turn(seat=1))) == []        # duplicate
    # A jump is a gap: the event is dropped and one resume goes out.
    [resume] = c.receive(event_frame("t", 11, protocol.Turn(seat=2)))
    assert decoded(resume)["type"] == "resume" and decoded(resume)["last_seq"] == 8
    assert c.receive(event_frame("t", 12, protocol.Turn(seat=3))) == []     # still resuming
    # A later table_changed that jumps is a gap too, not a head (no head is due).
    assert c.tables["t"].seq == 8


def test_client_applies_a_heads_chat_history_at_the_heads_seq() -> None:
    """1.4: ``chat_history`` is a head's last frame, stamped with the head's seq like the
    others; the rule for duplicates must not drop it."""
    c = open_client()
    cid, _ = c.command(protocol.Spectate, table="t")
    c.receive(protocol.encode(protocol.Ok(id=cid, result={"table": "t"})))
    info = protocol.TableInfo(table="t", seats=[protocol.SeatInfo()] * 4)
    c.receive(event_frame("t", 7, protocol.TableChanged(table=info)))
    history = protocol.ChatHistory(lines=[protocol.ChatMessage(
        from_seat=None, name="Sam", text="hi", sender="5" * 16)], sender="5" * 16)
    [got] = c.receive(event_frame("t", 7, history))
    assert got == TableEvent("t", 7, history) and c.tables["t"].seq == 7
    assert c.receive(event_frame("t", 7, protocol.Turn(seat=1))) == []      # duplicate
    [resume] = c.receive(event_frame("t", 9, history))       # not a head's: a gap
    assert decoded(resume)["type"] == "resume"


def test_client_resends_unanswered_commands_after_the_welcome() -> None:
    c = open_client("tok1")
    cid, _ = c.command(protocol.Play, table="t", card="3o")
    c.tables["t"] = c.tables.get("t") or TableStream("t")
    c.tables["t"].seq = 5
    lost = c.connection_lost(1006)
    assert lost == []                                   # a play is resent, not failed
    [hello] = c.connect()
    assert decoded(hello)["token"] == "tok2"            # the newest token
    outs = c.receive(welcome_frame(cid=decoded(hello)["id"], token="tok3"))
    sent = [decoded(o) for o in outs if isinstance(o, Send)]
    assert [m["type"] for m in sent] == ["resume", "play"]      # resume first, then resend
    assert sent[0]["last_seq"] == 5 and sent[0]["token"] == "tok3"
    assert sent[1]["id"] == cid                          # the same id


def test_client_non_resend_commands_fail_on_a_drop() -> None:
    c = open_client()
    cid, _ = c.command(protocol.Ping, resend=False)
    [failed] = c.connection_lost(1006)
    assert failed == Replied(cid, "ping", None)


def test_client_fatal_closes_and_lost_sessions() -> None:
    c = open_client()
    [fatal] = c.connection_lost(CloseCode.SESSION_REPLACED)
    assert isinstance(fatal, Fatal)
    d = ClientSession("Ana", token="old")
    d.tables["t"] = TableStream("t")
    d.connect()
    err = protocol.encode(protocol.Error(id=1, code="bad_token", message="gone"))
    lost, hello = d.receive(err)
    assert isinstance(lost, SessionLost) and d.tables == {}
    assert decoded(hello)["token"] is None


def test_client_a_refused_resume_loses_the_table() -> None:
    c = open_client()
    c.tables["t"] = TableStream("t")
    [resume] = c.resume("t")
    cid = decoded(resume)["id"]
    err = protocol.encode(protocol.Error(id=cid, code="not_at_table", message="no"))
    outs = c.receive(err)
    assert TableLost("t", "not_at_table") in outs and "t" not in c.tables


def test_a_resume_with_nothing_missed_still_starts_the_sequence() -> None:
    """A new connection resuming at its current number gets an empty replay; the live
    events held meanwhile must continue from that number (found: they were refused as
    'before the subscription's snapshot' and the viewer got a snapshot instead)."""
    s = open_server()
    s.begin_catchup("t")
    assert s.event("t", 8, b"\x80") is None                 # held
    frames = s.finish_resume("t", s.ok(5, {}), [], None, upto=7)
    assert [decoded(f)["seq"] for f in frames[1:]] == [8]
    assert not s.needs_snapshot
    assert s.event("t", 9, b"\x80") is not None


@pytest.mark.parametrize("code", ["storage_unavailable", "shutting_down", "server_busy",
                                  "rate_limited"])
def test_a_returning_session_refused_for_now_reconnects_later(code: str) -> None:
    """A reconnecting client whose hello (with its token) is refused for now (storage down,
    the server stopping or saturated, too many sessions at once: close 1013 or 1001 follows)
    keeps its session, its tables and its unanswered moves, and says hello again on the
    next connection. It used to stop for good, so a player lost the game to a blip."""
    c = open_client("tok1")
    cid, _ = c.command(protocol.Play, table="t", card="3o")
    c.tables["t"] = TableStream("t")
    c.tables["t"].seq = 5
    c.connection_lost(1006)
    [hello] = c.connect()
    err = protocol.encode(protocol.Error(id=decoded(hello)["id"], code=code, message="later"))
    assert not any(isinstance(o, Fatal) for o in c.receive(err))
    assert not any(isinstance(o, Fatal) for o in c.connection_lost(1013))
    [again] = c.connect()
    assert decoded(again)["token"] == "tok2" and "t" in c.tables
    outs = c.receive(welcome_frame(cid=decoded(again)["id"], token="tok3"))
    sent = [decoded(o) for o in outs if isinstance(o, Send)]
    assert [m["type"] for m in sent] == ["resume", "play"] and sent[1]["id"] == cid


def test_a_new_session_refused_for_now_is_told_why() -> None:
    """A first hello (no token) refused ``server_busy`` is shown to the person at once."""
    c = ClientSession("Ana")
    [hello] = c.connect()
    err = protocol.encode(protocol.Error(id=decoded(hello)["id"], code="server_busy",
                                         message="too busy"))
    [fatal] = c.receive(err)
    assert isinstance(fatal, Fatal) and "server_busy" in fatal.reason
