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
import re
import shlex
import signal
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import Any, TypeVar

import msgspec
from prompt_toolkit import PromptSession
from prompt_toolkit.patch_stdout import patch_stdout
from rich.console import Console, Group, RenderableType
from rich.text import Text

import protocol
from protocol import EventPayload, MatchOver, Snapshot, TableChanged, TableInfo, Turn
from protocol.results import SeatRef
from server.game.errors import RecordError

from . import render
from .commands import (
    InputError,
    parse_create,
    parse_discard,
    parse_level,
    parse_seat,
    parse_signal,
    parse_table_ref,
    resolve_card,
    resolve_sender,
)
from .connection import Connection, ConnectionFailed, ServerError
from .model import TableModel, new_contribution
from .replay import KEYS as REPLAY_KEYS
from .replay import REVIEW_POLL_S, Replay, hint_text, review_progress, review_summary
from .sessions import SessionFile

log = logging.getLogger(__name__)

Entry = TypeVar("Entry", TableInfo, SeatRef)


#: Bare words the chanter vote prompt takes (R9), as `chanter yes` / `chanter no` do.
CHANTER_WORDS = {"yes": True, "y": True, "on": True, "no": False, "n": False, "off": False}

#: `say TEXT`, `chat TEXT` or `'TEXT`: the rest of the line as typed is the message.
CHAT_LINE = re.compile(r"\s*(?:(?:say|chat)\s+|')(?P<text>.*\S.*)", re.I | re.S)


