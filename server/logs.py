"""Log lines for people (the default) or for log collectors (``--log-format json``).

JSON lines (issue 30) are one event per line: ``ts``, ``level``, ``logger``, ``msg``, and
the ``table`` and ``player`` the line is about, when known. Those ids come from the context
the line is logged in: :func:`bind` sets them while a command is carried out
(``server/dispatch.py``) and for a table's own tasks (its clock and follower), so the
existing log calls need no change; a call may also pass ``extra={"table": ...}``.

A context variable costs one ``set`` and one ``reset`` per command; nothing is formatted
unless a line is actually logged.
"""

from __future__ import annotations

import contextvars
import json
import logging
import time

__all__ = ["JsonFormatter", "bind", "configure", "unbind"]

#: (player, table) of what this task is doing now.
_CONTEXT: contextvars.ContextVar[tuple[str | None, str | None]] = contextvars.ContextVar(
    "aluette_log_context", default=(None, None))

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def bind(*, player: str | None = None, table: str | None = None
         ) -> contextvars.Token[tuple[str | None, str | None]]:
    """Name the player and table of every line logged from here until :func:`unbind`."""
    return _CONTEXT.set((player, table))


def unbind(token: contextvars.Token[tuple[str | None, str | None]]) -> None:
    _CONTEXT.reset(token)


class JsonFormatter(logging.Formatter):
    """One JSON object per line; an exception's traceback goes in ``exc``."""

    def format(self, record: logging.LogRecord) -> str:
        player, table = _CONTEXT.get()
        out: dict[str, object] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
                  + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        table = getattr(record, "table", None) or table
        player = getattr(record, "player", None) or player
        if table is not None:
            out["table"] = table
        if player is not None:
            out["player"] = player
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False, default=str)


def configure(log_format: str, level: int = logging.INFO) -> None:
    """The root logger's one handler: text (``%(asctime)s ...``) or JSON lines."""
    handler = logging.StreamHandler()
    if log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter(TEXT_FORMAT))
    logging.basicConfig(level=level, handlers=[handler], force=True)
