"""``aluette --bot LEVEL``: a bot that plays over the network like any other client.

It keeps the table model (the engine's typed view of its own seat, built from the events it
receives, so it only ever knows what its seat may know) and asks ``server.bots`` for a move
whenever the view says it is to act. A refused move (the model was stale) triggers a fresh
snapshot and a new decision.

Like a person's client it puts its own random contribution into the seed of the match it
sits down for (R8a), drawn from the system's randomness, not from its seeded ``rng``, so a
bot run with ``--seed`` still cannot be used to predict the deals.
"""

from __future__ import annotations

import asyncio
import copy
import random
from typing import Any

from rich.console import Console
from rich.text import Text

import protocol
from protocol import EventPayload, TableInfo, TableView
from protocol.limits import BOT_THINK_S
from server.bots import DEFAULT_BUDGET, choose_action, choose_signals
from server.game import Action, ChanterVote, Discard, Play

from . import render
from .connection import Connection, ConnectionFailed, ServerError
from .model import TableModel, new_contribution

#: A bot is patient: a command unanswered for the connection's ``reply_timeout`` (30 s) is
#: sent again with its id (docs/PROTOCOL.md: answered once, never applied twice) this many
#: times before the bot gives up (a busy server answers late; it still answers).
REPLY_RETRIES = 10


class NetBot:
    def __init__(self, url: str, level: str, name: str, console: Console, *,
                 table: str | None = None, options: dict[str, object] | None = None,
                 seed: int | None = None, quiet: bool = False,
                 think_s: float | None = BOT_THINK_S) -> None:
        self.level = level
        # The same cap on a search's thinking time as a server's bots (--think-ms; None or
        # 0: none), so a slow machine's network bot keeps its table's pace too.
        self.budget = DEFAULT_BUDGET.capped(think_s or None)
        self.console = console
        self.quiet = quiet
        self.table = table
        self.options = options or {}
        self.rng = random.Random(seed)
        self.changed = asyncio.Event()
        self.seated = asyncio.Event()    # set once the bot has its seat (self.table is known)
        # Honest about being a program (hello {bot: true}, protocol 1.5): its seat is shown
        # as a bot to everyone, like the server's own.
        self.conn = Connection(url, name, on_event=self._on_event, on_status=self._on_status,
                               bot=True, reply_retries=REPLY_RETRIES)
        self._acted: tuple[Any, ...] | None = None

    def _say(self, item: Any) -> None:
        if not self.quiet:
            self.console.print(item)

    def _on_event(self, model: TableModel, seq: int, event: EventPayload,
                  before: TableInfo | None) -> None:
        if model.table == self.table:
            for line in render.event_lines(model, event, before):
                self._say(line)
        self.changed.set()

    def _on_status(self, kind: str, text: str) -> None:
        self.console.print(Text(protocol.clean_text(text),
                                style="red" if kind in ("fatal", "error") else "yellow"))
        self.changed.set()

    async def run(self) -> int:
        try:
            await self.conn.start()
        except ConnectionFailed as exc:
            self.console.print(render.problem(str(exc)))
            return 1
        try:
            if self.table:
                result = await self.conn.call(protocol.Join, table=self.table)
            else:
                opts = {"auto_start": True, **self.options}
                result = await self.conn.call(
                    protocol.CreateTable, options=protocol.options_from_dict(opts),
                    name=f"{self.level} bot's table")
                self.table = str(result["table"])
            model = self.conn.model(self.table)
            await self._contribute(model)
            self.seated.set()
            self.console.print(Text(f"{self.level} bot sits at seat {model.seat} of table "
                                    f"{protocol.clean_text(self.table)}", style="green"))
            return await self._play(model)
        except ServerError as exc:
            self.console.print(render.error_text(exc.code, exc.message))
            return 1
        finally:
            await self.conn.close()

    async def _contribute(self, model: TableModel) -> None:
        """R8a: once seated at a table that has not started, send a contribution to its
        next match (``join`` again, as the protocol allows), remembered with the commitment
        seen so the model checks the match's start against both. A table that started as
        this bot sat down (the last seat of an auto-start table) takes none."""
        info = model.info
        if model.seat is None or info is None or not info.next_commitment \
                or info.status != "waiting":
            return
        contribution = new_contribution()
        model.contributing(contribution)
        try:
            await self.conn.call(protocol.Join, table=model.table, contribution=contribution)
        except ServerError as exc:     # started meanwhile: the match goes on without it
            model.sent = None
            self._say(render.error_text(exc.code, exc.message))

    async def _play(self, model: TableModel) -> int:
        while True:
            self.changed.clear()   # before looking: an event during our awaits re-arms it
            if self.conn.dead:
                return 1
            view = model.view
            if view is not None and view.phase == "match_over":
                return 0
            if view is not None:
                await self._signals(model)
                if model.my_turn:
                    await self._act(model)
            if not self.changed.is_set():
                await self.changed.wait()

    def _key(self, model: TableModel) -> tuple[Any, ...]:
        v = model.view
        if v is None:
            return (model.seq,)
        return (model.seq, v.deal_number, v.phase, len(v.tricks), len(v.trick), v.to_act)

    async def _act(self, model: TableModel) -> None:
        key = self._key(model)
        if key == self._acted:
            return
        self._acted = key
        view = copy.deepcopy(model.view)
        assert view is not None
        try:
            action = await asyncio.to_thread(self.choose, view)
        except ValueError:
            # Nothing to decide yet (the seat is to act but its hand has not arrived):
            # wait for the next event instead of stopping the bot.
            self._acted = None
            return
        try:
            match action:
                case Play(card=card):
                    await self.conn.call(protocol.Play, table=model.table, card=card)
                case ChanterVote(vote=vote):
                    await self.conn.call(protocol.ChanterVote, table=model.table, vote=vote)
                case Discard(cards=cards):
                    model.pending_discard = list(cards)
                    await self.conn.call(protocol.Discard, table=model.table, cards=list(cards))
                case _:
                    pass   # a signal is never a turn action
        except ServerError as exc:
            self._say(render.error_text(exc.code, exc.message))
            self._acted = None
            await self.conn.resync(model.table)

    def choose(self, view: TableView) -> Action:
        """The move for the seat whose view this is (ValueError: it is not to act)."""
        return choose_action(self.level, view, self.rng, self.budget)

    async def _signals(self, model: TableModel) -> None:
        view = model.view
        if view is None or model.seat is None:
            return
        for sig in choose_signals(self.level, copy.deepcopy(view), self.rng):
            try:
                await self.conn.call(protocol.Signal, table=model.table, signal=sig.signal,
                                     n=sig.n)
            except ServerError:
                return
