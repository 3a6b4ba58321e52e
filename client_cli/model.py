"""A client's local copy of one table, kept in step with the server's event stream.

The protocol's :class:`~protocol.session.ClientSession` decides which frames count (in
order, never twice, gaps resumed); this model applies each event it is given to the last
view, so it always holds exactly the view dict the engine would build for our seat
(``server.game.view``): the same shape the renderer shows and the network bot hands to
``server.bots.choose_action``. A ``snapshot`` replaces everything.

Whose turn it is comes only from the server: a ``turn`` event (sent once per turn) or a
snapshot's ``to_act``. Every event that ends a turn clears it until the next ``turn``, so
the model never guesses a turn the server did not announce (a guessed turn is how the
network bot once tried to play an empty hand).

A table may play several matches (a rematch): ``deals_committed`` opens each one and
starts a fresh view. Chat is kept apart from the view (``chat``, ``speakers``), and the
model checks what R8a lets a player check (``fair_note``): that the commitment a match
starts with is the one the table showed before we contributed, that our contribution is
in it, and at the end that the revealed record proves the deals.

Pure: no I/O, no asyncio, so it is tested by replaying engine matches through it.
"""

from __future__ import annotations

import copy
import secrets
from dataclasses import dataclass, field
from typing import Any

from protocol import EventError, options_from_dict, to_dict
from server.game import fair
from server.game.cards import sort_by_strength
from server.game.record import RecordError, verify_record
from server.game.seats import left_of

View = dict[str, Any]



def new_contribution() -> str:
    """R8a: this client's contribution to a match's seed, 16 random bytes in hex from the
    system's randomness (never a seeded generator: a contribution must be unpredictable)."""
    return secrets.token_hex(16)


