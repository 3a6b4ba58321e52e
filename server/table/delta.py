"""What a play costs to store: the engine actions it applied, not the whole document again.

Most commits of a table are game actions: a card, a signal, a chanter vote or discard, by
a player or a bot. Such a commit changes only the match (by those actions), the event
counters and the time of the last activity, so it is stored as a :class:`TableDelta`
appended to the table's deltas (issue 32); any other commit, and every
:data:`COMPACT_EVERY`-th one, writes the whole document and starts the deltas afresh. A
table is its last whole document followed by its deltas, applied in order
(:func:`restore`): the engine is deterministic (docs/ARCHITECTURE.md convention 2), so the
same actions on the same match give the same match, every time, on every process.

The same delta is what the other processes hear of the commit: they apply it to their own
copy (the cost of one command) instead of decoding and rebuilding the whole document.
"""

from __future__ import annotations

import msgspec

from server.game import Action, Match
from server.store import StoredTable

from .state import TableState

#: Light commits between two whole documents: bounds what a load replays (and the deltas'
#: size in the store) while keeping whole documents rare during play.
COMPACT_EVERY = 50


class TableDelta(msgspec.Struct, array_like=True, frozen=True):
    """One light commit: the version it made, when, the actions applied (in order), and
    the event counters after it (``priv``: only the players whose count changed)."""

    version: int
    now: float
    actions: list[Action]
    gseq: int
    pub: int
    priv: dict[str, int]

    def encode(self) -> bytes:
        return _ENCODER.encode(self)

    @classmethod
    def decode(cls, raw: bytes) -> TableDelta:
        """Raises ``msgspec.DecodeError``/``ValidationError`` on bytes of another shape."""
        return _DECODER.decode(raw)


def _apply_in_place(state: TableState, match: Match, delta: TableDelta) -> None:
    for action in delta.actions:
        match.apply(action)
    state.gseq, state.pub = delta.gseq, delta.pub
    state.priv.update(delta.priv)
    state.last_activity = delta.now


def apply(state: TableState, match: Match, delta: TableDelta) -> tuple[TableState, Match]:
    """The table after ``delta``, as new objects (the given ones are left as they were)."""
    state, match = state.copy(), match.clone()
    _apply_in_place(state, match, delta)
    return state, match


def restore(stored: StoredTable) -> tuple[TableState, Match | None]:
    """The table a store holds: its last whole document with its deltas applied.

    Raises ``ValueError`` for deltas that do not follow the document (a store written by
    something else), and the engine's ``RuleError`` for an action it refuses."""
    state = TableState.from_bytes(stored.doc)
    match = Match.from_dict(state.match) if state.match else None
    for raw in stored.deltas:
        try:
            delta = TableDelta.decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise ValueError(f"table {state.id}: unreadable delta: {exc}") from None
        if match is None:
            raise ValueError(f"table {state.id}: a delta without a match")
        _apply_in_place(state, match, delta)
    return state, match


def delta_of(version: int, now: float, actions: list[Action], state: TableState,
             before_priv: dict[str, int]) -> TableDelta:
    """The delta of a light commit whose working copy is ``state`` (counters numbered)."""
    priv = {p: n for p, n in state.priv.items() if before_priv.get(p) != n}
    return TableDelta(version, now, list(actions), state.gseq, state.pub, priv)


_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder(TableDelta)
