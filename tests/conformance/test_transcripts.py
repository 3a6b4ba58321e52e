"""Recorded transcripts: frames in, the exact frames out (issue 10, Build item 7).

Each file in ``transcripts/`` is one conversation with a real server on 127.0.0.1, written
from docs/PROTOCOL.md alone. A step sends a frame for a client (``send``), or says what the
very next frame that client receives must be (``recv``), exactly: every field, no more,
no less. In an expected frame ``"*"`` stands for any value (a hand, a table's details) and
``"$name"`` for a value that is captured the first time and must be the same every other
time (a token, a table id). ``silent`` proves a client received nothing else: it pings and
the pong must be the very next frame. ``closed`` is the close code the server sends;
``disconnect`` closes a client's connection.

``test_every_documented_code_is_covered`` ties the transcripts to the document: every
error code and close code of docs/PROTOCOL.md is in a transcript, or in the named test
that produces it (the ones a transcript cannot: an outage, a shutdown, a slow reader).
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import msgpack
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from protocol import CloseCode, ErrorCode
from server.app import running
from tests.server.conftest import server_settings

HERE = Path(__file__).parent
TRANSCRIPTS = sorted((HERE / "transcripts").glob("*.json"))
ROOT = HERE.parents[1]


class Mismatch(AssertionError):
    pass


REF = re.compile(r"\$[A-Za-z]\w*(\.\d+)?\Z")


def lookup(ref: str, names: dict[str, Any]) -> Any:
    """``$name`` or ``$name.N`` (the N-th item of a captured list)."""
    name, _, index = ref.partition(".")
    value = names[name]
    return value[int(index)] if index else value


def match(expected: Any, actual: Any, names: dict[str, Any], path: str = "$") -> None:
    """``actual`` is exactly ``expected``, with ``*`` wildcards and ``$name`` captures."""
    if expected == "*":
        return
    if isinstance(expected, str) and REF.match(expected) and "." in expected:
        if lookup(expected, names) != actual:
            raise Mismatch(f"{path}: {actual!r} != {expected} ({lookup(expected, names)!r})")
        return
    if isinstance(expected, str) and REF.match(expected):
        if expected in names:
            if names[expected] != actual:
                raise Mismatch(f"{path}: {expected} was {names[expected]!r}, now {actual!r}")
        else:
            names[expected] = actual
        return
    if isinstance(expected, dict):
        if not isinstance(actual, dict) or set(expected) != set(actual):
            got = sorted(actual) if isinstance(actual, dict) else actual
            raise Mismatch(f"{path}: keys {got!r} != {sorted(expected)}")
        for key, value in expected.items():
            match(value, actual[key], names, f"{path}.{key}")
        return
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            raise Mismatch(f"{path}: {actual!r} != {expected!r}")
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            match(e, a, names, f"{path}[{i}]")
        return
    if expected != actual or type(expected) is not type(actual):
        raise Mismatch(f"{path}: {actual!r} != {expected!r}")


def substitute(value: Any, names: dict[str, Any]) -> Any:
    """A frame to send, with ``$name`` (or ``$name.N``) replaced by what was captured."""
    if isinstance(value, str) and REF.match(value) and value.partition(".")[0] in names:
        return lookup(value, names)
    if isinstance(value, dict):
        return {k: substitute(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, names) for v in value]
    return value


class Peer:
    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.ping_id = 10**9

    async def recv(self) -> dict[str, Any]:
        frame = await asyncio.wait_for(self.ws.recv(), 10)
        assert isinstance(frame, bytes), "the server sends binary frames only"
        decoded = msgpack.unpackb(frame)
        assert isinstance(decoded, dict)
        return decoded


async def play(transcript: dict[str, Any], redis_url: str, key_prefix: str) -> None:
    settings = replace(server_settings(redis_url, key_prefix), **transcript.get("settings", {}))
    names: dict[str, Any] = {}
    async with running(settings) as srv:
        url = f"ws://127.0.0.1:{srv.port}"
        peers: dict[str, Peer] = {}
        for i, step in enumerate(transcript["steps"]):
            who = step["as"]
            where = f"{transcript['name']} step {i} ({who})"
            try:
                if step.get("connect"):
                    peers[who] = Peer(await connect(url, compression=None, max_size=2**20))
                elif "send" in step:
                    frame = substitute(step["send"], names)
                    await peers[who].ws.send(msgpack.packb(frame))
                elif "send_hex" in step:
                    await peers[who].ws.send(bytes.fromhex(step["send_hex"]))
                elif "send_text" in step:
                    await peers[who].ws.send(step["send_text"])
                elif "send_padded" in step:
                    frame = dict(substitute(step["send_padded"]["frame"], names))
                    frame["pad"] = "x" * step["send_padded"]["bytes"]
                    await peers[who].ws.send(msgpack.packb(frame))
                elif "recv" in step:
                    match(step["recv"], await peers[who].recv(), names)
                elif "silent" in step:
                    peer = peers[who]
                    peer.ping_id += 1
                    await peer.ws.send(msgpack.packb({"type": "ping", "id": peer.ping_id}))
                    match({"type": "pong", "id": peer.ping_id}, await peer.recv(), names)
                elif "closed" in step:
                    with pytest.raises(ConnectionClosed):
                        while True:
                            extra = await peers[who].recv()
                            raise Mismatch(f"expected the close, got {extra!r}")
                    assert peers[who].ws.close_code == step["closed"], peers[who].ws.close_code
                elif step.get("disconnect"):
                    await peers[who].ws.close()   # the player's connection drops
                elif "wait_s" in step:
                    await asyncio.sleep(step["wait_s"])   # only to let a server timer expire
                else:
                    raise ValueError(f"unknown step {step!r}")
            except Mismatch as exc:
                raise AssertionError(f"{where}: {exc}") from None
        for peer in peers.values():
            await peer.ws.close()


@pytest.mark.parametrize("transcript", [json.loads(p.read_text()) for p in TRANSCRIPTS],
                         ids=[p.stem for p in TRANSCRIPTS])
async def test_transcript(transcript: dict[str, Any], redis_url: str, key_prefix: str,
                          redis_client: Any) -> None:
    await play(transcript, redis_url, key_prefix)


#: Codes no transcript can produce (they need an outage, a shutdown, two processes, a
#: reader that stops reading...), and the test that produces each on a real server.
ELSEWHERE = {
    "storage_unavailable": "tests/durability/test_restart.py::"
                           "test_storage_outage_refuses_commands_then_play_continues",
    "shutting_down": "tests/server/test_promises.py::test_shutting_down_refuses_and_hello_1001",
    "internal_error": "tests/server/test_promises.py::test_an_internal_error_leaks_nothing",
    "conflict": "tests/server/test_promises.py::test_a_table_that_keeps_changing_is_a_conflict",
    "server_busy": "tests/server/test_admission.py::"
                   "test_a_saturated_server_refuses_new_tables_and_sessions_but_serves_its_games",
    "match_over": "tests/server/test_promises.py::test_a_move_after_the_match_is_match_over",
    "too_many_reviews": "tests/server/test_reviews.py::test_reviews_are_bounded_per_player",
    "1001": "tests/server/test_promises.py::test_sigterm_close_code_is_the_documented_1001",
    "1013": "tests/server/test_abuse.py::test_connections_are_limited_per_address_hello_or_not",
    "4008": "tests/server/test_lifecycle.py::test_a_slow_reader_is_dropped_and_resumes_whole",
}
#: Close codes the document lists that this server never sends (reserved or client-side).
NEVER_SENT = {"1000", "1006", "1011", "1012"}


def test_every_documented_code_is_covered() -> None:
    text = "\n".join(p.read_text() for p in TRANSCRIPTS)
    covered_errors = set(re.findall(r'"code":\s*"([a-z_]+)"', text))
    covered_closes = set(re.findall(r'"closed":\s*(\d+)', text))
    doc = (ROOT / "docs" / "PROTOCOL.md").read_text()
    for code in ErrorCode:
        assert f"`{code.value}`" in doc
        assert code.value in covered_errors or code.value in ELSEWHERE, \
            f"no transcript or test produces error {code.value}"
    for close in CloseCode:
        key = str(int(close))
        assert key in covered_closes or key in ELSEWHERE or key in NEVER_SENT, \
            f"no transcript or test produces close {key}"
    for name, test in ELSEWHERE.items():
        file, _, func = test.partition("::")
        assert f"def {func}(" in (ROOT / file).read_text(), f"{name}: {test} is missing"


def test_every_command_has_a_transcript() -> None:
    from protocol import CLIENT_TYPES

    text = "\n".join(p.read_text() for p in TRANSCRIPTS)
    sent = set(re.findall(r'"send":\s*\{\s*"type":\s*"([a-z_]+)"', text))
    assert set(CLIENT_TYPES) <= sent, set(CLIENT_TYPES) - sent
