"""A table's persisted document: seats, options, the match, and its event counters.

A typed msgspec struct, stored as msgpack with a format number. The table actor
(:mod:`.actor`) works on a copy per command and stores the copy before anything is
acknowledged or sent.

Event numbering (docs/PROTOCOL.md, "Sequence numbers"): every viewer has a sequence of
its own, so that nobody learns how many events they may not see (finding: placeholders
leaked the count of the other team's signals). ``pub`` counts public events, ``priv[p]``
the private events player ``p`` received; player ``p``'s sequence number is
``pub + priv[p]``. It depends on the player, never on the seat, so it stays consistent
when a player moves (R7's partner draw) or stops playing and watches.

Fair deals (R8a, :mod:`server.game.fair`): ``next_seed`` is the secret and salt of the
table's next match, drawn when the previous one starts (or the table is made), so that
its commitment is public before anyone contributes; ``match_seed`` is the current (or
last) match's, with the contributions it was dealt from. Both stay in the stored document:
nothing here is ever sent, and the record reveals ``match_seed`` only once the match is over.
"""

from __future__ import annotations

from typing import Any, cast

import msgspec

from protocol import ChatMessage, TableInfo, TableOptions, encode
from protocol.fields import BotLevel, SeatKind, TableStatus
from protocol.records import FairBlock, OptionsMap
from protocol.views import SeatInfo
from server.game import Options, fair

TABLE_FORMAT = 2

#: Options that are the engine's (docs/RULES.md); the rest of a table's options are the
#: server's (bots, timers, auto start).
ENGINE_OPTIONS = ("deals", "target_points", "mordienne", "chanter", "partner_draw",
                  "first_dealer", "signals", "signal_risk")


class SeatState(msgspec.Struct, kw_only=True):
    kind: SeatKind = "empty"
    name: str | None = None
    level: BotLevel | None = None      # bots: their level
    player: str | None = None          # humans: their player id
    #: A human's seat played by a bot after the grace period, until they come back.
    takeover: bool = False
    #: A human with a live connection to this table (persisted: connection changes are
    #: table events, and a restart marks everyone disconnected).
    connected: bool = False
    disconnected_at: float | None = None
    #: Players who voted to let a bot play this seat before its grace period ends (1.5);
    #: cleared when its player comes back or the bot takes it.
    bot_votes: list[str] = msgspec.field(default_factory=list)
    #: Humans: the player's client said it is a program (``hello {bot: true}``, 1.5); the
    #: seat is shown as a bot to everyone.
    bot: bool = False


class SeedMaterial(msgspec.Struct, kw_only=True):
    """A match's secret and salt (R8a), and the seats' contributions once it has started.

    ``scheme`` is the fair-deal scheme its commitment binds (:mod:`server.game.fair`): 2
    for material drawn now; material stored before scheme 2 has none and is scheme 1, so
    a match whose commitment was shown under 1 is dealt and revealed under 1.
    """

    secret: str
    salt: str
    contributions: list[str | None] = msgspec.field(default_factory=list)
    scheme: int = 1

    @classmethod
    def new(cls) -> SeedMaterial:
        secret, salt = fair.new_secret()
        return cls(secret=secret, salt=salt, scheme=fair.CURRENT)

    @property
    def commitment(self) -> str:
        return fair.commitment(self.secret, self.salt, self.scheme)

    def seed(self, contributions: list[str | None]) -> str:
        """The match's seed from these contributions (R8a)."""
        return fair.derive_seed(self.secret, self.salt, contributions, self.scheme)

    def started(self, contributions: list[str | None]) -> SeedMaterial:
        """This material as the match it seeds started: with the seats' contributions."""
        return SeedMaterial(secret=self.secret, salt=self.salt, contributions=contributions,
                            scheme=self.scheme)

    def reveal(self) -> FairBlock:
        """The record's ``fair`` block, once the match is over (R8a, R17)."""
        return fair.reveal(self.secret, self.salt, self.contributions, self.scheme)


