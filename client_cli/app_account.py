"""The prompt's account commands (protocol 1.5, issue 27): ``register``, ``login``,
``logout`` (``logout all``), ``passwd``.

Passwords are asked at a prompt that does not echo them (prompt_toolkit's
``is_password``; ``getpass`` on a dumb terminal, where prompt_toolkit lets the terminal
echo what is typed), never taken from the command line (it would stay in the history and on
the screen), never shown, logged or remembered: the session file keeps the session token
only, as for a guest.
"""

from __future__ import annotations

import asyncio
import getpass

from prompt_toolkit.utils import is_dumb_terminal
from rich.text import Text

import protocol

from . import render
from .app_core import AppCore
from .commands import InputError


class AccountCommands(AppCore):
    async def _secret(self, question: str) -> str:
        """A password, typed without echo; empty (or Ctrl-C) gives up."""
        if self.session is None:
            raise InputError("A password can only be typed at the prompt.")
        try:
            if is_dumb_terminal():
                # prompt_toolkit reads a dumb terminal's cooked lines as typed, echo and
                # all: getpass turns the echo off itself.
                answer = await asyncio.to_thread(getpass.getpass, question)
            else:
                answer = await self.session.prompt_async(question, is_password=True)
        except (EOFError, KeyboardInterrupt):
            answer = ""
        finally:
            self._install_sigint()
        if not answer:
            raise InputError("No password typed: nothing was done.")
        return answer

    async def _new_secret(self) -> str:
        first = await self._secret("New password (8 characters or more): ")
        if len(first) < protocol.MIN_PASSWORD_LEN:
            raise InputError(f"A password has {protocol.MIN_PASSWORD_LEN} characters or more.")
        if await self._secret("The same password again: ") != first:
            raise InputError("The two passwords differ: nothing was done.")
        return first

    def _took_session(self, name: str, account: str) -> None:
        self.conn.session.name = name
        self.show(Text("✓ You are ", style="bold green")
                  .append_text(render.safe(name, protocol.MAX_NAME_LEN))
                  .append(f" (account {protocol.clean_text(account)[:40]}).",
                          style="bold green"))

    async def _register(self, args: list[str]) -> None:
        name = " ".join(args) or self.conn.server_name
        password = await self._new_secret()
        made = await self.conn.call(protocol.Register, resend=False, name=name,
                                    password=password)
        self._took_session(str(made["name"]), str(made["account"]))
        self.show(render.note("Your matches so far stay yours. `login` with this name and "
                              "password on any other device."))

    async def _login(self, args: list[str]) -> None:
        if not args:
            raise InputError("Type `login NAME`; the password is asked next, not shown.")
        if self.conn.tables:
            raise InputError("Leave your tables first (`leave`), then log in.")
        password = await self._secret("Password: ")
        result = await self.conn.call(protocol.Login, resend=False, name=" ".join(args),
                                      password=password)
        # This device's own token from now on (remembered like a welcome's).
        self.conn.session.token = str(result["session"])
        self.conn.session.player_id = str(result["player_id"])
        self.conn._remember()
        self._took_session(str(result["name"]), str(result["account"]))

    async def _logout(self, args: list[str]) -> None:
        everywhere = [a.lower() for a in args] in (["all"], ["everywhere"])
        if args and not everywhere:
            raise InputError("Type `logout`, or `logout all` to end every device's session.")
        revoked = await self.conn.end_session(everywhere=everywhere)
        self.current = None
        self.show(render.note(f"Logged out ({revoked} session(s) ended); "
                              "you go on as a guest."))

    async def _passwd(self, args: list[str]) -> None:
        if args:
            raise InputError("Type `passwd` alone; the passwords are asked next, not shown.")
        old = await self._secret("Current password: ")
        new = await self._new_secret()
        result = await self.conn.call(protocol.ChangePassword, resend=False,
                                      old_password=old, new_password=new)
        self.show(render.note(f"Password changed; {result.get('revoked', 0)} other "
                              "session(s) ended."))
