"""The interactive terminal client: a command prompt for the lobby and the game.

Events are printed while the user types: the prompt is prompt_toolkit's asyncio
``prompt_async`` under ``patch_stdout``, so rich output lands above the input line. Every
renderable comes from :mod:`.render`, which only ever prints cleaned network text as rich
``Text`` (never markup).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prompt_toolkit import PromptSession
from prompt_toolkit.patch_stdout import patch_stdout
from rich.console import Console, RenderableType
from rich.text import Text

import protocol

from . import render
from .commands import (
    InputError,
    parse_create,
    parse_discard,
    parse_level,
    parse_seat,
    parse_signal,
    resolve_card,
)
from .connection import Connection, ConnectionFailed, ServerError
from .model import TableModel
from .sessions import SessionFile

log = logging.getLogger(__name__)


class App:
    def __init__(self, url: str, name: str, console: Console | None = None,
                 initial: Sequence[str] = (), sessions: SessionFile | None = None) -> None:
        self.console = console or Console(highlight=False, soft_wrap=False)
        self.conn = Connection(url, name, on_event=self._on_event, on_status=self._on_status,
                               sessions=sessions)
        self.initial = list(initial)
        self.current: str | None = None
        self.known: list[str] = []            # table ids from the last listing
        self.session: PromptSession[str] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._screen_at: tuple[str, int] | None = None

    # ------------------------------------------------------------------ output

    def show(self, *items: RenderableType) -> None:
        for item in items:
            self.console.print(item)
        if self.session is not None and self.session.app.is_running:
            self.session.app.invalidate()

    def screen(self, model: TableModel) -> None:
        self._screen_at = (model.table, model.seq)
        self.show(render.game_screen(model))

    def model(self) -> TableModel | None:
        return self.conn.tables.get(self.current) if self.current else None

    def _prefix(self, model: TableModel) -> Text | None:
        if model.table == self.current:
            return None
        return Text("[").append_text(render.safe(model.table, 64)).append("] ")

    def _on_event(self, model: TableModel, seq: int, event: dict[str, Any] | None,
                  before: dict[str, Any] | None) -> None:
        if event is None:
            return
        try:
            self._show_event(model, event, before)
        except Exception as exc:   # never let the display of one event take the client down
            log.exception("event display failed")
            self.show(render.problem(f"Could not display an event ({type(exc).__name__}); "
                                     "type `show` to redraw the table."))

    def _show_event(self, model: TableModel, event: dict[str, Any],
                    before: dict[str, Any] | None) -> None:
        if self.current is None:
            self.current = model.table
        kind = event.get("type")
        prefix = self._prefix(model)
        for line in render.event_lines(model, event, before):
            if prefix is not None and isinstance(line, Text):
                line = prefix.copy().append_text(line)
            self.show(line)
        if model.table != self.current:
            return
        if kind == "snapshot" or (kind == "turn" and model.my_turn):
            self.screen(model)
        elif kind == "match_over":
            self.show(render.note("Type `record FILE` to save the match record (R17), "
                                  "`tables` to go back to the lobby."))

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
                    }.get(v["phase"], "your card> ")
        tag = protocol.clean_text(model.table)[:16]
        return f"{tag}> "

    # ------------------------------------------------------------------ main loop

    async def run(self) -> int:
        try:
            await self.conn.start()
        except ConnectionFailed as exc:
            self.show(render.problem(str(exc)))
            return 1
        hello = Text("Connected to ")
        hello.append_text(render.safe(self.conn.url, 100)).append(" as ")
        hello.append_text(render.safe(self.conn.server_name, 32))
        hello.append(". Type `help` for the commands, `quit` to leave.")
        self.show(hello)
        taken: list[str] = []
        if self.conn.restored:
            with contextlib.suppress(ConnectionFailed, ServerError):
                taken = await self.conn.take_back_seats()
        if taken:
            self.current = taken[0]
            self.show(Text("✓ Took back your seat at "
                           + ", ".join(protocol.clean_text(t) for t in taken)
                           + " (this session was remembered).", style="bold green"))
        else:
            with contextlib.suppress(Exception):
                await self._list_tables(quiet_if_empty=True)
        self.session = PromptSession()
        try:
            with patch_stdout(raw=True):
                for line in self.initial:
                    self.show(Text(f"> {line}", style="dim"))
                    if not await self.handle(line):
                        return 0
                while True:
                    if self.conn.dead:
                        return 1
                    try:
                        line = await self.session.prompt_async(self._prompt_text)
                    except (EOFError, KeyboardInterrupt):
                        break
                    if not await self.handle(line):
                        break
        finally:
            for task in list(self._tasks):
                task.cancel()
            await self.conn.close()
        return 0

    async def handle(self, line: str) -> bool:
        """Carry out one input line; False means quit."""
        try:
            tokens = shlex.split(line)
        except ValueError:
            tokens = line.split()
        if not tokens:
            return True
        word, args = tokens[0].lower(), tokens[1:]
        try:
            if word in ("quit", "exit", "q"):
                return False
            await self._command(word, args, tokens[0])
        except InputError as exc:
            self.show(render.problem(str(exc)))
        except ServerError as exc:
            self.show(render.error_text(exc.code, exc.message))
        except ConnectionFailed as exc:
            self.show(render.problem(f"Not connected: {exc}"))
        except TimeoutError:
            self.show(render.problem("The server did not answer in time; try again."))
        except Exception as exc:   # a client bug: say so, keep the prompt and the game
            log.exception("command failed")
            self.show(render.problem(f"Internal client error ({type(exc).__name__}); "
                                     "the command may not have been sent."))
        return True

    async def _command(self, word: str, args: list[str], raw: str) -> None:
        if word in ("help", "h", "?"):
            self._help(args)
        elif word in ("tables", "list", "ls", "lobby"):
            await self._list_tables()
        elif word == "create":
            await self._create(args)
        elif word in ("join", "sit"):
            await self._join(args)
        elif word in ("watch", "spectate"):
            await self._watch(args)
        elif word == "bot":
            await self._bot(args)
        elif word == "bots":
            await self._bots(args)
        elif word == "unbot":
            table = self._need_table()
            if len(args) != 1:
                raise InputError("Type `unbot SEAT`.")
            await self.conn.call(protocol.RemoveBot, table=table, seat=parse_seat(args[0]))
        elif word == "start":
            await self.conn.call(protocol.Start, table=self._need_table())
        elif word in ("table", "show", "s"):
            if args:
                self.current = self._resolve_table(args[0])
                if self.current not in self.conn.tables:
                    raise InputError("You are not at that table: `join` or `watch` it first.")
            self.screen(self._need_model())
        elif word == "leave":
            table = self._need_table()
            await self.conn.call(protocol.Leave, table=table)
            self.conn.forget(table)
            self.current = next(iter(self.conn.tables), None)
            self.show(render.note("You left the table."))
        elif word == "record":
            await self._record(args)
        elif word == "play":
            if len(args) != 1:
                raise InputError("Type `play` and a card code or number, or just the card.")
            self._play(args[0])
        elif word == "chanter":
            self._chanter(args)
        elif word == "discard":
            self._discard(args)
        elif word == "signal":
            self._signal(args)
        elif not args and (word.isdigit() or len(word) <= 3):
            self._play(raw)
        else:
            raise InputError(f"Unknown command “{protocol.clean_text(raw)[:20]}”. "
                             "Type `help` for the commands.")

    # ------------------------------------------------------------------ lobby commands

    def _help(self, args: list[str]) -> None:
        topic = args[0].lower() if args else ""
        if topic in ("strength", "cards", "r3"):
            self.show(render.strength_table())
        elif topic in ("signals", "signal", "r15"):
            self.show(signals_help())
        elif topic == "create":
            self.show(Text(render.HELP_CREATE))
        else:
            self.show(Text(render.HELP), render.strength_table(),
                      render.note("Everything is legal to play (R10): there is no duty to "
                                  "follow suit. A tie for the top card spoils the trick (R11)."))

    async def _list_tables(self, quiet_if_empty: bool = False) -> None:
        result = await self.conn.call(protocol.ListTables)
        tables = valid_tables(result.get("tables"))
        seats = [s for s in result.get("seats") or []
                 if isinstance(s, dict) and isinstance(s.get("table"), str)
                 and isinstance(s.get("seat"), int)]
        self.known = [str(t.get("table")) for t in tables]
        if tables or not quiet_if_empty:
            self.show(render.tables_table(tables, seats))
        if seats and not self.conn.tables:
            tids = ", ".join(protocol.clean_text(str(s.get("table"))) for s in seats)
            self.show(render.note(f"You have a seat at {tids}: `join TABLE` to go back."))

    def _resolve_table(self, ref: str) -> str:
        """A table id, or a unique start of one among the tables we know."""
        known = list(dict.fromkeys([*self.conn.tables, *self.known]))
        if ref in known:
            return ref
        matches = [t for t in known if t.startswith(ref)]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            raise InputError(f"“{protocol.clean_text(ref)[:20]}” matches several tables; "
                             "type more of the id.")
        return ref

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

    async def _create(self, args: list[str]) -> None:
        options, private, name = parse_create(args)
        result = await self.conn.call(
            protocol.CreateTable, options=protocol.options_from_dict(options),
            private=private, name=name)
        table = str(result["table"])
        self.current = table
        model = self.conn.model(table)
        out = Text("Created table ", style="green")
        out.append_text(render.safe(table, 64))
        out.append(f"; you sit at seat {model.seat}.")
        if result.get("code"):
            out.append(" Private: friends join with `join ")
            out.append_text(render.safe(table, 64)).append(" ")
            out.append_text(render.safe(result["code"], 16)).append("`.")
        self.show(out, render.note("Add bots with `bot SEAT LEVEL` or `bots LEVEL`, wait for "
                                   "friends, then `start`."))

    async def _join(self, args: list[str]) -> None:
        if not args:
            raise InputError("Type `join TABLE [SEAT] [CODE]` (`tables` lists them).")
        table = self._resolve_table(args[0])
        seat: int | None = None
        code: str | None = None
        rest = args[1:]
        if rest and rest[0] in ("0", "1", "2", "3"):
            seat = int(rest.pop(0))
        elif rest and rest[0] in ("any", "-"):
            rest.pop(0)
        if rest:
            code = rest.pop(0)
        if rest:
            raise InputError("Type `join TABLE [SEAT] [CODE]`.")
        self.current = table
        await self.conn.call(protocol.Join, table=table, seat=seat, code=code)
        model = self.conn.model(table)
        out = Text("You sit at seat ", style="green").append(str(model.seat))
        out.append(" of table ").append_text(render.safe(table, 64)).append(".")
        self.show(out)
        if model.view is None:
            self.show(render.game_screen(model))

    async def _watch(self, args: list[str]) -> None:
        if not args or len(args) > 2:
            raise InputError("Type `watch TABLE [CODE]`.")
        table = self._resolve_table(args[0])
        previous = self.current
        self.current = table
        try:
            await self.conn.call(protocol.Spectate, table=table,
                                 code=args[1] if len(args) > 1 else None)
        except ServerError:
            self.current = previous
            if table not in self.conn.tables or self.conn.tables[table].info is None:
                self.conn.forget(table)
            raise
        model = self.conn.model(table)
        out = Text("You are watching table ", style="green").append_text(render.safe(table, 64))
        out.append(". Spectators see no hands and no signals (R16).")
        self.show(out)
        if model.view is None:
            self.show(render.game_screen(model))

    async def _bot(self, args: list[str]) -> None:
        table = self._need_table()
        if not 1 <= len(args) <= 2:
            raise InputError("Type `bot SEAT [LEVEL]` (levels: random, easy, normal, expert).")
        seat = parse_seat(args[0])
        level = parse_level(args[1]) if len(args) == 2 else "normal"
        await self.conn.call(protocol.AddBot, table=table, seat=seat, level=level)

    async def _bots(self, args: list[str]) -> None:
        table = self._need_table()
        level = parse_level(args[0]) if args else "normal"
        model = self._need_model()
        seats = (model.info or {}).get("seats") or []
        empty = [i for i, s in enumerate(seats) if s.get("kind") == "empty"]
        if not empty:
            raise InputError("There is no empty seat.")
        for seat in empty:
            await self.conn.call(protocol.AddBot, table=table, seat=seat, level=level)

    async def _record(self, args: list[str]) -> None:
        table = self._need_table()
        result = await self.conn.call(protocol.GetRecord, table=table)
        record = result.get("record") or {}
        path = Path(args[0]) if args else Path(f"aluette-{protocol.clean_text(table)}.json")
        path.write_text(json.dumps(record, ensure_ascii=False, indent=1), encoding="utf-8")
        self.show(render.note(f"Match record (R17) written to {path}."))

    # ------------------------------------------------------------------ game commands

    def _at_game(self) -> bool:
        model = self.model()
        return model is not None and model.view is not None and model.seat is not None

    def _game_model(self) -> TableModel:
        model = self._need_model()
        if model.view is None:
            raise InputError("The match has not started yet (`start` starts it).")
        if model.seat is None:
            raise InputError("You are watching this table; spectators cannot play.")
        return model

    def _play(self, token: str) -> None:
        model = self._game_model()
        assert model.view is not None
        phase = model.view["phase"]
        if phase == "chanter_vote" and model.my_turn:
            raise InputError("First the chanter vote (R9): type `chanter yes` or `chanter no`.")
        if phase == "chanter_discard" and model.my_turn:
            raise InputError("First discard six cards (R9): `discard` then six codes or numbers.")
        card = resolve_card(token, model.view["hand"])
        self._send(model, protocol.Play, card=card)

    def _chanter(self, args: list[str]) -> None:
        model = self._game_model()
        if len(args) != 1 or args[0].lower() not in ("yes", "no", "y", "n", "on", "off"):
            raise InputError("Type `chanter yes` or `chanter no` (R9).")
        self._send(model, protocol.ChanterVote, vote=args[0].lower() in ("yes", "y", "on"))

    def _discard(self, args: list[str]) -> None:
        model = self._game_model()
        assert model.view is not None
        cards = parse_discard(args, model.view["hand"])
        model.pending_discard = cards
        self._send(model, protocol.Discard, cards=cards)

    def _signal(self, args: list[str]) -> None:
        if not args:
            self.show(signals_help())
            return
        model = self._game_model()
        name, n = parse_signal(args)
        self._send(model, protocol.Signal, signal=name, n=n, signal_note=(name, n))

    def _send(self, model: TableModel, cls: Any, signal_note: tuple[str, int | None] | None
              = None, **fields: Any) -> None:
        """Game commands run in the background: the prompt stays free while they travel."""
        card = fields.get("card")

        async def go() -> None:
            try:
                await self.conn.call(cls, table=model.table, **fields)
            except ServerError as exc:
                self.show(render.error_text(exc.code, exc.message, card=card))
                if exc.code in ("wrong_phase", "not_your_turn"):
                    await self.conn.resync(model.table)
                return
            except (ConnectionFailed, TimeoutError) as exc:
                self.show(render.problem(f"That was not sent: {exc or 'no answer'}."))
                return
            if signal_note is not None:   # the model learns it from the signal_sent event
                self.show(render.note("Signal sent to your partner."))

        task = asyncio.get_running_loop().create_task(go())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def valid_tables(raw: object) -> list[dict[str, Any]]:
    """``list_tables`` results are a free-form map: keep only entries that are TableInfo."""
    out = []
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, dict):
            with contextlib.suppress(protocol.EventError):
                out.append(protocol.to_dict(protocol.table_info_from_dict(item)))
    return out


def signals_help() -> RenderableType:
    from rich.table import Table

    table = Table(title="Signals to your partner (R15)", box=None, title_justify="left",
                  header_style="bold")
    table.add_column("type")
    table.add_column("meaning")
    for name, meaning in render.SIGNAL_MEANINGS.items():
        table.add_row(f"signal {name}" if name != "aces" else "signal aces N", meaning)
    return table
