"""The real terminal client in a pty against a real server subprocess (issue 7).

One human and three bots (no bot delay, one deal) play a whole deal by typing card codes and
hand positions; bad input gets a sentence and the prompt stays; a second client watches.
"""

from __future__ import annotations

import json
import re

from server.game.record import verify_record

from .conftest import TURN, Cli, ServerProcess, plain

TURN_RE = re.escape(TURN)

CREATED = re.compile(r"Created table (t[0-9a-f]+)")


def open_table(cli: Cli, options: str = "deals=1 delay=0") -> str:
    cli.expect("Type `help`")
    cli.send(f"create {options}")
    table = cli.expect(CREATED).group(1)
    cli.send("bots random")
    cli.expect("Seat 3: a random bot sits down")
    return str(table)


def test_play_a_whole_deal_by_codes_and_positions(server_proc: ServerProcess, spawn) -> None:
    ana = spawn("--server", server_proc.url, "--name", "Ana")
    open_table(ana)
    ana.send("start")
    ana.expect("The match starts!")
    # R8: the deal is announced with its dealer; R10: the seat left of the dealer leads.
    ana.expect(r"Deal 1 of 1 · dealer: .* · first lead: ")
    for turn in range(9):
        hand = ana.wait_turn()
        assert len(hand) == 9 - turn
        if turn == 0:
            # Bad input: not a card, then a card we do not hold; the prompt stays.
            ana.send("zz")
            ana.expect("“zz” is not a card")
            ana.send("frobnicate now")
            ana.expect("Unknown command")
            missing = next(c for c in ("3o", "3c", "2o", "1e", "4b") if c not in hand)
            ana.send(missing)
            ana.expect(f"You do not hold {missing}")
            ana.send("12")
            ana.expect("There is no card number 12")
        if turn % 2 == 0:
            card = hand[-1]
            ana.send(card)                      # by code (R2)
        else:
            card = hand[0]
            ana.send("1")                       # by position: 1 is the strongest (R3)
        ana.expect(re.escape(f"you play {card}"))
        ana.expect(rf"Trick {turn + 1}: .*(won by|SPOILED \(R11\))")
    ana.expect(r"Deal 1 is over\. Tricks won: ")
    ana.expect(r"(The deal goes to .* scores \d points?|All nine tricks were spoiled)")
    ana.expect(r"Match over: ")
    out = plain(ana.output)
    # R12/R13: the deal result names the winner and says whether it was a mordienne.
    deal = out[out.index("Deal 1 is over"):]
    assert "MORDIENNE" in deal or "(R12)" in deal
    ana.send("help strength")
    ana.expect(r"Strength of the cards \(R3\)")
    ana.expect("Monsieur")
    ana.quit()


def test_a_spectator_sees_the_cards_played(server_proc: ServerProcess, spawn) -> None:
    ana = spawn("--server", server_proc.url, "--name", "Ana")
    table = open_table(ana, "deals=1 delay=0 name=Watched")
    ana.send("start")
    hand = ana.wait_turn()
    bo = spawn("--server", server_proc.url, "--name", "Bo")
    bo.expect("Type `help`")
    bo.expect("Watched")                       # the lobby lists the table
    bo.send(f"watch {table[:6]}")              # a unique start of the id is enough
    bo.expect("you are watching")              # the snapshot's screen
    bo.expect("Waiting for Ana to play")
    if "You are watching table" not in plain(bo.output):   # the ok's line, in either order
        bo.expect("You are watching table")
    ana.send(hand[0])
    bo.expect(re.escape(f"Ana plays {hand[0]}"))
    bo.expect(rf"Trick 1: .*Ana {hand[0]} .* — (won by|SPOILED)")
    # Spectators cannot play and never see a hand (R16).
    bo.send("3o")
    bo.expect("spectators cannot play")
    assert "Your hand" not in plain(bo.output)
    bo.quit()
    ana.quit()


