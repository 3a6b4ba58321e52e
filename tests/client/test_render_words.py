"""What the client says, in words a newcomer understands (issue 14, items 5, 6, 8, 10, 12, 13).

Deal results come from real engine scoring (scripted record deals replayed by
``verify_record``), views from a real engine match; everything is rendered by a real rich
console into text.
"""

from __future__ import annotations

import io
from typing import Any

import msgspec
from rich.console import Console, RenderableType

from client_cli import render
from client_cli.app import App
from client_cli.model import TableModel
from protocol import (
    CardPlayed,
    ChanterVoted,
    DealScored,
    PlayerConnected,
    PlayerDisconnected,
    SeatInfo,
    TableChanged,
    TableInfo,
    TableOptions,
    TrickDone,
    TrickInfo,
    TurnTimedOut,
)
from protocol.results import SeatRef
from protocol.vocab import TableStatus
from server.game import Match, Options, spectator_view, view
from server.game.record import verify_record

from ..records.builders import build_deal, build_record

S = None  # a spoiled trick (R11)
NAMES = ("Ana", "Bo", "Cy", "Di")


def text(*items: RenderableType, width: int = 200) -> str:
    console = Console(file=io.StringIO(), width=width, color_system=None, highlight=False)
    for item in items:
        console.print(item)
    out = console.file.getvalue()  # type: ignore[attr-defined]
    return str(out)


def info(names: tuple[str, ...] = NAMES, status: TableStatus = "playing",
         **seat_overrides: dict[str, Any]) -> TableInfo:
    seats = [SeatInfo(kind="human", name=n, level=None, connected=True) for n in names]
    for key, value in seat_overrides.items():
        seats[int(key[1:])] = msgspec.structs.replace(seats[int(key[1:])], **value)
    return TableInfo(table="t1", name="Friday", options=TableOptions(grace_s=90), seats=seats,
                     status=status)


def model_at(seat: int | None, **kw: Any) -> TableModel:
    return TableModel("t1", seat=seat, info=info(**kw))


def scored(winners: list[int | None], dealer: int = 3) -> tuple[DealScored, list[TrickInfo]]:
    """A ``deal_scored`` event and the deal's tricks, scored by the engine (R12-R13a)."""
    record = build_record([build_deal(dealer, winners)])
    deal = verify_record(record)["deals"][0]
    event = DealScored(deal_number=1, dealer=dealer, trick_counts=deal["trick_counts"],
                       winner=deal["winner"], points=deal["points"],
                       mordienne=deal["mordienne"], totals=deal["points"])
    tricks = [TrickInfo(leader=t["leader"], cards=cards, winner=t["winner"])
              for t, cards in zip(deal["tricks"], record["deals"][0]["tricks"], strict=True)]
    return event, tricks


def deal_text(seat: int | None, winners: list[int | None]) -> str:
    event, tricks = scored(winners)
    model = model_at(seat)
    match, _ = Match.new(Options(deals=1), 0)
    model.view = msgspec.structs.replace(spectator_view(match), viewer=seat, tricks=tricks)
    return " ".join(text(render.deal_result(model, event)).split())


# --------------------------------------------------------------------------- item 6


def test_r12_most_tricks_and_r11_spoiled_tricks_are_explained() -> None:
    out = deal_text(0, [2, S, 2, 0, 2, S, 1, 2, 3])
    assert "Tricks won: you 1, Bo 1, Cy 4, Di 1; 2 tricks spoiled, counted for nobody (R11)." in out
    assert ("The deal goes to your partner Cy: the most tricks, 4 (R12); your team "
            "(you & Cy) scores 1 point.") in out
    assert "MORDIENNE" not in out


def test_r12_a_tie_is_broken_by_who_got_there_first() -> None:
    # Bo and Cy both win 3; Cy reaches 3 at trick 6, Bo only at trick 9.
    out = deal_text(0, [1, 2, 2, 1, 0, 2, 3, 0, 1])
    assert ("The deal goes to your partner Cy: 3 tricks, as many as Bo, but Cy got to three "
            "at trick 6 first (R12); your team (you & Cy) scores 1 point.") in out


def test_r13_mordienne_has_its_own_announcement() -> None:
    out = deal_text(0, [0, S, 2, S, 1, 3, 3, 3, 3])
    assert ("★ MORDIENNE! Di wins the last 4 tricks in a row and none before (R13): "
            "2 points instead of 1.") in out
    assert "their team (Bo & Di) scores 2 points." in out
    assert "mordienne (R13)" in out


