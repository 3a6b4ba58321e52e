"""Errors the server answers with: a protocol error code and a plain-words message.

Rule errors from the engine already carry their code (``RuleError.code``); lobby and session
problems are raised as :class:`CommandError`. Neither ever closes the connection.
"""

from __future__ import annotations

from protocol import ErrorCode


class CommandError(Exception):
    """A command that cannot be carried out; nothing was changed."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(f"{code.value}: {message}")
        self.code = code
        self.message = message
