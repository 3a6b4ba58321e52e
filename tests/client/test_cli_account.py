"""The terminal's account commands (issue 27): register, log out, log in from another
terminal, change the password; a password is never echoed nor printed."""

from __future__ import annotations

import re

import pytest

from .conftest import Cli, ServerProcess, plain

PASSWORD = "s3cret-horse-battery"
NEW = "an0ther-long-secret"


#: What a real terminal's prompt_toolkit may write between two characters of a prompt.
ESCAPES = r"(?:\x1b\[[0-9;?]*[A-Za-z]|\x1b[=>]|\r)*"


def see(cli: Cli, text: str) -> None:
    """Wait for ``text`` on the screen, whatever escapes a real terminal puts inside it."""
    cli.expect(ESCAPES.join(re.escape(ch) for ch in text))


def type_secret(cli: Cli, prompt: str, secret: str) -> None:
    see(cli, prompt.strip())
    cli.send(secret)


@pytest.mark.parametrize("term", ["dumb", "xterm"])
def test_register_logout_login_passwd(server_proc: ServerProcess, spawn, term: str) -> None:
    ana = spawn("--server", server_proc.url, "--name", "Ana", term=term)
    see(ana, "Type `help`")
    ana.send("help")
    see(ana, "register")
    ana.expect(r"passwd")
    ana.send("register")
    type_secret(ana, "New password (8 characters or more): ", PASSWORD)
    type_secret(ana, "The same password again: ", PASSWORD)
    see(ana, "✓ You are Ana (account ana).")
    # A second terminal, another name: logs in as Ana.
    other = spawn("--server", server_proc.url, "--name", "Laptop", term=term)
    see(other, "Type `help`")
    other.send("login ana")
    type_secret(other, "Password: ", "wrong password")
    see(other, "Wrong name or password.")
    other.send("login ana")
    type_secret(other, "Password: ", PASSWORD)
    see(other, "✓ You are Ana (account ana).")
    # Change of password from the second terminal: the first one's session ends.
    other.send("passwd")
    type_secret(other, "Current password: ", PASSWORD)
    type_secret(other, "New password (8 characters or more): ", NEW)
    type_secret(other, "The same password again: ", NEW)
    see(other, "Password changed; 1 other session(s) ended.")
    other.send("logout")
    see(other, "you go on as a guest")
    other.quit()
    ana.quit()
    for cli in (ana, other):
        shown = plain(cli.output)
        assert PASSWORD not in shown and NEW not in shown and "wrong password" not in shown
