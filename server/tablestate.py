"""A table's persisted document: seats, options, the match state, sequence and replies.

Plain data only (msgpack in Redis), with a format number. The asyncio :mod:`.table` works
on a copy of it per command and stores the copy before anything is acknowledged or sent.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

import msgpack

from server.game import Options

TABLE_FORMAT = 1
#: Replies remembered per player per table, so a command resent after a reconnect is
#: answered with its original result instead of being applied twice.
REPLIES_KEPT = 64

#: Options that are the engine's (docs/RULES.md); the rest of a table's options are the server's.
ENGINE_OPTIONS = ("deals", "target_points", "mordienne", "chanter", "partner_draw",
                  "first_dealer", "signals", "signal_risk")


@dataclass(slots=True)
class SeatState:
    kind: str = "empty"            # "empty" | "human" | "bot"
    name: str | None = None
    level: str | None = None       # bot level, for bots
    player: str | None = None      # player id, for humans
    takeover: bool = False         # a human's seat played by a bot after the grace period


@dataclass(slots=True)
class TableState:
    id: str
    name: str
    options: dict[str, Any]
    private: bool
    code: str | None
    creator: str
    seed: int
    status: str = "waiting"        # waiting | playing | finished | abandoned
    seats: list[SeatState] = field(default_factory=lambda: [SeatState() for _ in range(4)])
    match: dict[str, Any] | None = None
    seq: int = 0
    replies: dict[str, list[list[Any]]] = field(default_factory=dict)
    created_at: float = 0.0
    finished_at: float | None = None

    def engine_options(self) -> Options:
        return Options.from_dict({k: self.options[k] for k in ENGINE_OPTIONS
                                  if k in self.options})

    def seat_of(self, player: str) -> int | None:
        for i, s in enumerate(self.seats):
            if s.kind == "human" and s.player == player:
                return i
        return None

    def remember(self, player: str, command_id: int, reply: dict[str, Any]) -> None:
        kept = self.replies.setdefault(player, [])
        kept.append([command_id, reply])
        del kept[:-REPLIES_KEPT]

    def reply_for(self, player: str, command_id: int) -> dict[str, Any] | None:
        for cid, reply in self.replies.get(player, ()):
            if cid == command_id:
                return reply  # type: ignore[no-any-return]
        return None

    def copy(self) -> TableState:
        """A working copy for one command: what commands change is copied, the rest shared.

        ``match`` is only a serialized snapshot (the live state is the table's Match,
        cloned separately) and stored replies are never changed, so both are shared.
        """
        return replace(
            self,
            options=dict(self.options),
            seats=[replace(s) for s in self.seats],
            replies={player: list(kept) for player, kept in self.replies.items()},
        )

    def to_bytes(self) -> bytes:
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["seats"] = [{f.name: getattr(s, f.name) for f in fields(s)} for s in self.seats]
        data["format"] = TABLE_FORMAT
        return msgpack.packb(data)  # type: ignore[no-any-return]

    @classmethod
    def from_bytes(cls, raw: bytes) -> TableState:
        data = msgpack.unpackb(raw, strict_map_key=False)
        if data.pop("format", None) != TABLE_FORMAT:
            raise ValueError("unsupported table document format")
        data["seats"] = [SeatState(**s) for s in data["seats"]]
        return cls(**data)

    def info(self, spectators: int, connected: set[int]) -> dict[str, Any]:
        """The lobby's public description of the table (protocol ``TableInfo``)."""
        creator_seat = self.seat_of(self.creator)
        return {
            "table": self.id,
            "name": self.name,
            "options": dict(self.options),
            "private": self.private,
            "seats": [
                {"kind": s.kind, "name": s.name,
                 "level": s.level if s.kind == "bot" else (
                     self.options.get("bot_level") if s.takeover else None),
                 "connected": s.kind == "bot" or (s.kind == "human" and i in connected)}
                for i, s in enumerate(self.seats)
            ],
            "status": self.status,
            "spectators": spectators,
            "creator": creator_seat,
        }