@dataclass
class TableModel:
    """One table as this client knows it: lobby info, our seat, the view, the last seq."""

    table: str
    seat: int | None = None              # our seat; None when spectating
    seq: int = 0                         # our sequence number of the last event applied
    info: dict[str, Any] | None = None   # the latest TableInfo (table_changed)
    view: View | None = None             # the engine-shaped view, once a match is running
    pending_discard: list[str] = field(default_factory=list)
    match: int = 0                       # this table's match number (a rematch: the next)
    commitment: str | None = None        # R8a: the current match's commitment
    #: The latest chat messages (``chat`` events), and who said them: sender id ->
    #: (name, seat or None for a spectator), which is what ``mute`` needs.
    chat: list[dict[str, Any]] = field(default_factory=list)
    speakers: dict[str, tuple[str, int | None]] = field(default_factory=dict)
    #: Our own sender id at this table, once a ``chat_history`` told it (1.4).
    my_sender: str | None = None
    #: Senders we mute at this table (our mute commands, and the head's chat_history).
    muted: set[str] = field(default_factory=set)
    #: R8a: what the latest check found, (all well, in words), and which event made it.
    fair_note: tuple[bool, str] | None = None
    fair_note_of: str | None = None
    #: R8a: our last contribution and the commitment the table showed when we sent it.
    sent: tuple[str | None, str] | None = None

    CHAT_KEPT = 200

    # ------------------------------------------------------------------ queries

    @property
    def spectator(self) -> bool:
        return self.seat is None

    @property
    def my_turn(self) -> bool:
        v = self.view
        return (v is not None and self.seat is not None and v.get("to_act") == self.seat
                and v.get("phase") in ("play", "chanter_vote", "chanter_discard"))

    @property
    def status(self) -> str:
        return str(self.info.get("status", "waiting")) if self.info else "waiting"

    def seat_name(self, seat: int) -> str | None:
        """The raw (uncleaned) name in ``seat`` from the lobby info, if known."""
        if not self.info:
            return None
        seats = self.info.get("seats") or []
        if 0 <= seat < len(seats):
            name = seats[seat].get("name")
            return str(name) if name else None
        return None

    # ------------------------------------------------------------------ R8a

    def contributing(self, contribution: str, seen: str | None = None) -> None:
        """We are sending ``contribution`` now, having seen ``seen`` (default: the table's
        ``next_commitment`` as we know it): remembered to check the match's start."""
        if seen is None and self.info:
            seen = self.info.get("next_commitment")
        self.sent = (seen, contribution)

    def _on_deals_committed(self, e: dict[str, Any]) -> None:
        """A match starts (the first, or a rematch): a fresh view, and R8a's checks."""
        self.match = int(e["match"])
        self.commitment = str(e["commitment"])
        self.view = None
        self.pending_discard = []
        words = (f"Match {self.match} at this table: the deals are committed (R8a) to "
                 f"{self.commitment}; "
                 + fair.contributed_words(fair.contributors(e.get("contributions") or [])))
        problems = []
        if self.sent is not None and self.seat is not None:
            seen, mine = self.sent
            if seen is not None and seen != self.commitment:
                problems.append("this commitment is not the one the table showed before you "
                                "contributed (the server could have chosen its secret after "
                                "seeing your contribution)")
            contributions = e.get("contributions") or []
            if self.seat >= len(contributions) or contributions[self.seat] != mine:
                problems.append("your contribution is not in it")
        if problems:
            self.fair_note = (False, f"{words}, but {' and '.join(problems)}.")
        else:
            self.fair_note = (True, words + ("; your contribution is in."
                                             if self.sent is not None and self.seat is not None
                                             else "."))
        self.fair_note_of = "deals_committed"
        self.sent = None

    def _check_record(self, e: dict[str, Any]) -> None:
        """R8a at the end: the revealed record proves the deals, against the commitment
        this match started with."""
        record = e.get("record")
        if not isinstance(record, dict) or record.get("fair") is None:
            return
        try:
            verify_record(record, self.commitment)
        except RecordError as exc:
            self.fair_note = (False, f"The record does not prove fair deals (R8a): {exc}")
        else:
            self.fair_note = (True, "Fair deals (R8a): every deal followed from the seed "
                                    "committed before the first card"
                              + (f" ({self.commitment})" if self.commitment else "") + "; "
                              + fair.contributed_words(
                                  fair.contributors(record["fair"].get("contributions") or []))
                              + ".")
        self.fair_note_of = "match_over"

    def _on_chat_history(self, e: dict[str, Any]) -> None:
        """A head's chat so far (protocol 1.4): it replaces the log, and names our own
        sender id at this table."""
        self.my_sender = str(e.get("sender") or "") or self.my_sender
        self.muted = {str(x) for x in e.get("muted") or []}
        self.chat = []
        for line in e.get("lines") or []:
            self._on_chat(line)

    def _on_chat(self, e: dict[str, Any]) -> None:
        self.chat = [*self.chat, dict(e)][-self.CHAT_KEPT:]
        seat = e.get("from_seat")
        self.speakers[str(e["sender"])] = (str(e["name"]), seat if isinstance(seat, int)
                                           else None)

    # ------------------------------------------------------------------ applying

    def apply(self, event: dict[str, Any]) -> None:
        """Apply one event payload (an engine-shaped dict) to the view, as the engine does."""
        kind = event.get("type")
        if kind == "deals_committed":
            self._on_deals_committed(event)
            return
        if kind == "chat":
            self._on_chat(event)
            return
        if kind == "chat_history":
            self._on_chat_history(event)
            return
        if kind == "snapshot":
            view = copy.deepcopy(event["view"])
            view.setdefault("discarded", [])
            view.setdefault("signals_sent", [])
            view["trick"] = [list(x) for x in view.get("trick", [])]
            view["draw"] = [list(x) for x in view.get("draw", [])]
            self.view = view
            self.seat = view.get("viewer")
            return
        if kind == "table_changed":
            self.info = copy.deepcopy(event["table"])
            return
        v = self.view
        if v is None:
            # Events of a match we have no view of (a snapshot always comes first; this is
            # only reached if a server skips it): start from an empty view.
            if kind in ("partner_draw", "deal_started"):
                v = self.view = self._empty_view()
            else:
                return
        handler = getattr(self, f"_on_{kind}", None)
        if handler is not None:
            handler(v, event)

    def _empty_view(self) -> View:
        try:
            options = to_dict(options_from_dict(dict((self.info or {}).get("options") or {})))
        except EventError:
            options = {}
        return {
            "viewer": self.seat, "phase": "play", "options": options, "deal_number": 0,
            "dealer": 0, "to_act": None, "hand": [], "hand_sizes": [0, 0, 0, 0], "leader": 0,
            "trick": [], "tricks": [], "trick_counts": [0, 0, 0, 0], "points": [0, 0],
            "deals": [], "chanter_votes": [None] * 4, "signals": [], "draw": [],
            "result": None, "discarded": [], "signals_sent": [],
        }

    def _on_partner_draw(self, v: View, e: dict[str, Any]) -> None:
        """R7: seats move; ``seating[s]`` is where the player of seat ``s`` now sits."""
        v["draw"] = [list(x) for x in e["cards"]]
        v["dealer"] = e["dealer"]
        if self.seat is not None:
            self.seat = e["seating"][self.seat]
            v["viewer"] = self.seat

    def _on_deal_started(self, v: View, e: dict[str, Any]) -> None:
        """R8: a fresh deal; R9: with chanter the deal opens with the vote."""
        dealer = e["dealer"]
        chanter = bool((v.get("options") or {}).get("chanter", False))
        v.update({
            "deal_number": e["deal_number"], "dealer": dealer,
            "phase": "chanter_vote" if chanter else "play",
            "to_act": None, "hand": [], "hand_sizes": [9, 9, 9, 9],
            "leader": left_of(dealer), "trick": [], "tricks": [], "trick_counts": [0] * 4,
            "chanter_votes": [None] * 4, "signals": [], "discarded": [], "signals_sent": [],
        })
        self.pending_discard = []

    def _on_hand_dealt(self, v: View, e: dict[str, Any]) -> None:
        if e["seat"] == self.seat:
            v["hand"] = sort_by_strength(list(e["cards"]))

    def _on_chanter_vote(self, v: View, e: dict[str, Any]) -> None:
        v["chanter_votes"][e["seat"]] = e["vote"]
        v["to_act"] = None

    def _on_chanter_result(self, v: View, e: dict[str, Any]) -> None:
        """R9: all four agreed, the talon goes to the dealer's left and the dealer."""
        first, dealer = left_of(v["dealer"]), v["dealer"]
        if e["accepted"]:
            v["phase"] = "chanter_discard"
            v["hand_sizes"][first] += 6
            v["hand_sizes"][dealer] += 6
        else:
            v["phase"] = "play"
            v["leader"] = first
        v["to_act"] = None

    def _on_talon_dealt(self, v: View, e: dict[str, Any]) -> None:
        if e["seat"] == self.seat:
            v["hand"] = sort_by_strength(list(v["hand"]) + list(e["cards"]))

    def _on_chanter_discarded(self, v: View, e: dict[str, Any]) -> None:
        seat, dealer = e["seat"], v["dealer"]
        v["hand_sizes"][seat] -= 6
        if seat == self.seat and self.pending_discard:
            v["hand"] = [c for c in v["hand"] if c not in self.pending_discard]
            v["discarded"] = list(self.pending_discard)
            self.pending_discard = []
        if seat != left_of(dealer):
            v["phase"] = "play"
            v["leader"] = left_of(dealer)
        v["to_act"] = None

    def _on_card_played(self, v: View, e: dict[str, Any]) -> None:
        """R10: any card; the turn passes clockwise."""
        seat, card = e["seat"], e["card"]
        v["trick"].append([seat, card])
        v["hand_sizes"][seat] = max(0, v["hand_sizes"][seat] - 1)
        if seat == self.seat and card in v["hand"]:
            v["hand"] = [c for c in v["hand"] if c != card]
        v["to_act"] = None

    def _on_trick_done(self, v: View, e: dict[str, Any]) -> None:
        """R11: the winner leads next; after a spoiled trick the same leader leads again."""
        winner = e["winner"]
        v["tricks"].append({"leader": e["leader"], "cards": list(e["cards"]), "winner": winner})
        v["trick"] = []
        if winner is not None:
            v["trick_counts"][winner] += 1
            v["leader"] = winner
        else:
            v["leader"] = e["leader"]
        v["to_act"] = None   # the next `turn` says who leads (none after the ninth, R11)

    def _on_deal_scored(self, v: View, e: dict[str, Any]) -> None:
        """R12/R13: the deal's result joins the match history."""
        v["points"] = list(e["totals"])
        v["deals"].append({
            "dealer": e["dealer"], "winner": e["winner"], "points": list(e["points"]),
            "mordienne": e["mordienne"], "trick_counts": list(e["trick_counts"]),
        })
        v["to_act"] = None

    def _on_match_over(self, v: View, e: dict[str, Any]) -> None:
        v["phase"] = "match_over"
        v["to_act"] = None
        v["points"] = list(e["points"])
        v["result"] = e["result"]
        self._check_record(e)

    def _on_signal(self, v: View, e: dict[str, Any]) -> None:
        v["signals"].append({"from_seat": e["from_seat"], "signal": e["signal"], "n": e.get("n")})

    def _on_signal_sent(self, v: View, e: dict[str, Any]) -> None:
        """R16: what we signalled, without who noticed it (the bots' view lists it)."""
        v.setdefault("signals_sent", []).append({"signal": e["signal"], "n": e.get("n")})

    def _on_turn(self, v: View, e: dict[str, Any]) -> None:
        v["to_act"] = e["seat"]
