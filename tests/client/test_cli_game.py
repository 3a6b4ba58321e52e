"""The real terminal client in a pty against a real server subprocess (issue 7).

One human and three bots (no bot delay, one deal) play a whole deal by typing card codes and
hand positions; bad input gets a sentence and the prompt stays; a second client watches.
"""

from __future__ import annotations

import re

from .conftest import Cli, ServerProcess, plain

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
        ana.expect(re.escape(f"you (seat 0) play {card}"))
        ana.expect(rf"Trick {turn + 1}: .*(won by|SPOILED \(R11\))")
    ana.expect(r"Deal 1 is over\. Tricks won: ")
    ana.expect(r"(The deal goes to .* scores \d points?|All nine tricks were spoiled)")
    ana.expect(r"Match over: \d to \d\. ")
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
    bo.expect("you are watching")              # the snapshot's screen (before the ok)
    bo.expect("Waiting for Ana \\(seat 0\\) to play")
    bo.expect("You are watching table")
    ana.send(hand[0])
    bo.expect(re.escape(f"Ana (seat 0) plays {hand[0]}"))
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
    ana.send("start")
    ana.expect("The table cannot start: fill all four seats")
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
    cli.expect(re.escape(f"you (seat 0) play {hand[1]}"))
    cli.expect(r"Trick 1: ")
    cli.send("help signals")
    cli.expect(r"going_mordienne")
    cli.quit()
