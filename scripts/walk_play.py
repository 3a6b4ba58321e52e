"""The path of one ``play`` through the project's code, from frame to commit to broadcast.

    .venv/bin/python scripts/walk_play.py [--sequence]

Starts the real server in-process (embedded store), seats four network clients, and traces
the handling of one ``play`` frame in the task that serves the player's connection, with
``sys.setprofile``: every call into and return from the project's own files (``server/``,
``protocol/``), until the last viewer has been sent the card. Prints JSON: the *path* (the
project files on the stack when the frame is decoded, when the engine applies the card,
when the store's commit script is called and when each frame is written: what a reader
follows from frame to commit to broadcast; the helpers called on the way and returned from
are read by name), every file reached in the order control first reaches it, and the
*hops* (control passing
from one project file to another, calls and returns alike, so going back and forth counts;
``distinct_hops`` counts each ordered pair of files once, so fan-out to four viewers is not
counted four times).
A measure of structure, not of speed (docs/ARCHITECTURE.md, "The path of a command").
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import sys
import tempfile
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import msgpack  # noqa: E402
from websockets.asyncio.client import ClientConnection, connect  # noqa: E402

from server.app import running  # noqa: E402
from server.config import Settings  # noqa: E402

PROJECT = (str(ROOT / "server") + "/", str(ROOT / "protocol") + "/")


def _project_file(frame: FrameType | None) -> str | None:
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith(PROJECT):
            return str(Path(name).relative_to(ROOT))
        frame = frame.f_back
    return None


#: The moments that make the path of a play: the frame decoded, the engine applying the
#: card, the store's commit script called (on the commits' line, or through redis-py on a
#: Cluster), each frame written to a socket.
MARKS = {("protocol/codec.py", "decode_client"): "frame in",
         ("server/game/match.py", "apply"): "engine",
         ("server/store/line.py", "send"): "store",
         ("redis/commands/core.py", "__call__"): "store",
         ("websockets/protocol.py", "send_binary"): "frame out"}


def _stack(frame: FrameType | None) -> list[str]:
    files: list[str] = []
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith(PROJECT):
            where = str(Path(name).relative_to(ROOT))
            if where not in files:
                files.append(where)
        frame = frame.f_back
    return files[::-1]


class Trace:
    """Per task: the project file control is in, as a sequence without repeats; and the
    project files on the stack at each of the :data:`MARKS`."""

    def __init__(self) -> None:
        self.by_task: dict[Any, list[str]] = {}
        self.marked: dict[Any, dict[str, list[str]]] = {}

    def __call__(self, frame: FrameType, event: str, arg: object) -> None:
        if event not in ("call", "return"):
            return
        try:
            task = asyncio.current_task()
        except RuntimeError:
            return
        if event == "call":
            code = frame.f_code
            for (suffix, func), mark in MARKS.items():
                if code.co_name == func and code.co_filename.endswith(suffix):
                    files = self.marked.setdefault(task, {}).setdefault(mark, [])
                    files.extend(f for f in _stack(frame) if f not in files)
        where = _project_file(frame if event == "call" else frame.f_back)
        if where is None:
            return
        seq = self.by_task.setdefault(task, [])
        if not seq or seq[-1] != where:
            seq.append(where)


async def _call(ws: ClientConnection, cid: int, kind: str, **fields: Any) -> dict[str, Any]:
    await ws.send(msgpack.packb({"type": kind, "id": cid, **fields}))
    while True:
        msg = msgpack.unpackb(await ws.recv())
        if msg.get("id") == cid and msg["type"] in ("ok", "error", "welcome", "pong"):
            if msg["type"] == "error":
                raise RuntimeError(msg)
            return msg.get("result", msg)  # type: ignore[no-any-return]


async def _until_card(ws: ClientConnection, card: str) -> None:
    while True:
        msg = msgpack.unpackb(await ws.recv())
        event = msg.get("event") or {}
        if event.get("type") == "card_played" and event.get("card") == card:
            return


async def walk() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(port=0, data_dir=Path(tmp) / "data", busy_lag_ms=0,
                            bot_workers=0, sweep_interval_s=3600)
        async with running(settings) as srv:
            url = f"ws://127.0.0.1:{srv.port}"
            seats = [await connect(url, compression=None) for _ in range(4)]
            for i, ws in enumerate(seats):
                await _call(ws, 1, "hello", versions=[1], name=f"W{i}")
            opts = {"deals": 1, "first_dealer": 3, "chanter": False, "signals": "off"}
            table = (await _call(seats[0], 2, "create_table", options=opts))["table"]
            for i in (1, 2, 3):
                await _call(seats[i], 2, "join", table=table, seat=i)
            await _call(seats[0], 3, "start", table=table)
            live = srv.hub.tables[table]
            seat = live.match.to_act
            card = str(live.match.hands[seat][0])   # the driver only: a legal lead
            for ws in seats:                          # let the start's frames go out first
                await _call(ws, 9, "ping")
            trace = Trace()
            sys.setprofile(trace)
            try:
                await seats[seat].send(msgpack.packb({"type": "play", "id": 10,
                                                      "table": table, "card": card}))
                await asyncio.gather(*(_until_card(ws, card) for ws in seats))
            finally:
                sys.setprofile(None)
            for ws in seats:
                await ws.close()
    task, path = max(((t, s) for t, s in trace.by_task.items() if "protocol/session.py" in s),
                     key=lambda item: len(item[1]))
    files = list(dict.fromkeys(path))
    marked = trace.marked.get(task, {})
    on_path = {f for fs in marked.values() for f in fs}
    passing = [f for f in files if f in on_path]
    edges = sorted({f"{a} -> {b}" for a, b in itertools.pairwise(path)})
    return {"path_files": len(passing), "files": len(files), "hops": len(path) - 1,
            "distinct_hops": len(edges), "path": passing, "at": marked,
            "first_reached": files, "edges": edges, "sequence": path}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sequence", action="store_true",
                        help="print every hop and each distinct one too")
    args = parser.parse_args()
    result = asyncio.run(walk())
    if not args.sequence:
        result.pop("sequence")
        result.pop("edges")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