class App:
    def __init__(self, url: str, name: str, console: Console | None = None,
                 initial: Sequence[str] = (), sessions: SessionFile | None = None,
                 local: bool = False, name_note: str | None = None) -> None:
        self.console = console or Console(highlight=False, soft_wrap=False)
        self.conn = Connection(url, name, on_event=self._on_event, on_status=self._on_status,
                               sessions=sessions)
        self.initial = list(initial)
        self.local = local                    # `aluette play`: quitting ends the server
        self.name_note = name_note            # how the name was chosen, said at hello
        self.current: str | None = None
        self.known: list[str] = []            # table ids from the last listing
        self.known_info: dict[str, TableInfo] = {}
        self.session: PromptSession[str] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._screen_at: tuple[str, int] | None = None
        self._ctrl_c_armed = False            # a first Ctrl-C during a live match
        self._leaving = False                 # a confirmed Ctrl-C outside the prompt
        self._busy: asyncio.Task[bool] | None = None
        #: Tables we sat down at before seeing their commitment: we contribute once the
        #: table's head shows it (R8a).
        self._owe_contribution: set[str] = set()
        #: A finished match being replayed (`replay`): input lines step through it.
        self.replaying: Replay | None = None

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
        grace = render.duration(render.grace_of(model)) if model else "a while"
        if self.local:
            return render.note("This is a local game (`aluette play`): leaving stops its "
                               "server and ends the match.")
        if self.conn.sessions is None:
            return render.note(f"This session is not remembered (--new-session, or another "
                               f"aluette has it): once you leave, a bot plays your seat after "
                               f"{grace} and you cannot take it back.")
        return render.note(f"`aluette` remembers this session: start it again with the same "
                           f"--server and --name and it takes your seat back. Meanwhile a bot "
                           f"plays for you after {grace}.")

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

    async def _leave_live_match_ok(self, what: str, target: str | None = None) -> bool:
        """Before `create`, `join` or `watch` takes you away from a live match: ask."""
        here = self.current
        if here is None or here == target or not self._live_seat(here):
            return True
        q = Text("You are playing at table ", style="bold yellow")
        q.append_text(render.safe(here, 64))
        q.append(f". `{what}` takes you to another table; your seat here stays yours and "
                 "the match goes on without waiting for you.")
        if await self._confirm(q):
            return True
        self.show(render.note(f"Nothing changed: you are still at table "
                              f"{protocol.clean_text(here)}."))
        return False

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
        if self.name_note:
            hello.append(f" ({self.name_note})")
        hello.append(". Type `help` for the commands, `quit` to leave.")
        self.show(hello)
        self._install_sigint()
        try:
            if not await self._interruptible(self._take_back()):
                return 0
            self.session = PromptSession()
            with patch_stdout(raw=True):
                for line in self.initial:
                    self.show(Text(f"> {line}", style="dim"))
                    if not await self._interruptible(self.handle(line)):
                        return 0
                while not self._leaving:
                    if self.conn.dead:
                        return 1
                    try:
                        line = await self._prompt(self._prompt_text)
                    except EOFError:
                        break
                    except KeyboardInterrupt:
                        if self._interrupted():
                            break
                        continue
                    if not await self._interruptible(self.handle(line)):
                        break
                for table in self._live_tables():
                    self.show(self._come_back_note(table))
        finally:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                asyncio.get_running_loop().remove_signal_handler(signal.SIGINT)
            for task in list(self._tasks):
                task.cancel()
            await self.conn.close()
        return 0

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

    async def _interruptible(self, work: Coroutine[Any, Any, bool]) -> bool:
        """Run ``work`` (a command, the start-up); False means the user confirmed leaving
        with Ctrl-C meanwhile (``work`` is then cancelled)."""
        if self._leaving:
            work.close()
            return False
        task = asyncio.get_running_loop().create_task(work)
        self._busy = task
        try:
            return await task and not self._leaving
        except asyncio.CancelledError:
            if self._leaving:
                return False
            raise
        finally:
            self._busy = None

    async def _take_back(self) -> bool:
        """A remembered session: take back the seats of live matches (issue 6, item 10)."""
        taken: list[str] = []
        if self.conn.restored:
            with contextlib.suppress(ConnectionFailed, ServerError):
                taken = await self.conn.take_back_seats()
        # A finished match is not a seat to take back (issue 14, item 10); its model stays,
        # so `table T` then `record FILE` still work.
        live = [t for t in taken if t in self.conn.tables
                and self.conn.tables[t].status in render.LIVE]
        if live:
            self.current = live[0]
            self.show(Text("✓ Took back your seat at "
                           + ", ".join(protocol.clean_text(t) for t in live)
                           + " (this session was remembered).", style="bold green"))
        else:
            with contextlib.suppress(Exception):
                await self._list_tables(quiet_if_empty=True)
        return True

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

    async def handle(self, line: str) -> bool:
        """Carry out one input line; False means quit."""
        try:
            tokens = shlex.split(line)
        except ValueError:
            tokens = line.split()
        if self.replaying is not None:            # `replay`: lines step through the match
            self._step_replay(line)
            return True
        said = CHAT_LINE.fullmatch(line)
        if not tokens and said is None:
            return True
        word, args = (tokens[0].lower(), tokens[1:]) if tokens else ("", [])
        if word in ("quit", "exit", "q"):
            return False
        self._ctrl_c_armed = False            # a Ctrl-C then a command: ask again next time
        try:
            if said is not None:
                await self._chat(said.group("text").strip())
                return True
            await self._command(word, args, tokens[0])
        except InputError as exc:
            self.show(render.problem(str(exc)))
        except (ServerError, ConnectionFailed, TimeoutError) as exc:
            self.show(explain(exc))
        except Exception as exc:   # a client bug: say so, keep the prompt and the game
            log.exception("command failed")
            self.show(render.problem(f"Internal client error ({type(exc).__name__}); "
                                     "the command may not have been sent."))
        return True

    def _prompt_answer(self, word: str, tokens: list[str]) -> bool:
        """The chanter prompts take what their hints suggest (issue 14, item 4): a bare
        ``yes``/``no`` at the vote, six bare codes or positions at the discard (R9)."""
        model = self.model()
        v = model.view if model is not None else None
        if v is None or model is None or model.seat is None:
            return False
        if v.phase == "chanter_vote" and len(tokens) == 1 and word in CHANTER_WORDS:
            self._chanter([word])
            return True
        if (v.phase == "chanter_discard" and model.my_turn and len(tokens) == 6
                and all(t.isdigit() or len(t) == 2 for t in tokens)):
            self._discard(tokens)
            return True
        return False

    async def _command(self, word: str, args: list[str], raw: str) -> None:
        if self._prompt_answer(word, [raw, *args]):
            return
        if word in ("help", "h", "?"):
            self._help(args)
        elif word in ("tables", "list", "ls", "lobby"):
            if args and args[0].lower() not in ("all", "-a", "--all"):
                raise InputError("Type `tables`, or `tables all` to see finished ones too.")
            await self._list_tables(show_all=bool(args))
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
            table = self._need_table()
            await self.conn.call(protocol.Start, table=table,
                                 contribution=self._contribution(table))
        elif word in ("rematch", "r", "again"):
            await self._rematch()
        elif word in ("chat", "say") and not args:
            self.show(render.chat_history(self._need_model()))
        elif word in ("mute", "unmute"):
            await self._mute(args, word == "mute")
        elif word in ("table", "show", "s"):
            if args:
                self.current = await self._resolve_table(args[0], remote=False)
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
        elif word == "replay":
            await self._replay(args)
        elif word == "review":
            self._review(args)
        elif word == "hint" and not args:
            await self._hint()
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
        elif topic in ("signals", "signal", "r15", "r16"):
            self.show(signals_help())
        elif topic in ("rules", "rule"):
            self.show(Text(render.HELP_RULES))
        elif topic in ("mordienne", "r13", "r13a"):
            self.show(Text(render.HELP_MORDIENNE))
        elif topic in ("chanter", "r9"):
            self.show(Text(render.HELP_CHANTER))
        elif topic == "create":
            self.show(Text(render.HELP_CREATE))
        else:
            self.show(Text(render.HELP), render.strength_table(),
                      render.note("Everything is legal to play (R10): there is no duty to "
                                  "follow suit. A tie for the top card spoils the trick (R11). "
                                  "`help rules` sums up the rules."))

    async def _fetch_tables(self) -> tuple[list[TableInfo], list[SeatRef]]:
        result = await self.conn.call(protocol.ListTables)
        tables = valid_entries(result.get("tables"), TableInfo)
        seats = valid_entries(result.get("seats"), SeatRef)
        self.known = [t.table for t in tables]
        self.known_info = {t.table: t for t in tables}
        return tables, seats

    async def _list_tables(self, quiet_if_empty: bool = False, show_all: bool = False) -> None:
        tables, seats = await self._fetch_tables()
        shown, _ = render.lobby_order(tables, seats, show_all)
        if shown or not quiet_if_empty:
            self.show(render.tables_table(tables, seats, show_all))
        live = {t.table for t in tables if t.status in render.LIVE}
        back = [s for s in seats if s.table in live]
        if back and not self.conn.tables:
            tids = ", ".join(protocol.clean_text(s.table) for s in back)
            self.show(render.note(f"You have a seat at {tids}: `join TABLE` to go back."))

    async def _resolve_table(self, ref: str, remote: bool = True) -> str:
        """A table id, or a unique start of one (issue 14, item 1).

        The start is matched against the tables this client is at and the server's list,
        fetched now when ``remote`` (so `join t3f` works before `tables` was ever typed).
        Private tables are listed only to those seated there: a start of their id is
        sent as it is, and the server resolves it with the join code (protocol 1.5).
        """
        if ref in self.conn.tables or ref in self.known_info:
            return ref
        if remote:
            await self._fetch_tables()
        known = list(dict.fromkeys([*self.conn.tables, *self.known]))
        if ref in known:
            return ref
        matches = [t for t in known if t.startswith(ref)]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            out = Text(f"“{protocol.clean_text(ref)[:20]}” matches several tables:")
            for tid in matches[:12]:
                info = self.known_info.get(tid)
                out.append("\n  ").append_text(render.safe(tid, 64))
                if info is not None and info.name:
                    out.append(" «").append_text(render.safe(info.name, 32)).append("»")
                if info is not None:
                    out.append(" ").append_text(render.safe(info.status, 12))
            if len(matches) > 12:
                out.append(f"\n  … and {len(matches) - 12} more")
            self.show(out)
            raise InputError("Type more of the id.")
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
        previous = self.current
        if not await self._leave_live_match_ok("create"):
            return
        result = await self.conn.call(
            protocol.CreateTable, options=protocol.options_from_dict(options),
            private=private, name=name)
        table = str(result["table"])
        self.current = table
        model = self.conn.model(table)
        if options.get("auto_start"):     # no `start` will carry our contribution (R8a)
            self._owe_contribution.add(table)
            self._contribute_now(model)
        out = Text("Created table ", style="green")
        out.append_text(render.safe(table, 64))
        out.append(f"; you sit at seat {model.seat}.")
        if result.get("code"):
            out.append(" Private: friends join with `join ")
            out.append_text(render.safe(table, 64)).append(" ")
            out.append_text(render.safe(result["code"], 16)).append("`.")
        self.show(out, render.note("Add bots with `bot SEAT LEVEL` or `bots LEVEL`, wait for "
                                   "friends, then `start`."))
        self._still_yours(previous)

    def _still_yours(self, previous: str | None) -> None:
        """After moving away from a live match: say that the seat is kept and how to return."""
        if previous is not None and previous != self.current and self._live_seat(previous):
            tid = protocol.clean_text(previous)
            self.show(render.note(f"Your seat at {tid} stays yours: `table {tid}` takes you "
                                  "back.", style="yellow"))

    def _failed_move(self, previous: str | None, table: str, exc: Exception) -> None:
        """A join or watch that failed: back to where we were, and say so (item 2)."""
        self.show(explain(exc))
        if isinstance(exc, ServerError) and exc.code == "no_such_table":
            # Private tables are listed only to their players, so a short id cannot be
            # resolved for them: say so rather than leave "no such table" a mystery.
            self.show(render.note(f"No table you can see starts with "
                                  f"“{protocol.clean_text(table)[:20]}”; a private table "
                                  "needs its full id (the one in the `join` line its "
                                  "creator gives you)."))
        self.current = previous
        if table != previous and (table not in self.conn.tables
                                  or self.conn.tables[table].info is None):
            self.conn.forget(table)
        if previous is not None and previous in self.conn.tables:
            self.show(render.note(f"You are still at table {protocol.clean_text(previous)}."))

    async def _join(self, args: list[str]) -> None:
        if not args:
            raise InputError("Type `join TABLE [SEAT] [CODE]` (`tables` lists them).")
        seat: int | None = None
        ref, code = parse_table_ref(args[0])        # a browser's link carries its code
        args = [ref, *args[1:]]
        rest = args[1:]
        if rest and rest[0] in ("0", "1", "2", "3"):
            seat = int(rest.pop(0))
        elif rest and rest[0] in ("any", "-"):
            rest.pop(0)
        if rest:
            code = rest.pop(0)
        if rest:
            raise InputError("Type `join TABLE [SEAT] [CODE]`.")
        table = await self._resolve_table(args[0])
        previous = self.current
        if not await self._leave_live_match_ok("join", table):
            return
        self.current = table
        listed = self.known_info.get(table)
        seen = listed.next_commitment if listed is not None else None
        contribution = self._contribution(table, seen) if seen else None
        try:
            result = await self.conn.call(protocol.Join, table=table, seat=seat, code=code,
                                          contribution=contribution)
        except (ServerError, ConnectionFailed, TimeoutError) as exc:
            self._failed_move(previous, table, exc)
            return
        table = self.current = str(result.get("table") or table)   # a start of an id: whole
        if contribution is None:          # not listed (private): once its head is in
            self._owe_contribution.add(table)
            self._contribute_now(self.conn.model(table))
        model = self.conn.model(table)
        out = Text("You sit at seat ", style="green").append(str(model.seat))
        out.append(" of table ").append_text(render.safe(table, 64)).append(".")
        self.show(out)
        if model.view is None:
            self.show(render.game_screen(model))
        self._still_yours(previous)

    async def _watch(self, args: list[str]) -> None:
        if not args or len(args) > 2:
            raise InputError("Type `watch TABLE [CODE]`.")
        ref, code = parse_table_ref(args[0])        # a browser's link carries its code
        if len(args) > 1:
            code = args[1]
        table = await self._resolve_table(ref)
        previous = self.current
        if not await self._leave_live_match_ok("watch", table):
            return
        self.current = table
        try:
            result = await self.conn.call(protocol.Spectate, table=table, code=code)
        except (ServerError, ConnectionFailed, TimeoutError) as exc:
            self._failed_move(previous, table, exc)
            return
        table = self.current = str(result.get("table") or table)   # a start of an id: whole
        model = self.conn.model(table)
        out = Text("You are watching table ", style="green").append_text(render.safe(table, 64))
        out.append(". Spectators see no hands and no signals (R16).")
        self.show(out)
        if model.view is None:
            self.show(render.game_screen(model))
        self._still_yours(previous)

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
        seats = model.info.seats if model.info else []
        empty = [i for i, s in enumerate(seats) if s.kind == "empty"]
        if not empty:
            raise InputError("There is no empty seat.")
        for seat in empty:
            await self.conn.call(protocol.AddBot, table=table, seat=seat, level=level)

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

        task = asyncio.get_running_loop().create_task(go())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _chat(self, text: str) -> None:
        """`say TEXT`: to everyone at the table if we sit there, to the spectators if we
        watch (the server decides; the line comes back as a `chat` event)."""
        table = self._need_table()
        if len(protocol.clean_text(text)) > protocol.MAX_CHAT_LEN:
            raise InputError(f"A chat message holds at most {protocol.MAX_CHAT_LEN} "
                             "characters.")
        await self.conn.call(protocol.Chat, table=table, text=text)

    async def _mute(self, args: list[str], muted: bool) -> None:
        model = self._need_model()
        if not args:
            raise InputError(f"Type `{'mute' if muted else 'unmute'} NAME` (or a seat "
                             "number): someone who has spoken at this table.")
        if not muted and args == ["all"]:
            await self._unmute_all(model)
            return
        sender = resolve_sender(" ".join(args), model.speakers)
        await self.conn.call(protocol.Mute, table=model.table, sender=sender, muted=muted)
        if muted:
            model.muted.add(sender)
        else:
            model.muted.discard(sender)
        name = protocol.clean_text(model.speakers[sender][0])[:32]
        self.show(render.note(f"You will no longer see {name}'s chat at this table "
                              f"(`unmute {name}` to undo)." if muted
                              else f"You will see {name}'s chat again."))

    async def _unmute_all(self, model: TableModel) -> None:
        """`unmute all`: everyone we mute at this table, named or not (after a reconnect
        the server's chat_history says whom, but their lines, and so names, are gone)."""
        if not model.muted:
            self.show(render.note("You mute nobody at this table."))
            return
        for sender in sorted(model.muted):
            await self.conn.call(protocol.Mute, table=model.table, sender=sender, muted=False)
            model.muted.discard(sender)
        self.show(render.note("You will see everyone's chat at this table again."))

    async def _rematch(self) -> None:
        """One keystroke (`r`) after a match: ask for another one, or accept it."""
        model = self._need_model()
        if model.seat is None:
            raise InputError("Only the players seated at the table can ask for a rematch.")
        await self.conn.call(protocol.Rematch, table=model.table,
                             contribution=self._contribution(model.table))

    async def _record(self, args: list[str]) -> None:
        table = self._need_table()
        result = await self.conn.call(protocol.GetRecord, table=table)
        record = result.get("record") or {}
        path = Path(args[0]) if args else Path(f"aluette-{protocol.clean_text(table)}.json")
        path.write_text(json.dumps(record, ensure_ascii=False, indent=1), encoding="utf-8")
        self.show(render.note(f"Match record (R17) written to {path}."))

    async def _replay(self, args: list[str]) -> None:
        """Step through a finished match of this table, every hand face up (issue 28)."""
        table = self._need_table()
        if len(args) > 1 or (args and not args[0].isdigit()):
            raise InputError("Type `replay`, or `replay MATCH` for an earlier match here.")
        result = await self.conn.call(protocol.GetRecord, table=table,
                                      match=int(args[0]) if args else None)
        try:
            self.replaying = Replay(result.get("record") or {}, seat=self._need_model().seat)
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

        task = asyncio.get_running_loop().create_task(follow())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

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
                self.show(review_progress(r, render.who(model, seat)))
            await asyncio.sleep(REVIEW_POLL_S)
        review = r.get("review") or {}
        record = (await self.conn.call(protocol.GetRecord, table=model.table,
                                       match=r.get("match"))).get("record") or {}
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
        self.show(hint_text(result))

    def _step_replay(self, line: str) -> None:
        assert self.replaying is not None
        try:
            going = self.replaying.command(line.strip())
        except ValueError:
            self.show(Text(REPLAY_KEYS, style="dim"))
            return
        if going:
            self.show(self.replaying.render())
        else:
            self.replaying = None
            self.show(render.note("Replay over: back to the table."))

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
        phase = model.view.phase
        if phase == "chanter_vote" and model.my_turn:
            raise InputError("First the chanter vote (R9): type `yes` or `no`.")
        if phase == "chanter_discard" and model.my_turn:
            raise InputError("First discard six cards (R9): type six codes or numbers.")
        card = resolve_card(token, model.view.hand)
        self._send(model, protocol.Play, card=card)

    def _chanter(self, args: list[str]) -> None:
        model = self._game_model()
        if len(args) != 1 or args[0].lower() not in ("yes", "no", "y", "n", "on", "off"):
            raise InputError("Type `chanter yes` or `chanter no` (R9).")
        self._send(model, protocol.ChanterVote, vote=args[0].lower() in ("yes", "y", "on"))

    def _discard(self, args: list[str]) -> None:
        model = self._game_model()
        assert model.view is not None
        cards = parse_discard(args, model.view.hand)
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
    return Group(Text(render.HELP_SIGNALS_INTRO), table)
