"""Issue 31, Languages: the terminal client speaks from the browser's catalogues
(locales/*.json, through client_cli/i18n.py), in the language of ``--lang``, else
``ALUETTE_LANG``, else the locale (``LANGUAGE``, ``LC_ALL``, ``LC_MESSAGES``, ``LANG``), else
English; issue 28's replay and review speak it too."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from client_cli import i18n, render
from client_cli.replay import Replay, review_progress, review_summary
from protocol import TrickInfo
from server.game import Match, Options, view

from ..records.test_replay import record_of
from .test_render_words import model_at, text


@pytest.fixture
def french() -> Iterator[None]:
    i18n.set_language("fr")
    try:
        yield
    finally:
        i18n.set_language("en")


@pytest.mark.parametrize(("environ", "expected"), [
    ({}, "en"),
    ({"LANG": "fr_FR.UTF-8"}, "fr"),
    ({"LANG": "fr_CA"}, "fr"),
    ({"LANG": "C.UTF-8"}, "en"),
    ({"LANG": "de_DE.UTF-8"}, "en"),                    # no German catalogue: English
    ({"LANGUAGE": "de:fr", "LANG": "en_GB.UTF-8"}, "fr"),   # the first one we have
    ({"LC_ALL": "fr_FR.UTF-8", "LANG": "en_US.UTF-8"}, "fr"),
    ({"ALUETTE_LANG": "en", "LANG": "fr_FR.UTF-8"}, "en"),
    ({"ALUETTE_LANG": "fr"}, "fr"),
])
def test_the_language_comes_from_the_environment(environ: dict[str, str],
                                                 expected: str) -> None:
    assert i18n.from_environment(environ) == expected


def test_the_flag_wins_and_an_unknown_code_is_english() -> None:
    try:
        assert i18n.choose("fr", {"LANG": "en_US"}) == "fr"
        assert i18n.choose(None, {"LANG": "fr_FR"}) == "fr"
        assert i18n.set_language("xx") == "en"
    finally:
        i18n.set_language("en")


def mid_trick() -> str:
    """The table screen of the seat whose turn it is, one trick done and a card played."""
    match, _ = Match.new(Options(deals=1, first_dealer=3), 0)
    for _ in range(5):
        match.apply(match.legal_actions(match.to_act)[0])
    seat = match.to_act
    assert seat is not None
    model = model_at(seat)
    model.view = view(match, seat)
    model.view = msgspec.structs.replace(model.view, tricks=[
        TrickInfo(leader=t.leader, cards=t.cards, winner=t.winner) for t in model.view.tricks])
    return text(render.game_screen(model))


def test_the_table_screen_in_french(french: None) -> None:
    screen = mid_trick()
    assert "Table t1 «Friday» · donne 1 sur 1 · donneur :" in screen, screen
    assert "Levée 2 sur 9, entamée par" in screen
    assert "Dernière levée (1) :" in screen
    assert "Votre main (fortes d'abord) :" in screen
    assert "▶ À vous : tapez le code d'une carte" in screen
    assert "Points : " in screen and "votre équipe" in screen and "leur équipe" in screen
    assert "de deniers" in screen or "de coupes" in screen or "d'épées" in screen
    for english in ("Your hand", "Trick 2 of 9", "Points: ", "your team", "strength",
                    " of coins", " of cups", " of swords", " of batons"):
        assert english not in screen


def test_the_same_screen_in_english_is_unchanged() -> None:
    screen = mid_trick()
    assert "Trick 2 of 9, led by" in screen and "Your hand (strongest first):" in screen
    assert "▶ Your turn: type a card code" in screen


def test_the_replay_and_the_review_in_french(french: None) -> None:
    replay = Replay(record_of(deals=1))
    first = text(replay.render())
    assert "Donne 1 sur 1 · donneur" in first and "telle que donnée" in first, first
    assert "Les mains, visibles (la partie est finie) :" in first
    replay.command("n")
    assert "levée 1 sur 9" in text(replay.render())
    seat = render.who(replay.model, 0)
    waiting = text(review_progress({"status": "queued", "ahead": 2}, seat))
    assert "L'analyse de Ana par l'expert attend (2 avant elle)" in waiting
    running = text(review_progress({"status": "running", "done": 3, "total": 9}, seat))
    assert "L'expert analyse Ana :" in running and "3 décisions sur 9" in running
    done = text(review_summary({"share_matched": 0.5, "points_lost": 0.25, "decisions": []},
                               seat))
    assert "50 % des décisions comme l'expert les aurait prises" in done


def test_aluette_record_replay_speaks_the_flags_and_the_locales_language(
        tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps(record_of(deals=1)), encoding="utf-8")
    run = [sys.executable, "-m", "client_cli.record_cli"]
    english_env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}

    def replay(*flags: str, env: dict[str, str]) -> str:
        done = subprocess.run([*run, *flags, "replay", str(path), "--all"],
                              capture_output=True, text=True, timeout=60, check=False,
                              env=env)
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert replay("--lang", "fr", env=english_env).count("Donne 1 sur 1 · donneur") == 10
    from_locale = replay(env={**english_env, "LANG": "fr_FR.UTF-8"})
    assert "Donne 1 sur 1" in from_locale and "Deal 1 of 1" not in from_locale
    assert replay("--lang", "en", env={**english_env, "LANG": "fr_FR.UTF-8"}).count(
        "Deal 1 of 1 · dealt by") == 10
    assert "Deal 1 of 1 · dealt by" in replay(env=english_env)
    helped = subprocess.run([*run, "--help"], capture_output=True, text=True, timeout=60,
                            check=False, env={**english_env, "LANG": "fr_FR.UTF-8"})
    assert "la langue de l'interface : en, fr" in helped.stdout


def test_the_play_as_it_happens_and_the_errors_in_french(french: None) -> None:
    """The lines the terminal prints while a match is played, and the server's refusals."""
    from protocol import CardPlayed, TrickDone

    model = model_at(1)
    played = text(*render.event_lines(model, CardPlayed(seat=1, card="3o")),
                  *render.event_lines(model, CardPlayed(seat=2, card="1o")))
    assert "vous jouez 3o ◆ Monsieur" in played and "Cy joue 1o ◆ As de deniers" in played
    won = text(render.trick_result(model, TrickDone(number=1, leader=0,
                                                    cards=["9b", "3o", "1o", "4e"], winner=1)))
    assert "Levée 1 :" in won and "gagnée par vous avec 3o ◆ Monsieur" in won, won
    spoiled = text(render.trick_result(model, TrickDone(number=2, leader=0,
                                                        cards=["1o", "1c", "4b", "5e"],
                                                        winner=None)))
    assert "POURRIE (R11) : 1o et 1c à égalité en tête" in spoiled, spoiled
    assert "Ana entame à nouveau" in spoiled
    assert "Ce n'est pas votre tour" in text(render.error_text("not_your_turn"))
    assert "Vous n'avez pas 3o (Monsieur)" in text(render.error_text("card_not_in_hand",
                                                                      card="3o"))
    assert "Le serveur l'a refusé : " in text(render.error_text("new_code", "why"))


