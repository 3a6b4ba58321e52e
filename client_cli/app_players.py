"""The terminal client's player commands (issue 27): `play` (play now), `cancel`,
`history`, `profile`."""

from __future__ import annotations

import asyncio
import time

import protocol

from . import render, render_players
from .app_core import AppCore
from .commands import InputError, parse_create

#: How often a wait in the queue says it is still waiting (seconds).
WAIT_NOTE_S = 20.0
#: What the wait's tasks serve in the App's task scope (no table id holds a NUL).
WAIT = "\0wait"


class PlayerCommands(AppCore):
    """`play` without a card: wait in the matchmaking queue (a visible wait, `cancel`);
    `history`, `profile`."""

    _queued: tuple[bool, float] | None = None
    _history_next: tuple[str | None, str | None] | None = None

    async def _play_now(self, args: list[str]) -> None:
        rated = False
        if args and args[0].lower() in ("rated", "casual"):
            rated = args[0].lower() == "rated"
            args = args[1:]
        options, private, _ = parse_create(args)
        if private:
            raise InputError("Play now makes public tables; `create private` for a private one.")
        seated_before = self.conn.last_matched
        result = await self.conn.call(protocol.Queue, rated=rated,
                                      options=protocol.options_from_dict(options))
        if self.conn.last_matched is not seated_before:
            # Our request made a table at once, and the matchmaker's `matched` overtook
            # the answer (it may come from another process): we are seated, not waiting.
            return
        self._queued = (rated, time.monotonic())
        self.show(render.note(f"Looking for players ({'rated' if rated else 'casual'}; "
                              f"{result.get('waiting', 1)} waiting now). You will be seated "
                              "by yourself; `cancel` stops waiting."))
        self._start_wait_notes()

    async def _cancel(self) -> None:
        result = await self.conn.call(protocol.Unqueue)
        self._stop_waiting()
        self.show(render.note("You left the queue." if result.get("queued")
                              else "You were not waiting for a game."))

    def _start_wait_notes(self) -> None:
        """While we wait in the queue, say so now and then: a task of the App's scope that
        serves the wait, so it ends with the wait (seated, `cancel`) or the program."""
        self.tasks.end(WAIT)

        async def notes() -> None:
            while self._queued is not None:
                await asyncio.sleep(WAIT_NOTE_S)
                if self._queued is not None:
                    self.show(render_players.waiting_line(*self._queued))
        self._spawn("wait notes", notes(), serves=WAIT)

    def _stop_waiting(self) -> None:
        self._queued = None
        self.tasks.end(WAIT)

    def _on_status(self, kind: str, text: str) -> None:
        if kind == "matched" and self.conn.last_matched is not None:
            self._seated_by_matchmaker(self.conn.last_matched.table)
        super()._on_status(kind, text)

    def _seated_by_matchmaker(self, table: str) -> None:
        """``matched``: the wait is over; this table is the current one."""
        self._stop_waiting()
        self.current = table

    async def _history(self, args: list[str]) -> None:
        cursor = None
        name: str | None = None
        if args and args[0].lower() == "more":
            if self._history_next is None or self._history_next[1] is None:
                raise InputError("No older matches: type `history` (or `history NAME`).")
            name, cursor = self._history_next
        elif args:
            name = " ".join(args)
        result = protocol.results.decode_result(
            "history", await self.conn.call(protocol.History, name=name, cursor=cursor, limit=10))
        assert isinstance(result, protocol.HistoryResult)
        self._history_next = (name, result.next)
        for line in render_players.history_lines(
                result, "your" if name is None else f"{protocol.clean_text(name)}'s"):
            self.show(line)

    async def _profile(self, args: list[str]) -> None:
        if not args:
            raise InputError("Type `profile NAME` (a registered player's name).")
        result = protocol.results.decode_result(
            "profile", await self.conn.call(protocol.Profile, name=" ".join(args)))
        assert isinstance(result, protocol.ProfileResult)
        for line in render_players.profile_lines(result):
            self.show(line)

