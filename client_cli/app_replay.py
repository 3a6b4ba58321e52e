"""The terminal client's look back at a finished match: its replay, the expert's review of
a seat's decisions, and (at a table with ``hints``) what the expert would play now
(issue 28)."""

from __future__ import annotations

import asyncio
from typing import cast

from rich.text import Text

import protocol
from protocol.records import Record
from server.game.errors import RecordError

from . import render
from .app_core import explain
from .app_game import GameCommands
from .commands import InputError, parse_replay_args, parse_seat
from .connection import ConnectionFailed, ServerError
from .model import TableModel
from .replay import (
    REVIEW_POLL_S,
    HintMap,
    Replay,
    ReviewMap,
    ReviewProgress,
    hint_text,
    keys_text,
    review_progress,
    review_summary,
)


class ReplayCommands(GameCommands):
    """`replay`, `review`, `hint`; while a replay runs, every line steps through it."""

    #: A finished match being replayed (`replay`): input lines step through it.
    replaying: Replay | None = None

    async def _replay(self, args: list[str]) -> None:
        """Step through a finished match, every hand face up (issue 28): this table's, or
        another's by its id or a browser's replay link (a private one's with its code)."""
        table, match, code = parse_replay_args(args)
        seat = None
        if table is None:
            table, seat = self._need_table(), self._need_model().seat
        result = await self.conn.call(protocol.GetRecord, table=table, match=match, code=code)
        try:
            # The wire's edge: a plain map, checked by the replay (R18) before any use.
            self.replaying = Replay(cast(Record, result.get("record") or {}), seat=seat)
        except (RecordError, KeyError, TypeError, ValueError) as exc:
            raise InputError(f"This record cannot be replayed: {exc}") from None
        self.show(self.replaying.render())

    def _review(self, args: list[str]) -> None:
        """The expert's review of a seat of this table's last match (protocol 1.5), followed
        in the background with a progress bar; once made, the replay opens with its marks."""
        model = self._need_model()
        if len(args) > 1:
            raise InputError("Type `review`, or `review SEAT` for another seat's decisions.")
        seat = parse_seat(args[0]) if args else model.seat
        if seat is None:
            raise InputError("Type `review SEAT` (0-3): whose decisions the expert reviews.")

        async def follow() -> None:
            try:
                await self._follow_review(model, seat)
            except (ServerError, ConnectionFailed, TimeoutError) as exc:
                self.show(explain(exc))

        self._spawn("review", follow(), serves=model.table)

    async def _follow_review(self, model: TableModel, seat: int) -> None:
        shown = None
        while True:
            r = await self.conn.call(protocol.RequestReview, table=model.table, seat=seat)
            if r.get("status") == "done":
                break
            if r.get("status") == "failed":
                self.show(render.problem(f"The review could not be made: "
                                         f"{protocol.clean_text(str(r.get('error')))[:200]}"))
                return
            now = (r.get("status"), r.get("done"), r.get("total"))
            if now != shown:
                shown = now
                self.show(review_progress(cast(ReviewProgress, r), render.who(model, seat)))
            await asyncio.sleep(REVIEW_POLL_S)
        review = cast(ReviewMap, r.get("review") or {})
        got = await self.conn.call(protocol.GetRecord, table=model.table, match=r.get("match"))
        record = cast(Record, got.get("record") or {})
        self.show(review_summary(review, render.who(model, seat)))
        try:
            self.replaying = Replay(record, seat=model.seat, review=review)
        except (RecordError, KeyError, TypeError, ValueError):
            return
        self.show(render.note("The replay, with the costly plays marked (?!, ?, ??):"),
                  self.replaying.render())

    async def _hint(self) -> None:
        """What would the expert play now? (a table with ``hints=on``, issue 28)"""
        model = self._game_model()
        result = await self.conn.call(protocol.RequestHint, table=model.table)
        self.show(hint_text(cast(HintMap, result)))

    def _step_replay(self, line: str) -> None:
        assert self.replaying is not None
        try:
            going = self.replaying.command(line.strip())
        except ValueError:
            self.show(Text(keys_text(), style="dim"))
            return
        if going:
            self.show(self.replaying.render())
        else:
            self.replaying = None
            self.show(render.note("Replay over: back to the table."))