def test_a_name_that_looks_like_a_placeholder_stays_a_name() -> None:
    """One pass over the text, as the browser's: a player called "{reason}" is not filled."""
    from client_cli.i18n import tr

    assert tr("cli.deal.goes", name="{reason}", reason="why", team="T", points="1") \
        == "The deal goes to {reason}: why; T scores 1."


def test_a_placeholder_named_like_a_parameter_is_filled() -> None:
    """``tr`` and ``tr_text`` take the key (and the style) positionally: a placeholder
    called ``{code}``, ``{key}`` or ``{style}`` is the catalogue's, not theirs."""
    from client_cli.i18n import tr, tr_text

    assert tr("meta.private.code", code="AB12", key="k") == "private, join code AB12"
    line = tr_text("meta.private.code", "bold", code="AB12", key="k", style="s")
    assert line.plain == "private, join code AB12" and line.style == "bold"


def test_the_deal_result_in_french(french: None) -> None:
    from .test_render_words import scored

    event, tricks = scored([0, 1, 0, 1, 2, 3, 2, 2, 2])      # R12: Cy, four tricks
    model = model_at(0)
    said = text(render.deal_result(model, event, [t.winner for t in tricks]))
    assert "La donne 1 est finie. Levées gagnées :" in said, said
    assert "La donne va à votre partenaire Cy : le plus de levées, 4 (R12)" in said
    assert "votre équipe" in said and "marque 1 point." in said
    assert "Score de la partie :" in said


