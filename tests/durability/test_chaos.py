"""Chaos: the server is SIGKILLed again and again while four players play (issue 6).

Players behave like the real client: on a drop they reconnect with their newest token,
resume from their last sequence number and resend an unanswered command with its
original id. At the end the stored record must hold every acknowledged move exactly once,
in each seat's order, and nothing else.
"""

from __future__ import annotations

import asyncio
import random

import pytest
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from tests.server.netclient import NetClient, ServerError
from tests.server.players import Hand

from .test_restart import plays_by_seat, start_four

pytestmark = pytest.mark.slow


class ResilientPlayer:
    def __init__(self, client: NetClient, url: str, table: str, seat: int,
                 progress: asyncio.Condition) -> None:
        self.client, self.url, self.table, self.seat = client, url, table, seat
        self.progress = progress
        self.index = 0                    # next event to read
        self.done_seq = 0                 # turns at or below this are handled
        self.pending: tuple[int, str] | None = None
        self.acked: list[str] = []
        self.hand = Hand()
        self.connected = asyncio.Event()
        self.connected.set()

    async def run(self) -> dict:
        while True:
            try:
                return await self._play()
            except (ConnectionError, ConnectionClosed, AssertionError):
                self.connected.clear()
                await self._reconnect()
            except ServerError as exc:
                assert exc.code in ("shutting_down", "storage_unavailable"), exc
                await self._reconnect()
            finally:
                async with self.progress:
                    self.progress.notify_all()

    async def _send_pending(self) -> None:
        cid, card = self.pending
        reply = await self.client.request("play", cid=cid, table=self.table, card=card)
        if reply["type"] == "error":
            if reply["code"] == "not_your_turn":
                self.pending = None          # a stale hint: that turn was already taken
                return
            raise ServerError(reply)
        self.acked.append(card)
        self.pending = None
        async with self.progress:
            self.progress.notify_all()

    async def _play(self) -> dict:
        c = self.client
        while True:
            if self.pending is not None:
                await self._send_pending()
            await c.wait_until(lambda: len(c.events) > self.index or c.closed.is_set())
            if len(c.events) <= self.index:
                raise ConnectionError("dropped")
            entry = c.events[self.index]
            self.index += 1
            event = entry.get("event")
            if event is None:
                continue
            self.hand.apply(event, self.seat)
            if event["type"] == "match_over":
                return event
            if event["type"] == "turn" and event["seat"] == self.seat \
                    and entry["seq"] > self.done_seq:
                self.done_seq = entry["seq"]
                # A hint sent when we came back, before our resent play was applied, is
                # answered already: our card_played follows it in the stream.
                if not any((e.get("event") or {}).get("type") == "card_played"
                           and e["event"]["seat"] == self.seat
                           for e in c.events[self.index:]):
                    self.pending = (next(c.ids), self.hand.cards[-1])

    async def _reconnect(self) -> None:
        old = self.client
        for _attempt in range(200):
            try:
                new = await NetClient.open(self.url, old.welcome["name"],
                                           token=old.welcome["session"], ids=old.ids)
                break
            except (OSError, InvalidHandshake, ConnectionClosed, ConnectionError, TimeoutError):
                await asyncio.sleep(0.1)      # the server is restarting: back off, retry
        else:
            raise AssertionError("could not reconnect")
        seen = [e for e in old.events]
        new.events = seen
        last = max(e["seq"] for e in seen)
        # Keep only what was read so far in order; events after a drop come again.
        self.index = min(self.index, len(seen))
        self.client = new
        await new.call("resume", token=new.welcome["session"], table=self.table,
                       last_seq=last)
        self.connected.set()


async def test_random_sigkills_never_lose_or_repeat_an_acknowledged_move(server_process):
    proc = await server_process()
    url = server_process.url
    table, clients = await start_four(url, deals=3)
    progress = asyncio.Condition()
    players = [ResilientPlayer(c, url, table, i, progress) for i, c in enumerate(clients)]
    tasks = [asyncio.create_task(p.run()) for p in players]
    rng = random.Random(2026)
    kills = 0

    def acked() -> int:
        return sum(len(p.acked) for p in players)

    try:
        for _ in range(6):
            target = acked() + rng.randint(3, 12)
            async with asyncio.timeout(60), progress:
                await progress.wait_for(lambda t=target: acked() >= t
                                        or any(x.done() for x in tasks))
            if any(t.done() for t in tasks):
                break
            await proc.kill()
            kills += 1
            proc = await server_process()
            async with asyncio.timeout(60):
                for p in players:
                    await p.connected.wait()
        results = await asyncio.wait_for(asyncio.gather(*tasks), 120)
    finally:
        for t in tasks:
            t.cancel()
    assert kills >= 5
    by_seat = plays_by_seat(results[0]["record"])
    for p in players:
        assert by_seat[p.seat] == p.acked, f"seat {p.seat}"
    assert sum(len(v) for v in by_seat.values()) == 108
