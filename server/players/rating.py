"""Ratings for partnerships: OpenSkill's Weng-Lin Plackett-Luce model (``openskill``).

Each registered player has a mean ``mu`` and an uncertainty ``sigma``; a rated match
updates the four from the team result (R5: team 0 is seats 0 and 2). Nothing here is
hand-written rating maths: the model computes every update (docs/PROTOCOL.md, "Players").

**Who leaves takes the loss.** A player who leaves a rated match for good (a bot finished
it for them) is rated as having lost with their team, whatever the bot then made of it;
the other team is rated as having won; the leaver's partner keeps their rating unchanged
(the match is not theirs to win or lose any more). That is what lichess does for a player
who abandons (the one who leaves loses, the opponent's win counts) and what Board Game
Arena does for team games (the quitter is penalised, a teammate is not punished for being
abandoned). When both teams lose a player, each leaver takes a loss and nobody else's
rating moves.

**The scale.** ``display`` puts ``mu`` on the bots' ladder (docs/BOTS.md, Elo-like, fitted
on the arena's shares), with the ``normal`` bot at 1500, where a new player starts: a team
of two players each ``d`` above their opponents wins with the odds of ``59 d`` Elo in this
model once ``sigma`` is small (``c = beta * sqrt(2)``, ``2 d / c = E ln 10 / 400``).
"""

from __future__ import annotations

from collections.abc import Sequence

from openskill.models import PlackettLuce

from protocol.fields import BotLevel, MatchResult

Pair = tuple[float, float]

MODEL = PlackettLuce()
#: Display points per unit of ``mu`` (see the module's docstring).
DISPLAY_PER_MU = 59.0
#: Display rating of a new player (and of the ``normal`` bot).
DISPLAY_BASE = 1500
#: The table levels' Elo on the ladder (docs/BOTS.md, "The ladder after the expert
#: change"), relative to ``random``.
LADDER_ELO: dict[BotLevel, int] = {"random": 0, "easy": 121, "normal": 221, "expert": 294}
_ANCHOR = LADDER_ELO["normal"]


def default() -> Pair:
    return (MODEL.mu, MODEL.sigma)


def display(mu: float) -> int:
    return round(DISPLAY_BASE + DISPLAY_PER_MU * (mu - MODEL.mu))


def ladder() -> list[tuple[BotLevel, int]]:
    """The bot levels on the display scale, weakest first."""
    return [(level, DISPLAY_BASE + elo - _ANCHOR) for level, elo in LADDER_ELO.items()]


def level_near(mu: float) -> BotLevel:
    """The bot level whose place on the ladder is nearest ``mu`` (bots that fill a casual
    table for a waiting player)."""
    target = display(mu)
    return min(ladder(), key=lambda step: abs(step[1] - target))[0]


def _ranks(result: MatchResult) -> list[float]:
    return {"team0": [0.0, 1.0], "team1": [1.0, 0.0], "draw": [0.0, 0.0]}[result]


def _rate(teams: list[list[Pair]], ranks: list[float]) -> list[list[Pair]]:
    rated = MODEL.rate([[MODEL.rating(mu=mu, sigma=sigma) for mu, sigma in team]
                        for team in teams], ranks=ranks)
    return [[(r.mu, r.sigma) for r in team] for team in rated]


def rate_match(before: Sequence[Pair], result: MatchResult, left: frozenset[int] = frozenset()
               ) -> dict[int, Pair]:
    """The seats' ratings after a rated match (``before``: by seat), per seat that changes.

    ``left``: seats whose player left for good (see the module's docstring)."""
    teams = [[before[0], before[2]], [before[1], before[3]]]
    seats_of = [(0, 2), (1, 3)]
    losing = {seat % 2 for seat in left}
    if not losing:
        after = _rate(teams, _ranks(result))
        return {seat: after[t][i] for t in (0, 1) for i, seat in enumerate(seats_of[t])}
    out: dict[int, Pair] = {}
    for t in losing:
        after = _rate(teams, [1.0, 0.0] if t == 0 else [0.0, 1.0])
        for i, seat in enumerate(seats_of[t]):
            if seat in left:
                out[seat] = after[t][i]
        if len(losing) == 1:
            for i, seat in enumerate(seats_of[1 - t]):
                out[seat] = after[1 - t][i]
    return out
