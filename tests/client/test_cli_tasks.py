"""Every task the terminal client's prompt starts lives in the App's task scope
(client_cli/tasks.py): its failure is logged with its name, and it is cancelled when the
table, the play-now wait or the program it serves ends (docs/ARCHITECTURE.md: a task lives
in a scope that ends with what it serves)."""

from __future__ import annotations

import asyncio
import io
import logging

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from client_cli import app_players
from client_cli.app import App
from client_cli.app_players import WAIT

from .conftest import ServerProcess

NOWHERE = "ws://127.0.0.1:9"     # never connected: these tests drive the App's own parts


def console() -> Console:
    return Console(file=io.StringIO(), width=100, color_system=None)


def still_running() -> list[asyncio.Task[object]]:
    """Tasks of this loop (but the test's own) neither done nor being cancelled."""
    me = asyncio.current_task()
    return [t for t in asyncio.all_tasks() if t is not me and not t.done()
            and not t.cancelling()]


async def test_quitting_ends_the_play_now_waits_notes(server_proc: ServerProcess) -> None:
    """The real prompt, on a real server: `play` starts the wait's notes, `quit` ends the
    program; nothing the App started is left running (the notes were a loose
    ``ensure_future`` before)."""
    out = console()
    app = App(server_proc.url, "Ana", out, initial=["play deals=1"])
    with create_pipe_input() as keys, create_app_session(input=keys, output=DummyOutput()):
        keys.send_text("quit\n")
        assert await asyncio.wait_for(app.run(), 30) == 0
    assert "Looking for players" in out.file.getvalue()  # type: ignore[attr-defined]
    assert still_running() == []
    assert app.tasks.closed and app.tasks.running() == []


async def test_a_failing_task_is_logged_with_its_name(caplog: pytest.LogCaptureFixture,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app_players, "WAIT_NOTE_S", 0.0)
    app = App(NOWHERE, "Ana", console())
    app._queued = (False, "not a time")  # type: ignore[assignment]  # a note that cannot be written
    with caplog.at_level(logging.ERROR, logger="client_cli.tasks"):
        app._start_wait_notes()
        [task] = app.tasks.running(WAIT)
        await asyncio.wait([task], timeout=10)
    assert isinstance(task.exception(), TypeError)
    assert "task aluette: wait notes failed" in caplog.text
    assert app.tasks.failures == 1 and app.tasks.running() == []


async def test_being_seated_ends_the_waits_notes() -> None:
    app = App(NOWHERE, "Ana", console())
    app._queued = (False, 0.0)
    app._start_wait_notes()
    [task] = app.tasks.running(WAIT)
    app._seated_by_matchmaker("t1")
    await asyncio.wait([task], timeout=10)
    assert task.cancelled() and app.current == "t1"


async def test_leaving_a_table_ends_following_its_review() -> None:
    """`review` follows the expert's progress in the background; once we leave the table
    that follower must not go on (it would open the replay over another table)."""
    app = App(NOWHERE, "Ana", console())
    app.conn.model("t1").seat = 0
    app.conn.model("t2").seat = 1
    app.current = "t1"
    app._review([])
    app.current = "t2"
    app._review([])
    [review] = app.tasks.running("t1")
    [other] = app.tasks.running("t2")
    assert review.get_name() == "aluette: review"
    app._forget("t1")
    await asyncio.wait([review], timeout=10)
    assert review.cancelled() and not other.done()
    assert "t1" not in app.conn.tables
    await app.tasks.close()
    assert other.cancelled()
