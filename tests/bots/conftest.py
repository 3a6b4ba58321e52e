"""Helpers for the bot tests: scripted deals built through the real engine."""

from __future__ import annotations

from server.game import ALL_CARDS, STRENGTH, Match, Options, Play


def fill(partial: list[list[str]]) -> list[list[str]]:
    """Complete each hand to nine cards with the weakest cards nobody was given (R3, R8)."""
    used = {c for h in partial for c in h}
    spare = sorted((c for c in ALL_CARDS if c not in used), key=lambda c: STRENGTH[c])
    hands = [list(h) for h in partial]
    for h in hands:
        while len(h) < 9:
            h.append(spare.pop(0))
    return hands


def scripted(hands: list[list[str]], plays: list[str], dealer: int = 3,
             **options: object) -> Match:
    """A one-deal match whose seats hold ``hands`` (9 cards each, R8), after ``plays``.

    The dealer defaults to seat 3, so seat 0 leads the first trick (R10). Plays are card
    codes in table order; the engine decides who is to act, so positions are real ones.
    """
    opts = {"signals": "off", **options}
    m, _ = Match.new(Options(deals=1, first_dealer=dealer, **opts), "scripted")  # type: ignore[arg-type]
    assert all(len(h) == 9 for h in hands)
    dealt = {c for h in hands for c in h}
    assert len(dealt) == 36
    m.hands = [list(h) for h in hands]
    m.play_hands = [list(h) for h in hands]
    m.talon = [c for c in ALL_CARDS if c not in dealt]
    for card in plays:
        seat = m.to_act
        assert seat is not None
        m.apply(Play(seat, card))
    return m
