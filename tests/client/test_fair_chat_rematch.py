"""The terminal client's side of issue 15, without a network: the model follows a rematch
as the engine does, keeps chat apart from the game, checks the commitment it was shown and
its own contribution (R8a), and the words it prints for all of it."""

from __future__ import annotations

import copy
import io
import json
import random
from typing import Any

import msgspec
import pytest
from rich.console import Console, RenderableType

import protocol
from client_cli import render
from client_cli.commands import InputError, resolve_sender
from client_cli.model import TableModel
from protocol import SeatInfo, TableInfo, TableOptions
from protocol.vocab import TableStatus
from server.game import Match, Options, fair, view
from server.game.record import export_record
from server.game.views import table_options

from .test_model import expected, model_view, sees, wire

SECRET, SALT = "ab" * 32, "cd" * 16
COMMITMENT = fair.commitment(SECRET, SALT)


def text(*items: RenderableType) -> str:
    console = Console(file=io.StringIO(), width=200, color_system=None, highlight=False)
    for item in items:
        console.print(item)
    return " ".join(str(console.file.getvalue()).split())  # type: ignore[attr-defined]


def info(status: TableStatus = "waiting", commitment: str | None = COMMITMENT,
         rematch: list[int] | None = None) -> TableInfo:
    seats = [SeatInfo(kind="human", name=n, level=None, connected=True)
             for n in ("Ana", "Bo", "Cy", "Di")]
    return TableInfo(table="t1", name="Friday", options=TableOptions(deals=1, first_dealer=3),
                     seats=seats, status=status, match=0, next_commitment=commitment,
                     rematch=rematch or [])


def committed(contributions: list[str | None], commitment: str = COMMITMENT,
              number: int = 1) -> protocol.DealsCommitted:
    return protocol.DealsCommitted(match=number, commitment=commitment,
                                   contributions=contributions)


def chat(text_: str, seat: int | None, name: str, sender: str) -> protocol.ChatMessage:
    return protocol.ChatMessage(from_seat=seat, name=name, text=text_, sender=sender)


def over_the_wire(event: protocol.EventPayload) -> protocol.EventPayload | None:
    """``event`` as a client decodes it (None: the client could not)."""
    decoded = protocol.decode_server(protocol.encode(protocol.Event(table="t1", seq=1,
                                                                    event=event)))
    assert isinstance(decoded, protocol.Event)
    return None if isinstance(decoded.event, protocol.UnknownEvent) else decoded.event


def play_out(match: Match, models: dict[int | None, TableModel], rng: random.Random) -> None:
    while not match.over:
        seat = match.to_act
        assert seat is not None
        for event in match.apply(rng.choice(match.legal_actions(seat))):
            for s, m in models.items():
                if sees(event, s):
                    m.apply(wire(event))


# ---------------------------------------------------------------- rematch in the model


@pytest.mark.parametrize("seed", range(4))
def test_a_rematch_starts_a_fresh_view_that_follows_the_engine(seed: int) -> None:
    """After match 1, ``deals_committed`` opens match 2: the model drops match 1's deals
    and points and follows the engine's view of the new match, seat by seat (R6, R7)."""
    rng = random.Random(seed)
    options = Options(deals=1, partner_draw=seed % 2 == 1, chanter=seed >= 2)
    models: dict[int | None, TableModel] = {s: TableModel("t1", seat=s)
                                            for s in (0, 1, 2, 3, None)}
    table = msgspec.structs.replace(info("playing"), options=table_options(options))
    for number in (1, 2):
        match, opening = Match.new(options, f"seed-{seed}-{number}")
        for m in models.values():
            m.apply(protocol.TableChanged(table=table))
            m.apply(committed([None] * 4, number=number))
            assert m.view is None and m.match == number
            for event in opening:
                if sees(event, m.seat):
                    m.apply(wire(event))
        models = {m.seat: m for m in models.values()}
        play_out(match, models, rng)
        for s, m in models.items():
            assert model_view(m, s) == expected(match, s)
            assert m.view is not None and len(m.view.deals) == 1