class TableState(msgspec.Struct, kw_only=True):
    format: int = TABLE_FORMAT
    id: str
    name: str
    options: TableOptions
    private: bool
    code: str | None
    creator: str
    seed: int
    status: TableStatus = "waiting"
    seats: list[SeatState] = msgspec.field(default_factory=lambda: [SeatState() for _ in range(4)])
    match: dict[str, Any] | None = None
    #: Events ever logged: the log's own numbering, never shown to a client.
    gseq: int = 0
    pub: int = 0
    priv: dict[str, int] = msgspec.field(default_factory=dict)
    #: Players who held a seat while a match was played: who may read a private table's
    #: record.
    members: list[str] = msgspec.field(default_factory=list)
    #: Players admitted with the code to watch this private table (so their resume after a
    #: dropped connection is let in); the most recent ones only.
    guests: list[str] = msgspec.field(default_factory=list)
    created_at: float = 0.0
    finished_at: float | None = None
    last_activity: float = 0.0
    #: Matches started at this table (the first is 1; a rematch adds one).
    match_number: int = 0
    #: R8a: the next match's secret and salt (its commitment is public), and the current
    #: or last match's seed material. Secret until that match is over.
    next_seed: SeedMaterial | None = None
    match_seed: SeedMaterial | None = None
    #: R8a: contributions to the next match, by player (the latest each one sent).
    contributions: dict[str, str] = msgspec.field(default_factory=dict)
    #: Players who asked for another match since the last one ended.
    rematch: list[str] = msgspec.field(default_factory=list)
    #: Chat senders each player muted at this table (by sender id).
    mutes: dict[str, list[str]] = msgspec.field(default_factory=dict)
    #: The latest chat lines (``CHAT_HISTORY``), for the heads' ``chat_history``; replaced,
    #: never changed in place, so a command's copy may share it.
    chat: list[ChatMessage] = msgspec.field(default_factory=list)
    #: Who sat where when the current (or last) match started: a human's player id, None
    #: for a bot or a program (issue 27: history, and who takes a rated match's result).
    lineup: list[str | None] = msgspec.field(default_factory=list)

    # ------------------------------------------------------------------ queries

    def engine_options(self) -> Options:
        data = msgspec.structs.asdict(self.options)
        return Options.from_dict(cast(OptionsMap, {k: data[k] for k in ENGINE_OPTIONS}))

    def seat_of(self, player: str) -> int | None:
        for i, s in enumerate(self.seats):
            if s.kind == "human" and s.player == player:
                return i
        return None

    def seq_for(self, player: str) -> int:
        """``player``'s own sequence number at this table (what its last event carried)."""
        return self.pub + self.priv.get(player, 0)

    def controlled_by_bot(self, seat: int) -> bool:
        s = self.seats[seat]
        return s.kind == "bot" or (s.kind == "human" and s.takeover)

    def bot_level(self, seat: int) -> BotLevel:
        s = self.seats[seat]
        return s.level if s.kind == "bot" and s.level else self.options.bot_level

    def grace_until(self, seat: int) -> float | None:
        """When the grace period of the disconnected player in ``seat`` ends (a bot then
        plays for them, or a rematch goes on without them); None if none is running."""
        s = self.seats[seat]
        if (s.kind != "human" or s.connected or s.takeover or s.disconnected_at is None
                or self.status not in ("playing", "finished")):
            return None
        return s.disconnected_at + self.options.grace_s

    def humans(self) -> list[str]:
        return [s.player for s in self.seats if s.kind == "human" and s.player]

    def matches_started(self) -> int:
        """Matches started here (a table stored before match numbers had at most one)."""
        return self.match_number or (1 if self.match is not None else 0)

    def matches_finished(self) -> int:
        """Matches of this table whose record exists: all started ones but a running one."""
        started = self.matches_started()
        return started - 1 if self.status == "playing" else started

    def info(self, spectators: int) -> TableInfo:
        """The lobby's public description of the table (``TableInfo``)."""
        creator_seat = self.seat_of(self.creator)
        return TableInfo(
            table=self.id,
            name=self.name,
            options=self.options,
            private=self.private,
            seats=[
                SeatInfo(kind=s.kind, name=s.name,
                         level=s.level if s.kind == "bot" else (
                             self.options.bot_level if s.takeover else None),
                         connected=s.kind == "bot" or (s.kind == "human" and s.connected),
                         grace_until=self.grace_until(i),
                         bot_votes=[v for v in range(4) if self.seats[v].kind == "human"
                                    and self.seats[v].player in s.bot_votes],
                         bot=s.kind == "bot" or (s.kind == "human" and s.bot))
                for i, s in enumerate(self.seats)
            ],
            status=self.status,
            spectators=spectators,
            creator=creator_seat,
            match=self.matches_started(),
            next_commitment=self.next_seed.commitment if self.next_seed else None,
            rematch=[i for i, s in enumerate(self.seats)
                     if s.kind == "human" and s.player in self.rematch],
        )

    # ------------------------------------------------------------------ copies and bytes

    def copy(self) -> TableState:
        """A working copy for one command: what commands change is copied, the rest shared.

        ``match`` is only a serialized snapshot (the live state is the table's Match,
        cloned separately) and options never change once the table exists.
        """
        return msgspec.structs.replace(
            self,
            seats=[msgspec.structs.replace(s, bot_votes=list(s.bot_votes)) for s in self.seats],
            priv=dict(self.priv),
            members=list(self.members),
            guests=list(self.guests),
            contributions=dict(self.contributions),
            rematch=list(self.rematch),
            mutes=dict(self.mutes),
        )

    def to_bytes(self) -> bytes:
        return _ENCODER.encode(self)

    @classmethod
    def from_bytes(cls, raw: bytes) -> TableState:
        """Decode a stored document; a format-1 document (before per-viewer sequences) is
        migrated: its events become public numbering and its old log is unusable (readers
        of the log then fall back to snapshots)."""
        head = msgspec.msgpack.decode(raw)
        if not isinstance(head, dict):
            raise ValueError("a table document is a map")
        fmt = head.get("format")
        if fmt == TABLE_FORMAT:
            return _DECODER.decode(raw)
        if fmt == 1:
            return _from_v1(head)
        raise ValueError(f"unsupported table document format {fmt!r}")


