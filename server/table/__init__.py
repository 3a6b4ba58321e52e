"""A table: its document, what commands do to it, and the parts that run it.

Rooms, from the pure to the shell (docs/ARCHITECTURE.md, "A table"):

- :mod:`.state`: the stored document (seats, options, the match, event counters);
- :mod:`.mutations`, :mod:`.chat`: what each command does to a working copy (pure);
- :mod:`.decide`: which mutation a command means, and what is due next (pure);
- :mod:`.fanout`: who gets which event, numbered in each viewer's sequence;
- :mod:`.watching`: who may watch, and what a returning viewer missed;
- :mod:`.presence`: who is here, over every process;
- :mod:`.replies`: the answers remembered, so a resent command is carried out once;
- :mod:`.replica`: this process's copy, kept equal to the store (commit, follow, catch up);
- :mod:`.clock`: bots, timers, grace periods;
- :mod:`.attending`: what the table is now, its presence, its place among the processes;
- :mod:`.actor`: :class:`Table`, which puts them together, one command at a time.
"""

from __future__ import annotations

from .actor import Table

__all__ = ["Table"]
