"""Seats and teams (R4, R5): four seats clockwise, partners opposite."""

from __future__ import annotations

SEATS = (0, 1, 2, 3)


def left_of(seat: int) -> int:
    """R4: the seat on a seat's left is the next one clockwise."""
    return (seat + 1) % 4


def partner_of(seat: int) -> int:
    """R5: partners sit opposite."""
    return (seat + 2) % 4


def team_of(seat: int) -> int:
    """R5: seats 0 and 2 are team 0, seats 1 and 3 are team 1."""
    return seat % 2