def test_r13a_a_clean_sweep_is_a_mordienne() -> None:
    out = deal_text(1, [1] * 9)
    assert "★ MORDIENNE! you take all nine tricks (R13a): 2 points instead of 1." in out
    assert ("The deal goes to you: all nine tricks, a clean sweep: mordienne (R13a); your team "
            "(you & Di) scores 2 points.") in out


def test_r12_all_spoiled_nobody_scores() -> None:
    out = deal_text(None, [S] * 9)
    assert "All nine tricks were spoiled: nobody scores (R12)." in out
    assert "9 tricks spoiled" in out


def test_a_spectator_reads_the_teams_by_name() -> None:
    out = deal_text(None, [0, S, 2, S, 1, 3, 3, 3, 3])
    assert "The deal goes to Di: " in out and "; Bo & Di score 2 points." in out


def test_help_pages(tmp_path: Any) -> None:
    """`help rules`, `help mordienne`, `help signals`, `help chanter`: a page each."""
    console = Console(file=io.StringIO(), width=100, color_system=None)
    app = App("ws://127.0.0.1:9", "Ana", console)
    pages = {}
    for topic in ("rules", "mordienne", "signals", "chanter"):
        start = console.file.tell()
        app._help([topic])
        pages[topic] = console.file.getvalue()[start:]  # type: ignore[attr-defined]
    assert "(R12)" in pages["rules"] and "docs/RULES.md" in pages["rules"]
    assert "no duty to follow suit" in pages["rules"]
    assert "R13a" in pages["mordienne"] and "trick 8 was spoiled" in pages["mordienne"]
    assert "risky" in pages["signals"] and "signal going_mordienne" in pages["signals"]
    assert "`yes` or `no`" in pages["chanter"] and "10 11 12 13 14 15" in pages["chanter"]
    assert len(set(pages.values())) == 4


# --------------------------------------------------------------------------- items 5, 13


def test_names_not_numbers() -> None:
    model = model_at(0)
    assert render.who(model, 0).plain == "you"
    assert render.who(model, 2).plain == "your partner Cy"
    assert render.who(model, 1).plain == "Bo"
    assert render.team_text(model, 0).plain == "your team (you & Cy)"
    assert render.team_text(model, 1).plain == "their team (Bo & Di)"
    watcher = model_at(None)
    assert render.team_text(watcher, 1).plain == "Bo & Di"
    # Two players with one name: the seat number tells them apart.
    twins = model_at(0, names=("Ana", "Bo", "Ana", "Di"))
    assert render.who(twins, 2).plain == "your partner Ana (seat 2)"


def test_verbs_agree_with_you() -> None:
    model = model_at(0)
    spoiled = TrickDone(number=2, leader=0, cards=["1o", "1c", "4b", "5e"], winner=None)
    assert "nobody wins it; you lead again." in render.trick_result(model, spoiled).plain
    spoiled.leader = 1
    spoiled.cards = ["1c", "1o", "4b", "5e"]
    assert "nobody wins it; Bo leads again." in render.trick_result(model, spoiled).plain
    played = render.event_lines(model, CardPlayed(seat=0, card="3o"))
    assert text(*played).strip() == "you play 3o ◆ Monsieur"
    vote = render.event_lines(model, ChanterVoted(seat=0, vote=True))
    assert text(*vote).strip() == "you want to chanter."


def test_plurals() -> None:
    tables = [TableInfo(table="t1", name="One", status="waiting",
                        options=TableOptions(deals=1), seats=info().seats)]
    out = text(render.tables_table(tables, []))
    assert "1 deal," in out and "1 deals" not in out
    assert render.duration(1) == "1 second"
    assert render.duration(120) == "2 minutes"
    assert render.duration(90) == "1 minute 30 seconds"


# --------------------------------------------------------------------------- item 8


def test_dropped_player_is_given_the_grace_period() -> None:
    model = model_at(0)
    lines = render.event_lines(model, PlayerDisconnected(seat=1))
    assert text(*lines).strip() == ("Bo lost the connection: if they are not back within "
                                    "1 minute 30 seconds, a bot plays for them until they "
                                    "return.")


def test_a_turn_the_timer_played_is_said() -> None:
    """``turn_timed_out`` (protocol 1.5): the browser says it, the terminal said nothing."""
    model = model_at(0)
    model.apply(TurnTimedOut(seat=1))
    assert text(*render.event_lines(model, TurnTimedOut(seat=1))).strip() \
        == "Time ran out for Bo: a bot played for them."
    assert text(*render.event_lines(model, TurnTimedOut(seat=2))).strip() \
        == "Time ran out for your partner Cy: a bot played for them."
    assert text(*render.event_lines(model, TurnTimedOut(seat=0))).strip() \
        == "Your time ran out: a bot played for you."
    assert text(*render.event_lines(model_at(None), TurnTimedOut(seat=0))).strip() \
        == "Time ran out for Ana: a bot played for them."