def test_join_a_seat_and_bad_table(server_proc: ServerProcess, spawn) -> None:
    ana = spawn("--server", server_proc.url, "--name", "Ana")
    ana.expect("Type `help`")
    ana.send("create deals=1 delay=0 private")
    table = ana.expect(CREATED).group(1)
    code = ana.expect(r"join t[0-9a-f]+ ([A-Z0-9]+)`").group(1)
    bo = spawn("--server", server_proc.url, "--name", "Bo")
    bo.expect("Type `help`")
    bo.send("join tnosuchtable")
    bo.expect("There is no such table")
    bo.send(f"join {table} 2")
    bo.expect("That table is private: it needs the right join code")
    bo.send(f"join {table} 2 {code}")
    bo.expect("You sit at seat 2")
    ana.expect("Seat 2: Bo sits down")
    bo.send("start")
    bo.expect("Only the player who created the table can do that")
    ana.send("start")                 # the empty seats are filled with bots
    ana.expect("The match starts!")
    bo.expect("The match starts!")
    ana.send("quit")
    bo.quit()


def test_aluette_play_starts_a_local_game(spawn, tmp_path) -> None:
    """`aluette play`: an in-process server (embedded store), three bots, and you."""
    cli = spawn("play", "--name", "Ana", "--deals", "1", "--delay", "0", "--level", "random",
                "--data-dir", str(tmp_path / "data"))
    cli.expect("Starting a local server")
    cli.expect("Created table", timeout=60)
    cli.expect("The match starts!")
    hand = cli.wait_turn()
    cli.send("2")
    cli.expect(re.escape(f"you play {hand[1]}"))
    cli.expect(r"Trick 1: ")
    cli.send("help signals")
    cli.expect(r"going_mordienne")
    cli.quit()


def test_signals_chanter_and_record(server_proc: ServerProcess, spawn, tmp_path) -> None:
    """R15 signals both ways, R9 chanter vote (and discard when the talon comes to us),
    and the R17 record saved after the match."""
    ana = spawn("--server", server_proc.url, "--name", "Ana")
    ana.expect("Type `help`")
    # dealer=3: seat 0 is left of the dealer, votes first and takes half the talon (R9).
    ana.send("create deals=1 delay=0 chanter=on dealer=3 signals=private")
    ana.expect(r"Created table (t[0-9a-f]+)")
    ana.send("bot 2 normal")                 # our partner: normal bots signal truthfully
    ana.expect("Seat 2: a normal bot sits down")
    ana.send("bots normal")
    ana.expect("Seat 3: a normal bot sits down")
    ana.send("start")
    ana.expect(r"Your vote: do you want to chanter \(R9\)")
    ana.send("3o")
    ana.expect("First the chanter vote")
    ana.send("chanter maybe")
    ana.expect("Type `chanter yes` or `chanter no`")
    ana.send("chanter yes")
    ana.expect("you want to chanter")
    accepted = ana.expect(r"(Everyone agreed to chanter|No chanter this deal)").group(1)
    if accepted.startswith("Everyone"):
        ana.expect("You take from the talon: ")
        ana.expect(r"Discard six cards \(R9\)")
        ana.send("discard 1 2 3")
        ana.expect("Discard exactly six cards")
        ana.send("discard 10 11 12 13 14 15")
        ana.expect("you discarded six cards face down")
    ana.expect(r"Signal \(R15\) from your partner Soizic: ")
    ana.send("signal aces")
    ana.expect("Say how many aces you hold")
    ana.send("signal grimace")
    ana.expect("is not a signal")
    ana.send("signal")
    ana.expect("going_mordienne")
    ana.send("signal useless_hand")
    ana.expect("Signal sent to your partner")
    ana.send("show")                          # the table again, with whose turn it is
    while True:
        index = ana.expect_any([TURN_RE, r"Match over: "])
        if index == 1:
            break
        ana.send("1")
    path = tmp_path / "match.json"
    ana.send(f"record {path}")
    ana.expect("written to")
    record = json.loads(path.read_text(encoding="utf-8"))
    assert verify_record(record)["points"] is not None
    ana.quit()
