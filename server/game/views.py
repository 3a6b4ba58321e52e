"""What each viewer may know (docs/ARCHITECTURE.md convention 4): the only way state leaves
the engine.

A seat's view carries its own hand and discards, the public history and the signals that
reached it; a spectator's view carries only what is public. Hidden cards are never put in,
so there is nothing to filter at the edge. Bots receive exactly these views.
"""

from __future__ import annotations

from typing import Any

from .cards import sort_by_strength
from .match import Match


def _public(match: Match, viewer: int | None) -> dict[str, Any]:
    leader = match.leader
    return {
        "viewer": viewer,
        "phase": str(match.phase),
        "options": match.options.to_dict(),
        "deal_number": match.deal_number,
        "dealer": match.dealer,
        "to_act": match.to_act,
        "hand": [],
        "hand_sizes": [len(h) for h in match.hands],
        "leader": leader,
        "trick": [[(leader + i) % 4, c] for i, c in enumerate(match.trick)],
        "tricks": [
            {"leader": t["leader"], "cards": list(t["cards"]), "winner": t["winner"]}
            for t in match.tricks
        ],
        "trick_counts": [
            sum(1 for t in match.tricks if t["winner"] == s) for s in range(4)
        ],
        "points": list(match.points),
        "deals": [
            {"dealer": d["dealer"], "winner": d["winner"], "points": list(d["points"]),
             "mordienne": d["mordienne"], "trick_counts": list(d["trick_counts"])}
            for d in match.deals
        ],
        "chanter_votes": list(match.votes),
        "signals": [],
        "draw": [list(x) for x in match.draw],
        "result": match.result,
    }


def view(match: Match, seat: int) -> dict[str, Any]:
    """Seat ``seat``'s view: its own cards, the public record, and signals sent to it."""
    if type(seat) is not int or not 0 <= seat <= 3:
        raise ValueError(f"seat must be 0-3, not {seat!r}")
    v = _public(match, seat)
    v["hand"] = sort_by_strength(match.hands[seat])
    v["discarded"] = list(match.discards[seat])
    v["signals"] = [
        {"from_seat": s["from_seat"], "signal": s["signal"], "n": s["n"]}
        for s in match.signals
        if s["deal"] == match.deal_number and seat in s["to"]
    ]
    v["signals_sent"] = [
        {"signal": s["signal"], "n": s["n"]}
        for s in match.signals
        if s["deal"] == match.deal_number and s["from_seat"] == seat
    ]
    return v


def spectator_view(match: Match) -> dict[str, Any]:
    """R16: spectators see only what is public, and never a signal."""
    return _public(match, None)
