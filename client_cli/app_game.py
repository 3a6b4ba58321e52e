"""The terminal client's game commands: the chanter vote and discard (R9), cards (R10),
signals (R15). They run in the background so the prompt stays free while they travel."""

from __future__ import annotations

from typing import Any

import protocol

from . import render
from .app_core import AppCore, signals_help
from .commands import InputError, parse_discard, parse_signal, resolve_card
from .connection import ConnectionFailed, ServerError
from .i18n import tr
from .model import TableModel

#: Bare words the chanter vote prompt takes (R9), as `chanter yes` / `chanter no` do.
CHANTER_WORDS = {"yes": True, "y": True, "on": True, "no": False, "n": False, "off": False}


class GameCommands(AppCore):
    """`play` (or just a card), `chanter`, `discard`, `signal`, and the bare answers the
    chanter prompts take."""

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
                self.show(render.note(tr("cli.signal.sent")))

        self._spawn(cls.__name__, go(), serves=model.table)
