"""What each viewer may know (docs/ARCHITECTURE.md convention 4): the only way state leaves
the engine.

A seat's view carries its own hand and discards, the public history and the signals that
reached it; a spectator's view carries only what is public. Hidden cards are never put in,
so there is nothing to filter at the edge. Views are the protocol's own
:class:`~protocol.TableView`: the server sends them as they are (a ``snapshot``), the clients
keep them up to date from events, and bots receive exactly these.
"""

from __future__ import annotations

from protocol.views import DealInfo, SignalInfo, SignalSent, TableOptions, TableView, TrickInfo

from .cards import sort_by_strength
from .match import Match
from .options import Options


def table_options(options: Options) -> TableOptions:
    """The game's options as the table shows them (the server's own options at their
    defaults: a view speaks of the rules only)."""
    return TableOptions(deals=options.deals, target_points=options.target_points,
                        mordienne=options.mordienne, chanter=options.chanter,
                        partner_draw=options.partner_draw, first_dealer=options.first_dealer,
                        signals=options.signals, signal_risk=options.signal_risk)


def _public(match: Match, viewer: int | None) -> TableView:
    leader = match.leader
    return TableView(
        viewer=viewer,
        phase=match.phase,
        options=table_options(match.options),
        deal_number=match.deal_number,
        dealer=match.dealer,
        to_act=match.to_act,
        hand=[],
        hand_sizes=[len(h) for h in match.hands],
        leader=leader,
        trick=[((leader + i) % 4, c) for i, c in enumerate(match.trick)],
        tricks=[TrickInfo(leader=t["leader"], cards=list(t["cards"]), winner=t["winner"])
                for t in match.tricks],
        trick_counts=[sum(1 for t in match.tricks if t["winner"] == s) for s in range(4)],
        points=list(match.points),
        deals=[DealInfo(dealer=d["dealer"], winner=d["winner"], points=list(d["points"]),
                        mordienne=d["mordienne"], trick_counts=list(d["trick_counts"]))
               for d in match.deals],
        chanter_votes=list(match.votes),
        signals=[],
        draw=[(s, c) for s, c in match.draw],
        result=match.result,
    )


def view(match: Match, seat: int) -> TableView:
    """Seat ``seat``'s view: its own cards, the public record, and signals sent to it."""
    if type(seat) is not int or not 0 <= seat <= 3:
        raise ValueError(f"seat must be 0-3, not {seat!r}")
    v = _public(match, seat)
    v.hand = sort_by_strength(match.hands[seat])
    v.discarded = list(match.discards[seat])
    v.signals = [
        SignalInfo(from_seat=s["from_seat"], signal=s["signal"], n=s["n"])
        for s in match.signals
        if s["deal"] == match.deal_number and seat in s["to"]
    ]
    v.signals_sent = [
        SignalSent(signal=s["signal"], n=s["n"])
        for s in match.signals
        if s["deal"] == match.deal_number and s["from_seat"] == seat
    ]
    return v


def spectator_view(match: Match) -> TableView:
    """R16: spectators see only what is public, and never a signal."""
    return _public(match, None)
