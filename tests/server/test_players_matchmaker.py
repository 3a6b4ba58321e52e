"""Play now's matcher (issue 27, item 6), pure: who sits with whom, and where."""

from __future__ import annotations

from protocol import TableOptions
from server.players import rating
from server.players.matchmaker import WIDEN_MU_PER_S, WINDOW_MU, Request, form


def req(i: int, mu: float = 25.0, *, since: float = 0.0, rated: bool = True,
        deals: int = 5) -> Request:
    return Request(player=f"p{i}", name=f"P{i}", rated=rated, options=TableOptions(deals=deals),
                   mu=mu, sigma=3.0, since=since, account=f"a{i}")


def test_eight_close_requests_make_two_tables_each_player_once():
    tables = form([req(i, 25 + i * 0.1, since=i) for i in range(8)], now=8, bots_after_s=60)
    assert len(tables) == 2
    seated = [r.player for t in tables for r in t.requests]
    assert sorted(seated) == [f"p{i}" for i in range(8)]
    assert all(t.bot_level is None and len(t.requests) == 4 for t in tables)


def test_teams_are_balanced_strongest_with_weakest():
    (t,) = form([req(0, 20), req(1, 21), req(2, 22), req(3, 23)], now=1000, bots_after_s=60)
    mus = [r.mu for r in t.requests]
    assert mus == [20, 21, 23, 22]          # seats 0+2 (20+23) against 1+3 (21+22), R5


def test_far_ratings_wait_until_their_windows_widen():
    spread = WINDOW_MU + 1.0
    reqs = [req(0, 25), req(1, 25), req(2, 25), req(3, 25 + spread)]
    assert form(reqs, now=0, bots_after_s=60) == []
    later = (spread - WINDOW_MU) / WIDEN_MU_PER_S + 0.01
    assert len(form(reqs, now=later, bots_after_s=60)) == 1


def test_only_the_same_kind_of_game_and_options_sit_together():
    reqs = [req(0), req(1), req(2, deals=3), req(3, rated=False)]
    assert form(reqs, now=1, bots_after_s=60) == []


def test_a_casual_request_gets_bots_near_its_rating_after_the_wait_a_rated_one_never():
    casual = req(0, 21.0, rated=False)
    assert form([casual], now=10, bots_after_s=30) == []
    (t,) = form([casual], now=30, bots_after_s=30)
    assert [r is None for r in t.seats] == [False, True, True, True]
    assert t.bot_level == rating.level_near(21.0) == "random"
    assert form([req(1, rated=True)], now=10_000, bots_after_s=30) == []


def test_two_casual_players_after_the_wait_sit_as_partners():
    (t,) = form([req(0, rated=False), req(1, rated=False, since=5)], now=60, bots_after_s=30)
    assert [r.player if r else None for r in t.seats] == ["p0", None, "p1", None]


def test_the_ladder_places_normal_at_the_start_rating():
    assert dict(rating.ladder())["normal"] == rating.display(rating.default()[0]) == 1500
