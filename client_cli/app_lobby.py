"""The terminal client's lobby commands: help, the tables, create, join, watch, bots."""

from __future__ import annotations

from rich.text import Text

import protocol
from protocol import TableInfo
from protocol.results import SeatRef

from . import render
from .app_core import AppCore, explain, signals_help, valid_entries
from .commands import InputError, parse_create, parse_level, parse_seat, parse_table_ref
from .connection import ConnectionFailed, ServerError
from .i18n import tr, tr_text


class LobbyCommands(AppCore):
    """`help`, `tables`, `create`, `join`, `watch`, `bot`, `bots`: finding and taking a
    seat, and what moving away from a live match means."""

    async def _leave_live_match_ok(self, what: str, target: str | None = None) -> bool:
        """Before `create`, `join` or `watch` takes you away from a live match: ask."""
        here = self.current
        if here is None or here == target or not self._live_seat(here):
            return True
        q = tr_text("cli.move.ask", "bold yellow", table=render.safe(here, 64),
                    command=what)
        if await self._confirm(q):
            return True
        self.show(render.note(tr("cli.move.unchanged", table=protocol.clean_text(here))))
        return False

    def _help(self, args: list[str]) -> None:
        topic = args[0].lower() if args else ""
        if topic in ("strength", "cards", "r3"):
            self.show(render.strength_table())
        elif topic in ("play", "history", "profile", "cancel"):
            from .render_players import HELP_PLAY
            self.show(Text(HELP_PLAY))
        elif topic in ("signals", "signal", "r15", "r16"):
            self.show(signals_help())
        elif topic in ("rules", "rule"):
            self.show(Text(render.help_text("rules")))
        elif topic in ("mordienne", "r13", "r13a"):
            self.show(Text(render.help_text("mordienne")))
        elif topic in ("chanter", "r9"):
            self.show(Text(render.help_text("chanter")))
        elif topic == "create":
            self.show(Text(render.help_text("create")))
        else:
            self.show(Text(render.help_text("main")), render.strength_table(),
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
            self.show(render.note(tr("cli.lobby.seated_at", tables=tids)))

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
        out = tr_text("cli.created", "green", table=render.safe(table, 64),
                      seat=model.seat)
        if result.get("code"):
            out.append_text(tr_text("cli.created.private", table=render.safe(table, 64),
                                    join_code=render.safe(result["code"], 16)))
        self.show(out, render.note(tr("cli.created.next")))
        self._still_yours(previous)

    def _still_yours(self, previous: str | None) -> None:
        """After moving away from a live match: say that the seat is kept and how to return."""
        if previous is not None and previous != self.current and self._live_seat(previous):
            tid = protocol.clean_text(previous)
            self.show(render.note(tr("cli.move.kept", table=tid), style="yellow"))

    def _failed_move(self, previous: str | None, table: str, exc: Exception) -> None:
        """A join or watch that failed: back to where we were, and say so (item 2)."""
        self.show(explain(exc))
        if isinstance(exc, ServerError) and exc.code == "no_such_table":
            # Private tables are listed only to their players, so a short id cannot be
            # resolved for them: say so rather than leave "no such table" a mystery.
            self.show(render.note(tr("cli.move.no_such_start",
                                     start=protocol.clean_text(table)[:20])))
        self.current = previous
        if table != previous and (table not in self.conn.tables
                                  or self.conn.tables[table].info is None):
            self._forget(table)
        if previous is not None and previous in self.conn.tables:
            self.show(render.note(tr("cli.move.still", table=protocol.clean_text(previous))))

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
        out = tr_text("cli.watching", "green", table=render.safe(table, 64))
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