# ---------------------------------------------------------------- chat in the model


def test_chat_is_kept_apart_from_the_view_with_who_said_it() -> None:
    m = TableModel("t1", seat=2, info=info())
    m.apply(chat("hello", 0, "Ana", "a" * 16))
    m.apply(chat("psst", None, "Sam", "5" * 16))
    m.apply(chat("hi Ana", 1, "Bo", "b" * 16))
    assert m.view is None                                  # no match view was made up
    assert [c.text for c in m.chat] == ["hello", "psst", "hi Ana"]
    assert m.speakers == {"a" * 16: ("Ana", 0), "5" * 16: ("Sam", None),
                          "b" * 16: ("Bo", 1)}
    for i in range(300):
        m.apply(chat(f"n{i}", 0, "Ana", "a" * 16))
    assert len(m.chat) == TableModel.CHAT_KEPT and m.chat[-1].text == "n299"


def test_mute_names_a_speaker_by_name_seat_or_id() -> None:
    speakers = {"a" * 16: ("Ana", 0), "5" * 16: ("Sam", None), "b" * 16: ("Bo", 1),
                "c" * 16: ("Sam", 3)}
    assert resolve_sender("ana", speakers) == "a" * 16
    assert resolve_sender("1", speakers) == "b" * 16
    assert resolve_sender("5" * 16, speakers) == "5" * 16
    with pytest.raises(InputError, match="Two people called Sam"):
        resolve_sender("Sam", speakers)
    with pytest.raises(InputError, match="Nobody called Zoe has spoken"):
        resolve_sender("Zoe", speakers)
    with pytest.raises(InputError, match="Nobody in seat 2 has spoken"):
        resolve_sender("2", speakers)


def test_chat_lines_are_set_apart_and_cleaned() -> None:
    m = TableModel("t1", seat=2, info=info())
    seat_line = text(*render.event_lines(m, chat("well played", 1, "Bo", "b" * 16)))
    assert seat_line == "[chat] Bo: well played"
    mine = text(*render.event_lines(m, chat("thanks", 2, "Cy", "c" * 16)))
    assert mine == "[chat] you: thanks"
    watcher = TableModel("t1", seat=None, info=info())
    from_stands = text(*render.event_lines(
        watcher, chat("\x1b[2Jgo Bo", None, "Sam\u202e", "5" * 16)))
    assert from_stands == "[chat] Sam (watching): [2Jgo Bo"


def test_a_heads_chat_history_replaces_the_log_and_marks_our_own_lines() -> None:
    """Protocol 1.4: a spectator who reconnects reads the conversation so far, its own
    spectator lines as its own (by sender id), and a seat's earlier line by someone else
    in its seat as theirs."""
    m = TableModel("t1", seat=None, info=info())
    m.apply(chat("stale", 0, "Ana", "a" * 16))
    history = protocol.ChatHistory(sender="5" * 16, lines=[
        chat("hello", 2, "Old", "d" * 16), chat("psst", None, "Sam", "5" * 16)])
    m.apply(history)                  # the connection applies, then the screen shows
    words = text(*render.event_lines(m, history))
    assert words == "2 earlier chat lines at this table: `chat` shows them."
    assert [c.text for c in m.chat] == ["hello", "psst"]
    assert m.my_sender == "5" * 16
    assert text(*render.event_lines(m, chat("again", None, "Sam", "5" * 16))) == (
        "[chat] you: again")
    sat = TableModel("t1", seat=2, info=info())
    sat.apply(msgspec.structs.replace(history, sender="e" * 16))
    assert text(render.chat_line(sat, sat.chat[0])) == "[chat] Old: hello"
    assert text(render.chat_line(sat, chat("mine", 2, "Cy", "e" * 16))) == "[chat] you: mine"
    assert over_the_wire(history) == protocol.ChatHistory(
        lines=[protocol.ChatMessage(from_seat=2, name="Old", text="hello", sender="d" * 16),
               protocol.ChatMessage(from_seat=None, name="Sam", text="psst",
                                    sender="5" * 16)],
        sender="5" * 16)


