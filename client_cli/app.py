"""The interactive terminal client: a command prompt for the lobby and the game.

:class:`App` is the prompt: it connects, reads one line at a time and hands each command
to its area (``app_lobby``: the tables and seats; ``app_table``: chat, rematch, records;
``app_replay``: a finished match's replay and review, hints; ``app_game``: the chanter,
cards and signals), while ``app_core`` holds what they share:
the client's state, printing what the connection reports, the table a command is about,
Ctrl-C and R8a's contributions.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import shlex
import signal
from collections.abc import Coroutine, Sequence
from typing import Any

from prompt_toolkit import PromptSession
from prompt_toolkit.patch_stdout import patch_stdout
from rich.console import Console
from rich.text import Text

import protocol
from protocol import TableInfo

from . import render
from .app_account import AccountCommands
from .app_core import explain
from .app_game import GameCommands
from .app_lobby import LobbyCommands
from .app_players import PlayerCommands
from .app_replay import ReplayCommands
from .app_table import TableCommands
from .commands import InputError, parse_seat
from .connection import Connection, ConnectionFailed, ServerError
from .i18n import tr, tr_text
from .sessions import SessionFile
from .tasks import TaskScope

log = logging.getLogger(__name__)

#: `say TEXT`, `chat TEXT` or `'TEXT`: the rest of the line as typed is the message.
CHAT_LINE = re.compile(r"\s*(?:(?:say|chat)\s+|')(?P<text>.*\S.*)", re.I | re.S)


class App(PlayerCommands, LobbyCommands, TableCommands, ReplayCommands, GameCommands,
          AccountCommands):
    """The prompt: start-up, the read loop, Ctrl-C around commands, and which area each
    command belongs to."""

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
        self.tasks = TaskScope()
        self._screen_at: tuple[str, int] | None = None
        self._ctrl_c_armed = False            # a first Ctrl-C during a live match
        self._leaving = False                 # a confirmed Ctrl-C outside the prompt
        self._busy: asyncio.Task[bool] | None = None
        #: Tables we sat down at before seeing their commitment: we contribute once the
        #: table's head shows it (R8a).
        self._owe_contribution: set[str] = set()

    # ------------------------------------------------------------------ main loop

    async def run(self) -> int:
        try:
            await self.conn.start()
        except ConnectionFailed as exc:
            self.show(render.problem(str(exc)))
            return 1
        hello = tr_text("cli.connected", url=render.safe(self.conn.url, 100),
                        name=render.safe(self.conn.server_name, 32))
        if self.name_note:
            hello.append(f" ({self.name_note})")
        hello.append(". " + tr("cli.connected.help"))
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
            await self.tasks.close()
            await self.conn.close()
        return 0

    async def _interruptible(self, work: Coroutine[Any, Any, bool]) -> bool:
        """Run ``work`` (a command, the start-up); False means the user confirmed leaving
        with Ctrl-C meanwhile (``work`` is then cancelled)."""
        if self._leaving:
            work.close()
            return False
        task = self.tasks.spawn("command", work)
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
            self._forget(table)
            self.current = next(iter(self.conn.tables), None)
            self.show(render.note(tr("cli.table.left")))
        elif word == "record":
            await self._record(args)
        elif word == "replay":
            await self._replay(args)
        elif word == "review":
            self._review(args)
        elif word == "hint" and not args:
            await self._hint()
        elif word == "register":
            await self._register(args)
        elif word == "login":
            await self._login(args)
        elif word == "logout":
            await self._logout(args)
        elif word in ("passwd", "password"):
            await self._passwd(args)
        elif word == "play":
            if len(args) == 1 and "=" not in args[0] \
                    and args[0].lower() not in ("rated", "casual"):
                self._play(args[0])                 # a card
            else:
                await self._play_now(args)          # play now (issue 27)
        elif word in ("cancel", "unqueue") and not args:
            await self._cancel()
        elif word == "history":
            await self._history(args)
        elif word == "profile":
            await self._profile(args)
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
