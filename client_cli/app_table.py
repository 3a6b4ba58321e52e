"""The terminal client's commands at a table: chat, mute, rematch, the match record."""

from __future__ import annotations

import json
from pathlib import Path

import protocol

from . import render
from .app_core import AppCore
from .commands import InputError, resolve_sender
from .i18n import tr
from .model import TableModel


class TableCommands(AppCore):
    """`say`, `mute`/`unmute`, `rematch`, `record`: what a seat or a spectator does at a
    table besides playing."""

    async def _chat(self, text: str) -> None:
        """`say TEXT`: to everyone at the table if we sit there, to the spectators if we
        watch (the server decides; the line comes back as a `chat` event)."""
        table = self._need_table()
        if len(protocol.clean_text(text)) > protocol.MAX_CHAT_LEN:
            raise InputError(tr("cli.chat.too_long", max=protocol.MAX_CHAT_LEN))
        await self.conn.call(protocol.Chat, table=table, text=text)

    async def _mute(self, args: list[str], muted: bool) -> None:
        model = self._need_model()
        if not args:
            raise InputError(tr("cli.mute.how", command="mute" if muted else "unmute"))
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
        self.show(render.note(tr("cli.mute.done" if muted else "cli.unmute.done", name=name)))

    async def _unmute_all(self, model: TableModel) -> None:
        """`unmute all`: everyone we mute at this table, named or not (after a reconnect
        the server's chat_history says whom, but their lines, and so names, are gone)."""
        if not model.muted:
            self.show(render.note(tr("cli.mute.nobody")))
            return
        for sender in sorted(model.muted):
            await self.conn.call(protocol.Mute, table=model.table, sender=sender, muted=False)
            model.muted.discard(sender)
        self.show(render.note(tr("cli.unmute.all")))

    async def _rematch(self) -> None:
        """One keystroke (`r`) after a match: ask for another one, or accept it."""
        model = self._need_model()
        if model.seat is None:
            raise InputError(tr("cli.rematch.seated_only"))
        await self.conn.call(protocol.Rematch, table=model.table,
                             contribution=self._contribution(model.table))

    async def _record(self, args: list[str]) -> None:
        table = self._need_table()
        result = await self.conn.call(protocol.GetRecord, table=table)
        record = result.get("record") or {}
        path = Path(args[0]) if args else Path(f"aluette-{protocol.clean_text(table)}.json")
        path.write_text(json.dumps(record, ensure_ascii=False, indent=1), encoding="utf-8")
        self.show(render.note(tr("cli.record.written", path=path)))
