"""What every part of the terminal client's prompt shares (the prompt itself is
:class:`client_cli.app.App`, its commands by area in ``app_lobby``, ``app_table`` and
``app_game``): the client's state, printing, the table a command is about, live seats,
the prompt's own questions and Ctrl-C, and R8a's contributions.

Events are printed while the user types: the prompt is prompt_toolkit's asyncio
``prompt_async`` under ``patch_stdout``, so rich output lands above the input line. Every
renderable comes from :mod:`.render`, which only ever prints cleaned network text as rich
``Text`` (never markup).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Coroutine
from typing import Any, TypeVar

import msgspec
from prompt_toolkit import PromptSession
from rich.console import Console, Group, RenderableType
from rich.text import Text

import protocol
from protocol import EventPayload, MatchOver, Snapshot, TableChanged, TableInfo, Turn
from protocol.results import SeatRef

from . import render
from .commands import InputError
from .connection import Connection, ConnectionFailed, ServerError
from .i18n import tr
from .model import TableModel, new_contribution
from .tasks import PROGRAM, TaskScope

log = logging.getLogger(__name__)

Entry = TypeVar("Entry", TableInfo, SeatRef)


class AppCore:
    """The state :class:`~client_cli.app.App` sets up, and the helpers all its parts use."""

    console: Console
    conn: Connection
    initial: list[str]
    local: bool                       # `aluette play`: quitting ends the server
    name_note: str | None             # how the name was chosen, said at hello
    current: str | None
    known: list[str]                  # table ids from the last listing
    known_info: dict[str, TableInfo]
    session: PromptSession[str] | None
    tasks: TaskScope                  # every task it starts: see client_cli/tasks.py
    _screen_at: tuple[str, int] | None
    _ctrl_c_armed: bool               # a first Ctrl-C during a live match
    _leaving: bool                    # a confirmed Ctrl-C outside the prompt
    _busy: asyncio.Task[bool] | None
    #: Tables we sat down at before seeing their commitment: we contribute once the
    #: table's head shows it (R8a).
    _owe_contribution: set[str]

    # ------------------------------------------------------------------ output

    def show(self, *items: RenderableType) -> None:
        for item in items:
            self.console.print(item)
        if self.session is not None and self.session.app.is_running:
            self.session.app.invalidate()

    def compact(self) -> bool:
        """A small terminal (issue 14, item 12): draw the game screen in ten lines."""
        size = self.console.size
        return render.wants_compact(size.width, size.height)

    def screen(self, model: TableModel) -> None:
        self._screen_at = (model.table, model.seq)
        self.show(render.game_screen(model, compact=self.compact()))

    def model(self) -> TableModel | None:
        return self.conn.tables.get(self.current) if self.current else None

    def _prefix(self, model: TableModel) -> Text | None:
        if model.table == self.current:
            return None
        return Text("[").append_text(render.safe(model.table, 64)).append("] ")

    def _spawn(self, name: str, work: Coroutine[Any, Any, None], *,
               serves: str = PROGRAM) -> None:
        """Work that runs in the background (the prompt stays free), in the App's task
        scope: its failure is logged, and it is cancelled when what it ``serves`` (a table,
        the wait) ends or the program does. Once the program is ending (the scope closed),
        late news starts nothing."""
        if self.tasks.closed:
            work.close()
            return
        self.tasks.spawn(name, work, serves=serves)

    def _forget(self, table: str) -> None:
        """We are done with ``table``: drop its model and end the tasks serving it."""
        self.conn.forget(table)
        self.tasks.end(table)

    # ------------------------------------------------------------------ news

    def _on_event(self, model: TableModel, seq: int, event: EventPayload,
                  before: TableInfo | None) -> None:
        try:
            self._show_event(model, event, before)
        except Exception as exc:   # never let the display of one event take the client down
            log.exception("event display failed")
            self.show(render.problem(f"Could not display an event ({type(exc).__name__}); "
                                     "type `show` to redraw the table."))

    def _show_event(self, model: TableModel, event: EventPayload,
                    before: TableInfo | None) -> None:
        if self.current is None and model.status in render.LIVE:
            self.current = model.table
        if isinstance(event, TableChanged) and model.table in self._owe_contribution:
            self._contribute_now(model)
        prefix = self._prefix(model)
        for line in render.event_lines(model, event, before):
            if prefix is not None and isinstance(line, Text):
                line = prefix.copy().append_text(line)
            self.show(line)
        if model.table != self.current:
            return
        match event:
            case Snapshot():
                self.screen(model)
            case Turn() if model.my_turn:
                self.screen(model)
            case MatchOver():
                again = "Type `r` to play again at this table (a rematch), " \
                    if model.seat is not None else "Type "
                self.show(render.note(f"{again}`record FILE` to save the match record (R17), "
                                      "`tables` to go back to the lobby."))
            case _:
                pass

    def _on_status(self, kind: str, text: str) -> None:
        style = {"lost": "bold yellow", "reconnected": "bold green", "resumed": "bold green",
                 "fatal": "bold red", "warning": "yellow", "error": "red"}.get(kind, "cyan")
        mark = "✓ " if kind in ("reconnected", "resumed") else "! "
        self.show(Text(mark + protocol.clean_text(text), style=style))
        if kind == "resumed":   # everything missed is in: show the table as it is now
            model = self.model()
            if model is not None and model.view is not None:
                self.screen(model)

    def _prompt_text(self) -> str:
        model = self.model()
        if not self.conn.online:
            return "(offline) > "
        if model is None:
            return "aluette> "
        v = model.view
        if v is not None and model.my_turn:
            return {"chanter_vote": "chanter yes/no> ", "chanter_discard": "discard 6 cards> "
                    }.get(v.phase, "your card> ")
        tag = protocol.clean_text(model.table)[:16]
        return f"{tag}> "

    # ------------------------------------------------------------------ tables

    def _need_table(self) -> str:
        if self.current is None:
            raise InputError("You are not at a table: `create` one, or `join` / `watch` one "
                             "(`tables` lists them).")
        return self.current

    def _need_model(self) -> TableModel:
        model = self.model()
        if model is None:
            self._need_table()
            raise InputError("No news from that table yet.")
        return model

    # ------------------------------------------------------------------ live matches

    def _live_seat(self, table: str | None) -> bool:
        """Seated (not watching) at ``table`` while its match is being played."""
        model = self.conn.tables.get(table) if table else None
        return (model is not None and model.seat is not None and model.status == "playing"
                and (model.view is None or model.view.phase != "match_over"))

    def _live_tables(self) -> list[str]:
        return [t for t in self.conn.tables if self._live_seat(t)]

    def _come_back_note(self, table: str) -> Text:
        """How to get back to a seat after quitting (issue 14, item 7)."""
        model = self.conn.tables.get(table)
        grace = (render.duration(render.grace_of(model)) if model
                 else tr("cli.leave.a_while"))
        if self.local:
            return render.note(tr("cli.leave.local"))
        if self.conn.sessions is None:
            return render.note(tr("cli.leave.forgotten", grace=grace))
        return render.note(tr("cli.leave.remembered", grace=grace))

    async def _confirm(self, question: Text) -> bool:
        """Ask a yes/no question at the prompt; anything but yes (or Ctrl-C) is no."""
        self.show(question.append(" Go on? (yes/no)"))
        if self.session is None:
            return True
        try:
            answer = await self._prompt("yes/no> ")
        except (EOFError, KeyboardInterrupt):
            return False
        return answer.strip().lower() in ("y", "yes")

    # Ctrl-C (issue 14, item 7). At the prompt the terminal is in raw mode and Ctrl-C is a
    # key: prompt_toolkit raises KeyboardInterrupt. Anywhere else (a command on its way,
    # the start-up) it is a SIGINT, which would end the client at once, live match or not:
    # our handler treats it like the key. prompt_toolkit swaps the SIGINT handler for its
    # own while it prompts and removes it after, so ours is installed again after each
    # prompt (between the two a SIGINT is ignored, never fatal).

    def _install_sigint(self) -> None:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            asyncio.get_running_loop().add_signal_handler(signal.SIGINT, self._on_sigint)

    def _on_sigint(self) -> None:
        if self._interrupted():
            self._leaving = True
            if self._busy is not None:
                self._busy.cancel()

    async def _prompt(self, message: Any) -> str:
        assert self.session is not None
        try:
            return await self.session.prompt_async(message)
        finally:
            self._install_sigint()

    def _interrupted(self) -> bool:
        """A Ctrl-C: True means leave now. The first one while seated in a live match only
        warns (issue 14, item 7); a second one, or `quit`, confirms."""
        live = self._live_tables()
        if self._ctrl_c_armed or not live:
            return True
        table = self.current if self.current in live else live[0]
        self._ctrl_c_armed = True
        warn = Text("You are playing at table ", style="bold yellow")
        warn.append_text(render.safe(table, 64))
        warn.append(": press Ctrl-C again or type `quit` to leave.")
        self.show(warn, self._come_back_note(table))
        return False

    # ------------------------------------------------------------------ issue 15

    def _contribution(self, table: str, seen: str | None = None) -> str:
        """A fresh contribution (R8a), remembered with the commitment we saw, so that the
        match's start can be checked against both."""
        contribution = new_contribution()
        self.conn.model(table).contributing(contribution, seen)
        return contribution

    def _contribute_now(self, model: TableModel) -> None:
        """We sit at ``model``'s table and now see its commitment: send our contribution
        (``join`` again, as the protocol allows), once."""
        info = model.info
        if model.seat is None or info is None or not info.next_commitment \
                or info.status not in ("waiting", "finished"):
            return
        self._owe_contribution.discard(model.table)
        contribution = self._contribution(model.table)

        async def go() -> None:
            with contextlib.suppress(ServerError, ConnectionFailed, TimeoutError):
                await self.conn.call(protocol.Join, table=model.table,
                                     contribution=contribution)

        self._spawn("contribute", go(), serves=model.table)


