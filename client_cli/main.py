"""``aluette``: the terminal client.

    aluette [--server ws://HOST:PORT] [--name NAME]       the lobby and the game
    aluette play [--level normal] [--deals 5]             a local game against three bots
    aluette --bot LEVEL [--table T]                       a network bot (joins or creates)
    aluette --bot LEVEL --deals 3 --chanter --signals risky   ... creating a table like this
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import getpass
import os
import signal
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from rich.console import Console
from rich.text import Text

import protocol
from protocol.limits import BOT_THINK_S

from . import i18n
from .app import App
from .commands import LEVELS
from .i18n import add_lang_flag
from .launcher import LaunchFailed, local_server
from .netbot import NetBot
from .sessions import SessionFile

DEFAULT_SERVER = os.environ.get("ALUETTE_SERVER", "ws://127.0.0.1:8765")


def _default_name() -> str:
    with contextlib.suppress(Exception):
        return protocol.clean_text(getpass.getuser())[: protocol.MAX_NAME_LEN] or "player"
    return "player"


def choose_name(given: str | None, console: Console,
                ask: Callable[[str], str] | None = None) -> tuple[str, str | None]:
    """The name to play under, and a note on how it was chosen (issue 14, item 9).

    No ``--name``: the login name, and the hello line says so. An empty ``--name``: ask
    (when there is someone to ask), falling back to the login name. A name longer than the
    protocol allows (``protocol.MAX_NAME_LEN``) is shortened, and the player is told.
    """
    note: str | None = None
    name = given
    if name is None:
        name, note = _default_name(), "your login name; `--name NAME` picks another"
    elif not protocol.clean_text(name).strip():
        answer = ""
        if ask is not None:
            with contextlib.suppress(EOFError):
                answer = ask("What name do you want at the table? ")
        if protocol.clean_text(answer).strip():
            name = answer
        else:
            name, note = _default_name(), "your login name; `--name NAME` picks another"
    cleaned = protocol.clean_text(name).strip()
    if len(cleaned) > protocol.MAX_NAME_LEN:
        cleaned = cleaned[: protocol.MAX_NAME_LEN]
        console.print(Text(f"Your name is longer than {protocol.MAX_NAME_LEN} characters: it "
                           f"is shortened to {cleaned}.", style="yellow"))
    return cleaned or "player", note


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    i18n.choose(None)                   # the help speaks the environment's language
    parser = argparse.ArgumentParser(
        prog="aluette", description="Play Aluette online from the terminal.",
        epilog="`aluette play` starts a private local server and seats you with three bots.")
    parser.add_argument("command", nargs="?", choices=("play",),
                        help="play: a local game against bots (no server needed)")
    parser.add_argument("--server", default=DEFAULT_SERVER,
                        help=f"server URL (env ALUETTE_SERVER; default {DEFAULT_SERVER})")
    parser.add_argument("--name", default=None, help="your name at the table")
    parser.add_argument("--bot", choices=LEVELS, metavar="LEVEL",
                        help="run as a network bot of this level (random/easy/normal/expert)")
    parser.add_argument("--table", help="with --bot: the table to join (default: create one)")
    parser.add_argument("--level", choices=LEVELS, default="normal",
                        help="with play: the bots' level (default normal)")
    parser.add_argument("--deals", type=int, default=5, help="deals per match (R14; default 5)")
    parser.add_argument("--delay", type=int, default=600,
                        help="with play: bots pause this many ms before playing (default 600)")
    parser.add_argument("--chanter", action="store_true", help="with play, or --bot creating "
                        "a table: play the chanter (R9)")
    parser.add_argument("--signals", choices=protocol.SIGNALS_MODES,
                        default=None, help="with --bot creating a table: the signals mode "
                        "(R16; default the server's, private)")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="with play: keep the local server's data here (default: a "
                        "temporary directory)")
    parser.add_argument("--seed", type=int, default=None, help="with --bot: RNG seed")
    parser.add_argument("--quiet", action="store_true", help="with --bot: print less")
    parser.add_argument("--think-ms", type=float, default=BOT_THINK_S * 1000.0,
                        help="with --bot: a search bot thinks at most this long over a move, "
                        "then plays the best card found so far (0: no cap; default "
                        f"{BOT_THINK_S * 1000.0:g})")
    parser.add_argument("--new-session", action="store_true",
                        help="do not take back the session remembered for this server and "
                             "name (it is kept in $XDG_STATE_HOME/aluette)")
    add_lang_flag(parser)
    args = parser.parse_args(argv)
    i18n.choose(args.lang)
    if not 1 <= args.deals <= 50:
        parser.error("--deals must be from 1 to 50")
    if not 0 <= args.think_ms <= 60_000:
        parser.error("--think-ms must be from 0 (no cap) to 60000")
    return args


async def play_local(args: argparse.Namespace, console: Console) -> int:
    """A private local server (the ``aluette-server`` program, :mod:`.launcher`) with the
    embedded store, a table, three bots, and you."""
    async with contextlib.AsyncExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="aluette-play-")))
        data_dir = args.data_dir or scratch / "data"
        console.print(f"Starting a local server (data in {data_dir})…")
        try:
            url = await stack.enter_async_context(
                local_server(data_dir, log=scratch / "server.log"))
        except LaunchFailed as exc:
            console.print(Text(f"Could not start the local server: {exc}", style="bold red"))
            return 1
        create = f"create deals={args.deals} delay={args.delay} level={args.level}"
        if args.chanter:
            create += " chanter=on"
        app = App(url, args.name, console,
                  initial=[create, f"bots {args.level}", "start"], local=True,
                  name_note=getattr(args, "name_note", None))
        # A closed terminal (SIGHUP) or a kill (SIGTERM) unwinds the server and stops
        # its embedded store, rather than leaving it running behind us.
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        for sig in (signal.SIGHUP, signal.SIGTERM):
            loop.add_signal_handler(sig, task.cancel if task else (lambda: None))
        try:
            return await app.run()
        except asyncio.CancelledError:
            return 0


def bot_table_options(args: argparse.Namespace) -> dict[str, object]:
    """The options of the table a network bot creates (ignored when it joins one)."""
    options: dict[str, object] = {"deals": args.deals}
    if args.chanter:
        options["chanter"] = True
    if args.signals is not None:
        options["signals"] = args.signals
    return options


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    console = Console(highlight=False)
    try:
        if args.bot:
            bot = NetBot(args.server, args.bot, args.name or f"{args.bot} bot", console,
                         table=args.table, options=bot_table_options(args), seed=args.seed,
                         quiet=args.quiet, think_s=args.think_ms / 1000.0)
            return asyncio.run(bot.run())
        ask = input if sys.stdin.isatty() else None
        args.name, args.name_note = choose_name(args.name, console, ask)
        if args.command == "play":
            return asyncio.run(play_local(args, console))
        sessions = None if args.new_session else SessionFile()
        if sessions is not None and not sessions.claim(args.server, args.name):
            # Issue 14, item 11: that session is another live client's; taking it would
            # log that client out. Play on a separate, unremembered session instead.
            console.print(Text(
                f"Another aluette on this machine is using the session remembered for "
                f"{args.name}: this one starts a separate session, which is not remembered "
                f"(`--new-session` does the same on purpose; another --name gets its own "
                f"remembered session).", style="yellow"))
            sessions = None
        return asyncio.run(App(args.server, args.name, console, sessions=sessions,
                               name_note=args.name_note).run())
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