def test_the_lobby_in_french(french: None) -> None:
    from protocol.results import SeatRef

    from .test_render_words import info

    table = msgspec.structs.replace(info(status="waiting"), private=True, spectators=2)
    said = text(render.tables_table([table], [SeatRef(table="t1", seat=1)]))
    assert "Tables :" in said and "en attente" in said, said
    assert "5 donnes" in said and "signes private" in said and "privée" in said
    assert "2 spectateur(s)" in said and "(vous : place 1)" in said and "places :" in said
    assert "No tables" not in text(render.tables_table([], []))
    assert "Aucune table à rejoindre" in text(render.tables_table([], []))


def test_how_many_contributed_agrees_with_its_number(french: None) -> None:
    """R8a's count of contributions takes French's singular for one seat (it said
    "1 places sur 4 ont contribué")."""
    assert i18n.contributed(1) == "1 place sur 4 a contribué à la graine"
    assert i18n.contributed(3) == "3 places sur 4 ont contribué à la graine"
    i18n.set_language("en")
    assert i18n.contributed(1) == "1 of 4 seats contributed to the seed"
    assert i18n.contributed(2) == "2 of 4 seats contributed to the seed"


def test_a_turn_the_timer_played_in_french(french: None) -> None:
    from protocol import TurnTimedOut

    model = model_at(0)
    assert text(*render.event_lines(model, TurnTimedOut(seat=1))).strip() \
        == "Le temps de Bo est écoulé : un robot a joué pour lui."
    assert text(*render.event_lines(model, TurnTimedOut(seat=0))).strip() \
        == "Votre temps est écoulé : un robot a joué pour vous."


def test_signals_in_french(french: None) -> None:
    from protocol import SignalReceived

    model = model_at(0)
    said = text(*render.event_lines(model, SignalReceived(from_seat=2, signal="aces", n=2)),
                *render.event_lines(model, SignalReceived(from_seat=1, signal="monsieur")))
    assert "Signe (R15) de votre partenaire Cy" in said, said
    assert "(vous avez remarqué un signe destiné à son partenaire, R16)" in said
    assert "I hold" not in said


def test_the_help_pages_english_is_the_codes_and_french_is_there(french: None) -> None:
    """The English help pages in render.py are the source: the catalogue's copy must not
    drift from them; the French ones are shown in French."""
    import locales

    for name, page in (("main", render.HELP), ("create", render.HELP_CREATE),
                       ("rules", render.HELP_RULES), ("mordienne", render.HELP_MORDIENNE),
                       ("chanter", render.HELP_CHANTER),
                       ("signals", render.HELP_SIGNALS_INTRO)):
        assert locales.text("en", f"cli.help.{name}") == page, name
        assert render.help_text(name) != page, name
    assert render.help_text("main").startswith("Salon\n  tables [all]")
    assert "replay [PARTIE]" in render.help_text("main")