def explain(exc: Exception) -> Text:
    """A command that failed on the way or at the server, as a sentence."""
    if isinstance(exc, ServerError):
        return render.error_text(exc.code, exc.message)
    if isinstance(exc, ConnectionFailed):
        return render.problem(f"Not connected: {exc}")
    return render.problem("The server did not answer in time; try again.")


def valid_entries(raw: object, kind: type[Entry]) -> list[Entry]:
    """A ``list_tables`` result is a map as decoded off the wire: keep the entries of its
    lists that are what they should be (a table's ``TableInfo``, a seat's ``SeatRef``), so
    one bad entry from a newer or broken server hides only itself."""
    out = []
    for item in raw if isinstance(raw, list) else []:
        with contextlib.suppress(msgspec.ValidationError):
            out.append(msgspec.convert(item, kind))
    return out


def signals_help() -> RenderableType:
    """`help signals` / `signal`: what signals are (R15, R16) and every one to type."""
    from rich.table import Table

    table = Table(title="Signals to your partner (R15)", box=None, title_justify="left",
                  header_style="bold")
    table.add_column("type")
    table.add_column("meaning")
    for name, meaning in render.SIGNAL_MEANINGS.items():
        table.add_row(f"signal {name}" if name != "aces" else "signal aces N", meaning)
    return Group(Text(render.help_text("signals")), table)
