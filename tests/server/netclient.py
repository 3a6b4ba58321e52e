"""A small real websocket client for integration tests: the protocol as a third party sees it.

It sends plain msgpack maps (no protocol structs), decodes every server frame with
``protocol.decode_server``, keeps every raw frame (to scan for leaks), and lets a test wait
on a reply or an event with a timeout, never a sleep.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Iterator
from typing import Any

import msgpack
from websockets.asyncio.client import ClientConnection, connect

import protocol

Predicate = Callable[[dict[str, Any]], bool]


class ServerError(Exception):
    def __init__(self, reply: dict[str, Any]) -> None:
        super().__init__(f"{reply['code']}: {reply.get('message')}")
        self.code = reply["code"]
        self.reply = reply


class NetClient:
    def __init__(self, ws: ClientConnection, ids: Iterator[int] | None = None) -> None:
        self.ws = ws
        # Command ids are unique per session, across reconnects: the server answers a
        # repeated id with its first reply (that is how resending is made safe).
        self.ids = ids or itertools.count(1)
        self.frames: list[bytes] = []
        self.messages: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []          # {"table", "seq", "event"}
        self.replies: dict[int, dict[str, Any]] = {}
        self.unsolicited_errors: list[dict[str, Any]] = []
        self.changed = asyncio.Condition()
        self.welcome: dict[str, Any] = {}
        self.acked: list[str] = []          # cards whose play got an ok
        self.acted_turns: set[tuple[str, int]] = set()  # (table, seq) of turns acted on
        self.closed = asyncio.Event()
        self._reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def open(cls, url: str, name: str = "tester", token: str | None = None,
                   versions: list[int] | None = None, ids: Iterator[int] | None = None,
                   bot: bool | None = None) -> NetClient:
        ws = await connect(url, compression=None, max_size=protocol.MAX_SERVER_FRAME_BYTES)
        client = cls(ws, ids)
        hello: dict[str, Any] = {"versions": versions or [1], "name": name}
        if token:
            hello["token"] = token
        if bot is not None:
            hello["bot"] = bot
        client.welcome = await client.call("hello", **hello)
        return client

    async def _read(self) -> None:
        try:
            async for frame in self.ws:
                assert isinstance(frame, bytes)
                self.frames.append(frame)
                msg = protocol.to_dict(protocol.decode_server(frame))
                self.messages.append(msg)
                kind = msg["type"]
                if kind == "event":
                    self.events.append(msg)
                elif msg.get("id") is not None:
                    self.replies[msg["id"]] = msg
                elif kind == "error":
                    self.unsolicited_errors.append(msg)
                async with self.changed:
                    self.changed.notify_all()
        except Exception:
            pass
        finally:
            self.closed.set()
            async with self.changed:
                self.changed.notify_all()

    async def send_raw(self, frame: bytes | str) -> None:
        await self.ws.send(frame)

    async def request(self, kind: str, cid: int | None = None, **fields: Any) -> dict[str, Any]:
        """Send a command; return the whole reply (ok, error, welcome or pong)."""
        cid = next(self.ids) if cid is None else cid
        await self.ws.send(msgpack.packb({"type": kind, "id": cid, **fields}))
        return await self.reply(cid)

    async def reply(self, cid: int, timeout: float = 10) -> dict[str, Any]:
        async with asyncio.timeout(timeout), self.changed:
            await self.changed.wait_for(lambda: cid in self.replies or self.closed.is_set())
        if cid not in self.replies:
            raise ConnectionError("closed before the reply")
        return self.replies.pop(cid)

    async def call(self, kind: str, **fields: Any) -> dict[str, Any]:
        """Send a command and return its ``ok`` result (or the welcome); raise ServerError."""
        reply = await self.request(kind, **fields)
        if reply["type"] == "error":
            raise ServerError(reply)
        if kind == "play":
            self.acked.append(fields["card"])
        return reply.get("result", reply)

    async def wait_event(self, pred: Predicate, timeout: float = 20) -> dict[str, Any]:
        """The first event payload (from the start) matching ``pred``."""
        def find() -> dict[str, Any] | None:
            for e in self.events:
                if e.get("event") is not None and pred(e["event"]):
                    return e
            return None
        async with asyncio.timeout(timeout), self.changed:
            await self.changed.wait_for(lambda: find() is not None or self.closed.is_set())
        found = find()
        if found is None:
            raise ConnectionError("closed before the event")
        return found

    async def wait_until(self, pred: Callable[[], bool], timeout: float = 20) -> None:
        async with asyncio.timeout(timeout), self.changed:
            await self.changed.wait_for(lambda: pred() or self.closed.is_set())
        assert pred(), "connection closed first"

    def payloads(self, kind: str | None = None) -> list[dict[str, Any]]:
        return [e["event"] for e in self.events
                if e.get("event") is not None and (kind is None or e["event"]["type"] == kind)]

    def seqs(self, table: str) -> list[int]:
        return [e["seq"] for e in self.events if e["table"] == table]

    async def close(self) -> None:
        await self.ws.close()
        self._reader.cancel()
