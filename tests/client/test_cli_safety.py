"""Names and messages from the network never reach the terminal as escape sequences.

The server cleans names on the way in, so the real-server test shows the end-to-end result;
the fake-server test sends raw escape sequences itself (a hostile or buggy server) and
checks that the client's own cleaning (protocol.clean_text) and rich ``Text`` rendering (no
markup) make them harmless.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from websockets.asyncio.server import ServerConnection, serve

import protocol

from .conftest import ServerProcess

EVIL = "[bold]\x1b[31mEVIL\x1b]0;pwn\x07"
SHOWN = "[bold][31mEVIL]0;pwn"           # what clean_text leaves: printable, inert
FORBIDDEN = ("\x1b[31mEVIL", "\x1b]0;pwn", "\x07", "\x1b[2J", "\x1b]0;opt")


def assert_harmless(output: str) -> None:
    for seq in FORBIDDEN:
        assert seq not in output, f"{seq!r} reached the terminal"


def test_evil_name_from_a_real_server(server_proc: ServerProcess, spawn) -> None:
    # Colours on and a real terminal type: the client writes its own escapes, never the name's.
    ana = spawn("--server", server_proc.url, "--name", "Ana", term="xterm-256color",
                color=True)
    ana.expect("Type `help`")
    ana.send("create deals=1 delay=0 name=Plain")
    table = ana.expect(r"Created table (t[0-9a-f]+)").group(1)
    evil = spawn("--server", server_proc.url, "--name", EVIL)
    evil.expect("Type `help`")
    evil.send(f"join {table} 1")
    evil.expect("You sit at seat 1")
    ana.expect(f"Seat 1: {SHOWN} sits down".replace("[", r"\[").replace("]", r"\]"))
    ana.send("tables")
    ana.expect("Plain")
    assert SHOWN in ana.output
    assert "[bold]" in ana.output              # printed, not interpreted as rich markup
    assert_harmless(ana.output)
    assert_harmless(evil.output)
    evil.quit()
    ana.quit()


# --------------------------------------------------------------------------- a hostile server


class FakeServer:
    """Answers like a server but puts escape sequences in every string it sends."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.port = 0
        self.ready = threading.Event()
        self.stop: asyncio.Event | None = None
        self.thread = threading.Thread(target=self._main, daemon=True)

    def _main(self) -> None:
        self.loop.run_until_complete(self._serve())

    async def _serve(self) -> None:
        self.stop = asyncio.Event()
        async with serve(self._handle, "127.0.0.1", 0) as server:
            self.port = server.sockets[0].getsockname()[1]
            self.ready.set()
            await self.stop.wait()

    async def _handle(self, ws: ServerConnection) -> None:
        async for frame in ws:
            cmd = protocol.decode_client(frame)  # type: ignore[arg-type]
            reply: Any
            if isinstance(cmd, protocol.Hello):
                reply = protocol.Welcome(id=cmd.id, version=1, session="tok",
                                         player_id="p1", name="\x1b[2JMal" + EVIL)
            elif isinstance(cmd, protocol.ListTables):
                seats = [{"kind": "human", "name": EVIL, "level": None, "connected": True},
                         {"kind": "bot", "name": "x", "level": "normal", "connected": True},
                         {"kind": "empty", "name": None, "level": None, "connected": False},
                         {"kind": "empty", "name": None, "level": None, "connected": False}]
                info = {"table": "t\x1b[2Jevil", "name": EVIL, "seats": seats,
                        "status": "waiting", "options": {}}
                # A malformed entry (a string where a number belongs) is dropped whole.
                bad = dict(info, table="t2", options={"target_points": "\x1b]0;opt\x07"})
                reply = protocol.Ok(id=cmd.id, result={"tables": [info, bad], "seats": [
                    {"table": "\x1b]0;opt\x07", "seat": "\x1b]0;opt\x07"}]})
            else:
                reply = protocol.Error(id=cmd.id, code="brand_new_code",
                                       message=f"\x1b[2J{EVIL} boom")
            await ws.send(protocol.encode(reply))

    def close(self) -> None:
        if self.stop is not None:
            self.loop.call_soon_threadsafe(self.stop.set)
        self.thread.join(5)


@pytest.fixture
def fake_server() -> Iterator[FakeServer]:
    server = FakeServer()
    server.thread.start()
    assert server.ready.wait(10)
    try:
        yield server
    finally:
        server.close()


def test_escape_sequences_from_a_hostile_server_are_harmless(fake_server: FakeServer,
                                                             spawn) -> None:
    cli = spawn("--server", f"ws://127.0.0.1:{fake_server.port}", "--name", "Ana",
                term="xterm-256color", color=True)
    cli.expect("Type `help`")
    cli.expect("Tables")
    cli.send("join tevil 1")
    cli.expect("boom")                       # an unknown error code is still shown in words
    cli.quit()
    out = cli.output
    assert "[2JMal" + SHOWN in out           # the welcome name, cleaned
    assert SHOWN in out                       # the table and seat names, cleaned
    assert "[2Jevil" in out                   # the table id, cleaned
    assert_harmless(out)