def test_takeover_and_return_come_from_the_seat_info() -> None:
    model = model_at(0)
    gone = info(s1={"connected": False})
    taken = info(s1={"connected": False, "level": "normal"})
    # The grace period ran out: a human seat, not connected, with a bot level.
    lines = render.event_lines(model, TableChanged(table=taken), before=gone)
    assert text(*lines).strip() == "A bot now plays for Bo until they come back."
    # Bo returns: player_connected arrives while the info still shows the takeover.
    model.info = taken
    lines = render.event_lines(model, PlayerConnected(seat=1))
    assert text(*lines).strip() == "Bo is back: the bot gives the seat back."
    model.info = gone
    lines = render.event_lines(model, PlayerConnected(seat=1))
    assert text(*lines).strip() == "Bo is back."
    # Already connected (a resume that was not a drop): nothing to say.
    model.info = info()
    assert render.event_lines(model, PlayerConnected(seat=1)) == []


# --------------------------------------------------------------------------- item 10


def test_lobby_shows_live_tables_first_and_hides_finished_ones() -> None:
    seats = info().seats
    empty = [SeatInfo(kind="empty")] * 4
    tables = [
        TableInfo(table="tdone", status="finished", seats=seats),
        TableInfo(table="tplay", status="playing", seats=seats),
        TableInfo(table="tleft", status="waiting", seats=empty),
        TableInfo(table="twait", status="waiting", seats=seats),
        TableInfo(table="tmine", status="playing", seats=seats),
        TableInfo(table="tgone", status="abandoned", seats=seats),
    ]
    mine = [SeatRef(table="tmine", seat=2), SeatRef(table="tdone", seat=0)]
    shown, hidden = render.lobby_order(tables, mine)
    assert [t.table for t in shown] == ["tmine", "twait", "tplay"]
    assert hidden == 3
    out = text(render.tables_table(tables, mine))
    assert "2 finished tables and 1 empty table hidden: `tables all` shows them." in out
    shown, hidden = render.lobby_order(tables, mine, show_all=True)
    assert [t.table for t in shown][:3] == ["tmine", "twait", "tplay"]
    assert hidden == 0 and len(shown) == 6


# --------------------------------------------------------------------------- item 12


def test_a_small_terminal_gets_a_compact_screen() -> None:
    match, _ = Match.new(Options(deals=5), 7)
    seat = match.to_act
    assert seat is not None
    model = TableModel("t1a2b3c4d5e6f", seat=seat, info=info())
    model.view = view(match, seat)
    assert render.wants_compact(60, 20) and not render.wants_compact(100, 40)
    out = text(render.game_screen(model, compact=True), width=60)
    lines = out.rstrip("\n").split("\n")
    assert len(lines) <= 10, out
    assert all(len(line) <= 60 for line in lines), out
    assert "Trick 1 of 9" in out and "Hand:" in out and "▶ Your turn" in out
    for code in view(match, seat).hand:
        assert code in out
    full = text(render.game_screen(model), width=100)
    assert len(full.split("\n")) > len(lines) + 8


def test_every_signal_has_its_meaning_in_the_cards_own_words() -> None:
    """R15: one line per signal, in the rule's order; a card signal names its carte majeure
    as the engine does (R3), so the words cannot drift from the cards."""
    from protocol.vocab import SIGNAL_CARD, SIGNALS
    from server.game import card_name

    assert list(render.SIGNAL_MEANINGS) == list(SIGNALS)
    for signal, card in SIGNAL_CARD.items():
        assert render.SIGNAL_MEANINGS[signal] == f"I hold {card_name(card)} ({card})"
    assert render.SIGNAL_MEANINGS["borgne"] == "I hold Le Borgne (2o)"


def test_a_client_that_says_it_is_a_program_is_shown_as_a_bot() -> None:
    """Protocol 1.5 (issue 33): a seat whose client said ``hello {bot: true}`` is a bot to
    everyone, in the lobby, before the match and during it, like the server's own."""
    robo = info(status="waiting", s1={"name": "Robo", "bot": True})
    lobby = text(render.tables_table([robo], []))
    assert "Robo [bot]" in lobby and "Ana [bot]" not in lobby
    before = text(render.seats_lines(TableModel("t1", seat=0, info=robo)))
    assert "Robo [bot]" in before and "Ana [bot]" not in before
