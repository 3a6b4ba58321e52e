"""Recorded transcripts: frames in, the exact frames out (issue 10, Build item 7).

Each file in ``transcripts/`` is one conversation with a real server on 127.0.0.1, written
from docs/PROTOCOL.md alone; conformance/README.md documents the format for client authors
and conformance/run.py replays them (this test runs the same replay). A step sends a frame
for a client (``send``), or says what the very next frame that client receives must be
(``recv``), exactly: every field, no more, no less. In an expected frame ``"*"`` stands for
any value (a hand, a table's details) and ``"$name"`` for a value that is captured the
first time and must be the same every other time (a token, a table id). ``silent`` proves
a client received nothing else: it pings and the pong must be the very next frame.
``closed`` is the close code the server sends; ``disconnect`` closes a client's connection.

``test_every_documented_code_is_covered`` ties the transcripts to the document: every
error code and close code of docs/PROTOCOL.md is in a transcript, or in the named test
that produces it (the ones a transcript cannot: an outage, a shutdown, a slow reader).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from conformance.run import replay
from protocol import CloseCode, ErrorCode
from server.app import running
from tests.server.conftest import server_settings

HERE = Path(__file__).parent
TRANSCRIPTS = sorted((HERE / "transcripts").glob("*.json"))
ROOT = HERE.parents[1]


async def play(transcript: dict[str, Any], redis_url: str, key_prefix: str) -> None:
    """The conformance kit's own replay (conformance/run.py), against an in-process server
    under the transcript's settings: the suite and the kit run the same code."""
    settings = replace(server_settings(redis_url, key_prefix), **transcript.get("settings", {}))
    async with running(settings) as srv:
        await replay(transcript, f"ws://127.0.0.1:{srv.port}")


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
    "too_many_marks": "tests/server/test_chat_marks_and_mutes.py::"
                      "test_chat_made_mostly_of_combining_marks_is_refused",
    "being_matched": "tests/server/test_players_queue.py::"
                     "test_a_seat_by_hand_while_the_matchmaker_takes_the_player_is_refused",
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