def test_the_tables_notes_in_french(french: None) -> None:
    """Issue 31: the rematch, seat-change, chat, partner draw (R7) and grace-period notes
    come from the catalogues too."""
    from protocol import (
        ChatHistory,
        ChatMessage,
        PartnerDraw,
        PlayerDisconnected,
        RematchAccepted,
        SeatInfo,
        TableChanged,
    )

    model = model_at(0, status="finished")
    model.info = msgspec.structs.replace(model.info, rematch=[1])
    asks = text(*render.event_lines(model, RematchAccepted(seat=1)))
    assert asks == "Bo : revanche demandée ; tapez `r` (ou `rematch`) pour rejouer.\n", asks
    model.info = msgspec.structs.replace(model.info, rematch=[1, 0])
    mine = text(*render.event_lines(model, RematchAccepted(seat=0)))
    assert mine == "Vous avez demandé une revanche ; on attend Cy et Di.\n", mine

    playing = model_at(0)
    gone = text(*render.event_lines(playing, PlayerDisconnected(seat=1)))
    assert gone.startswith("Bo : connexion perdue ; sans retour d'ici 1 minute 30 secondes, "
                           "un robot joue à sa place"), gone
    before = playing.info
    after = msgspec.structs.replace(before, seats=[
        *before.seats[:3], SeatInfo(kind="bot", name="expert bot", level="expert")])
    changed = text(*render.event_lines(playing, TableChanged(table=after), before))
    assert "Di a quitté la table ; un robot expert joue à sa place." in changed, changed

    drawn = model_at(0, status="waiting")
    draw = PartnerDraw(cards=[(0, "Re"), (1, "3o"), (2, "9b"), (3, "1c")],
                       seating=[0, 2, 1, 3], dealer=1)
    drawn.apply(draw)
    words = text(*render.event_lines(drawn, draw))
    assert words.startswith("Tirage des partenaires (R7) : vous Re"), words
    assert "Votre partenaire : Bo ; vous êtes maintenant à la place 0." in words

    history = ChatHistory(sender="5" * 16, lines=[
        ChatMessage(from_seat=2, name="Cy", text="salut", sender="d" * 16)], muted=["e" * 16])
    chatty = model_at(0)
    chatty.apply(history)
    said = text(*render.event_lines(chatty, history), render.chat_history(chatty))
    assert "1 message plus ancien à cette table : `chat` le montre." in said, said
    assert "Vous masquez 1 personne à cette table" in said
    assert "Discussion de la table t1 (les 1 derniers messages) :" in said
    from protocol import DealsCommitted

    committed = DealsCommitted(match=2, commitment="c" * 64, contributions=[None] * 4)
    chatty.apply(committed)
    fair = text(*render.event_lines(chatty, committed))
    assert fair.startswith(f"Partie 2 à cette table : les donnes sont engagées (R8a) sur "
                           f"{'c' * 64} ; aucun joueur"), fair
    waiting = text(render.game_screen(model_at(1, status="waiting")))
    assert "· en attente du début" in waiting, waiting
    assert "  place 1 (votre équipe) : Bo (vous)" in waiting
    assert "  place 2 (leur équipe) : Cy" in waiting
    for english in ("rematch too", "lost the connection", "Partner draw", "earlier chat",
                    "You mute", "Chat at table", "left the table", "Match 2", "waiting for",
                    "seat 1", "(you)"):
        assert english not in asks + mine + gone + changed + words + said + fair + waiting


def test_aluette_record_verify_and_show_in_french(tmp_path: Path) -> None:
    """`aluette-record verify` and `show` (R17, R8a) speak the chosen language."""
    path = tmp_path / "m.json"
    path.write_text(json.dumps(record_of(deals=1)), encoding="utf-8")
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}

    def run(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "client_cli.record_cli", *args],
                              capture_output=True, text=True, timeout=60, check=False, env=env)
        assert done.returncode == 0, done.stderr
        return done.stdout

    verified = run("--lang", "fr", "verify", str(path))
    assert verified.startswith(f"{path} : OK\n  donne 1 : donneur "), verified
    assert "donnes prouvées équitables : elles découlent de la graine révélée" in verified
    assert "  partie : équipe 0 " in verified and "gagne" in verified
    for english in ("deal 1:", "dealer", "spoiled", "proven fair", "match:", "wins"):
        assert english not in verified, english
    shown = run("--lang", "fr", "show", str(path))
    assert shown.startswith("Donne 1, donnée par place ") and "  levée 1, entamée par" in shown
    assert "Partie : équipe 0 " in shown and "Deal 1" not in shown and " of " not in shown
    english = run("verify", str(path))
    assert "  deal 1: dealer " in english and "deals proven fair" in english