# ---------------------------------------------------------------- R8a in the client


def test_r8a_the_client_checks_the_commitment_and_its_contribution() -> None:
    m = TableModel("t1", seat=1, info=info())
    m.contributing("beef")
    m.apply(committed([None, "beef", None, None]))
    ok, words = m.fair_note or (False, "")
    assert ok and "your contribution is in" in words and COMMITMENT[:16] in words
    # The commitment changed after we contributed: the server could have chosen.
    m = TableModel("t1", seat=1, info=info())
    m.contributing("beef")
    m.apply(committed([None, "beef", None, None], commitment="0" * 64))
    assert m.fair_note is not None and not m.fair_note[0]
    assert "not the one the table showed" in m.fair_note[1]
    # Our contribution was dropped or changed.
    m = TableModel("t1", seat=1, info=info())
    m.contributing("beef")
    m.apply(committed([None, "bee", None, None]))
    assert m.fair_note is not None and not m.fair_note[0]
    assert "your contribution is not" in m.fair_note[1]
    # A spectator only learns the commitment.
    s = TableModel("t1", seat=None, info=info())
    s.apply(committed([None] * 4))
    assert s.fair_note is not None and s.fair_note[0]
    assert "your contribution" not in s.fair_note[1]


def finished_match(contributions: list[str | None]) -> tuple[Match, dict[str, Any]]:
    seed = fair.derive_seed(SECRET, SALT, contributions)
    match, _ = Match.new(Options(deals=1, first_dealer=3), seed)
    rng = random.Random(3)
    while not match.over:
        assert match.to_act is not None
        match.apply(rng.choice(match.legal_actions(match.to_act)))
    record = json.loads(json.dumps(export_record(match)))
    record["fair"] = fair.reveal(SECRET, SALT, contributions)
    return match, record


def test_r8a_at_the_end_the_client_verifies_the_record_it_was_sent() -> None:
    contributions: list[str | None] = [None, "beef", None, None]
    match, record = finished_match(contributions)
    assert match.result is not None
    over = protocol.MatchOver(points=match.points, result=match.result, record=record)
    m = TableModel("t1", seat=1, info=info())
    m.contributing("beef")
    m.apply(committed(contributions))
    m.view = view(match, 1)
    m.apply(over)
    assert m.fair_note is not None and m.fair_note[0]
    words = text(*render.event_lines(m, over))
    assert "Fair deals (R8a): every deal followed from the seed committed before" in words
    forged = copy.deepcopy(over)
    forged.record["fair"]["salt"] = "e" * 32
    m.apply(committed(contributions))
    m.view = view(match, 1)
    m.apply(forged)
    assert m.fair_note is not None and not m.fair_note[0]
    assert "do not match the commitment" in text(*render.event_lines(m, forged))


# ---------------------------------------------------------------- rematch words


def test_rematch_words() -> None:
    m = TableModel("t1", seat=0, info=info("finished"))
    m.info = info("finished", rematch=[1])
    line = text(*render.event_lines(m, protocol.RematchAccepted(seat=1)))
    assert line == "Bo wants a rematch: type `r` (or `rematch`) to play again."
    m.info = info("finished", rematch=[1, 0])
    line = text(*render.event_lines(m, protocol.RematchAccepted(seat=0)))
    assert line == "You asked for a rematch; waiting for Cy and Di."
    m.apply(committed([None] * 4, number=2))          # the app applies, then renders
    opening = text(*render.event_lines(m, committed([None] * 4, number=2)))
    assert opening.startswith("Match 2 at this table: the deals are committed (R8a) to ")


def test_the_protocol_decodes_what_the_tests_feed_the_model() -> None:
    """The events above are the wire's (a client never sees anything else)."""
    for event in (committed(["ab", None, None, None]), chat("x", None, "Sam", "5" * 16),
                  protocol.RematchAccepted(seat=2)):
        assert over_the_wire(event) == event