_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder(TableState)


def _from_v1(data: dict[str, Any]) -> TableState:
    seq = int(data.get("seq", 0))
    return msgspec.convert({
        "format": TABLE_FORMAT,
        "id": data["id"], "name": data["name"], "options": data.get("options") or {},
        "private": data["private"], "code": data.get("code"), "creator": data["creator"],
        "seed": data["seed"], "status": data.get("status", "waiting"),
        "seats": data["seats"], "match": data.get("match"),
        "gseq": seq, "pub": seq, "priv": {},
        "members": [s["player"] for s in data["seats"] if s.get("player")],
        "created_at": data.get("created_at", 0.0), "finished_at": data.get("finished_at"),
        "last_activity": data.get("created_at", 0.0),
    }, TableState)


class LobbyEntry(msgspec.Struct, kw_only=True):
    """What the lobby of every process reads of a table (stored with each commit that
    changes it): what the table limits and ``list_tables`` need, and its public
    description, kept encoded until a page shows it."""

    created: float
    creator: str
    private: bool
    players: list[str]
    status: TableStatus
    info: bytes = b""

    @property
    def open(self) -> bool:
        return self.status in ("waiting", "playing")


def lobby_entry(state: TableState, spectators: int, *, with_info: bool = True) -> LobbyEntry:
    """The table's lobby entry now (``with_info``: its encoded ``TableInfo`` too)."""
    return LobbyEntry(created=state.created_at, creator=state.creator, private=state.private,
                      players=state.humans(), status=state.status,
                      info=encode(state.info(spectators)) if with_info else b"")


def encode_lobby_entry(entry: LobbyEntry) -> bytes:
    return _ENCODER.encode(entry)


def decode_lobby_entry(raw: bytes) -> LobbyEntry | None:
    """A stored lobby entry, or None if it cannot be read."""
    try:
        return _ENTRY_DECODER.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


_ENTRY_DECODER = msgspec.msgpack.Decoder(LobbyEntry)
