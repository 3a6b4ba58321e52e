"""A newcomer's first hour (issue 14): the real client in a pty against a real server.

Each test is one thing that got in a new player's way: a short table id typed before any
listing, `create` or a failed `join` in the middle of a match, Ctrl-C during a match, the
chanter prompts, dropped players, names, finished tables, two clients with one name, and a
small terminal.
"""

from __future__ import annotations

import re

import pexpect

from .conftest import TURN, Cli, ServerProcess, plain

CREATED = re.compile(r"Created table (t[0-9a-f]+)")


def start_match(cli: Cli, options: str = "deals=1 delay=0") -> tuple[str, list[str]]:
    """Create a table, fill it with random bots, start it; return (table, first hand)."""
    cli.expect("Type `help`")
    cli.send(f"create {options}")
    table = str(cli.expect(CREATED).group(1))
    cli.send("bots random")
    cli.expect("Seat 3: a random bot sits down")
    cli.send("start")
    cli.expect("The match starts!")
    return table, cli.wait_turn()


def play_to_the_end(cli: Cli) -> None:
    while cli.expect_any([re.escape(TURN), r"Match over: "]) == 0:
        cli.send("1")


# --------------------------------------------------------------------------- item 1


def test_a_short_table_id_works_before_any_listing(server_proc: ServerProcess, spawn) -> None:
    bo = spawn("--server", server_proc.url, "--name", "Bo")
    bo.expect("Type `help`")                    # the lobby is empty: nothing known yet
    ana = spawn("--server", server_proc.url, "--name", "Ana")
    ana.expect("Type `help`")
    ana.send("create deals=1 delay=0 name=First")
    first = str(ana.expect(CREATED).group(1))
    bo.send(f"join {first[:5]} 1")              # never listed by Bo's client
    bo.expect(re.escape(f"You sit at seat 1 of table {first}"))
    cy = spawn("--server", server_proc.url, "--name", "Cy")
    cy.expect("Type `help`")
    cy.send("create deals=1 delay=0 name=Second")
    second = str(cy.expect(CREATED).group(1))
    bo.send(f"watch {second[:6]}")
    bo.expect(re.escape(f"You are watching table {second}"))
    # Every id starts with t: an ambiguous start lists the candidates.
    ana.send("watch t")
    ana.expect("“t” matches several tables")
    ana.expect("Type more of the id")
    listing = plain(ana.output)
    listing = listing[listing.index("matches several tables"):]
    assert first in listing and second in listing
    # A private table is listed only to its players, but with its code its short id works
    # as a public one's does (issue 31, item 7: the server resolves it, protocol 1.5);
    # without the code it stays unknown.
    ana.send("create private")
    private = str(ana.expect(CREATED).group(1))
    code = ana.expect(r"join t[0-9a-f]+ ([A-Z0-9]+)`").group(1)
    bo.send(f"watch {private[:6]}")
    bo.expect("There is no such table")
    cy.send(f"join {private[:6]} 1 {code}")
    cy.expect(re.escape(f"You sit at seat 1 of table {private}"))
    # A browser's invitation link works in `join` and `watch` too (item 7).
    dee = spawn("--server", server_proc.url, "--name", "Dee")
    dee.expect("Type `help`")
    dee.send(f"watch http://127.0.0.1:8765/t/{private}#code={code}")
    dee.expect(re.escape(f"You are watching table {private}"))
    for cli in (ana, bo, cy, dee):
        cli.quit()


# --------------------------------------------------------------------------- item 2


def test_create_during_a_live_match_asks_first(server_proc: ServerProcess, spawn) -> None:
    ana = spawn("--server", server_proc.url, "--name", "Ana")
    table, hand = start_match(ana)
    ana.send("create deals=1")
    ana.expect(re.escape(f"You are playing at table {table}"))
    ana.expect(r"Go on\? \(yes/no\)")
    ana.send("no")
    ana.expect(re.escape(f"Nothing changed: you are still at table {table}"))
    ana.send("show")
    assert ana.wait_turn() == hand
    ana.send("create deals=1")
    ana.expect(r"Go on\? \(yes/no\)")
    ana.send("yes")
    new = str(ana.expect(CREATED).group(1))
    assert new != table
    ana.expect(re.escape(f"Your seat at {table} stays yours: `table {table}` takes you back"))
    ana.send(f"table {table}")
    assert ana.wait_turn() == hand
    ana.send("1")
    ana.expect(re.escape(f"you play {hand[0]}"))
    ana.quit()


def test_a_failed_join_keeps_you_at_your_match(server_proc: ServerProcess, spawn) -> None:
    bo = spawn("--server", server_proc.url, "--name", "Bo")
    bo.expect("Type `help`")
    bo.send("create private")
    private = str(bo.expect(CREATED).group(1))
    ana = spawn("--server", server_proc.url, "--name", "Ana")
    table, hand = start_match(ana)
    ana.send(f"join {private}")                 # no code: the server refuses
    ana.expect(re.escape(f"You are playing at table {table}"))
    ana.expect(r"Go on\? \(yes/no\)")
    ana.send("y")
    ana.expect("That table is private")
    ana.expect(re.escape(f"You are still at table {table}"))
    ana.send("show")
    assert ana.wait_turn() == hand              # the match is still the current table
    ana.send("1")
    ana.expect(re.escape(f"you play {hand[0]}"))
    ana.quit()
    bo.quit()


# --------------------------------------------------------------------------- item 4


def test_chanter_prompts_take_what_they_suggest(server_proc: ServerProcess, spawn) -> None:
    """R9 with four people: bare yes/no at the vote prompt, bare positions at the discard."""
    names = ("Ana", "Bo", "Cy", "Di")
    clis = [spawn("--server", server_proc.url, "--name", n) for n in names]
    ana = clis[0]
    ana.expect("Type `help`")
    # dealer=3: seat 0 votes first and, with seat 3, takes half the talon (R9).
    ana.send("create deals=1 delay=0 chanter=on dealer=3")
    table = str(ana.expect(CREATED).group(1))
    for seat, cli in enumerate(clis[1:], start=1):
        cli.expect("Type `help`")
        cli.send(f"join {table} {seat}")
        cli.expect(f"You sit at seat {seat}")
    ana.send("start")
    for cli, answer in zip(clis, ("yes", "y", "yes", "YES"), strict=True):
        cli.expect(r"Your vote: do you want to chanter \(R9\)")
        cli.send(answer)
        cli.expect("you want to chanter")
    ana.expect("Everyone agreed to chanter")
    ana.expect(r"Discard six cards \(R9\)")
    ana.send("10 11 12 13 14 15")               # what the hint suggests, without `discard`
    ana.expect("you discarded six cards face down")
    di = clis[3]
    di.expect(r"Discard six cards \(R9\)")
    di.send("1 2 3 4 5 6")
    di.expect("you discarded six cards face down")
    hand = ana.wait_turn()
    assert len(hand) == 9
    for cli in clis:
        cli.quit()


# --------------------------------------------------------------------------- item 7


def test_ctrl_c_in_a_match_asks_to_confirm(server_proc: ServerProcess, spawn) -> None:
    ana = spawn("--server", server_proc.url, "--name", "Ana")
    table, hand = start_match(ana)
    ana.child.sendintr()
    ana.expect(re.escape(f"You are playing at table {table}: press Ctrl-C again or type "
                         "`quit` to leave"))
    ana.expect("`aluette` remembers this session")
    ana.send("1")                              # still playing; a command disarms the Ctrl-C
    ana.expect(re.escape(f"you play {hand[0]}"))
    ana.child.sendintr()
    ana.expect("press Ctrl-C again")
    ana.child.sendintr()                       # the second Ctrl-C confirms
    ana.child.expect(pexpect.EOF, timeout=10)
    ana.child.wait()
    assert ana.child.exitstatus == 0

    again = spawn("--server", server_proc.url, "--name", "Ana")
    again.expect(re.escape(f"Took back your seat at {table}"))
    again.child.sendintr()
    again.expect("press Ctrl-C again")
    again.send("quit")                         # `quit` confirms too
    again.child.expect(pexpect.EOF, timeout=10)


def test_ctrl_c_in_the_lobby_quits_at_once(server_proc: ServerProcess, spawn) -> None:
    ana = spawn("--server", server_proc.url, "--name", "Ana")
    ana.expect("Type `help`")
    ana.child.sendintr()
    ana.child.expect(pexpect.EOF, timeout=10)


# --------------------------------------------------------------------------- item 8


def test_dropped_player_grace_takeover_and_return(server_proc: ServerProcess, spawn) -> None:
    ana = spawn("--server", server_proc.url, "--name", "Ana")
    ana.expect("Type `help`")
    ana.send("create deals=1 delay=0 grace=1")
    table = str(ana.expect(CREATED).group(1))
    bo = spawn("--server", server_proc.url, "--name", "Bo")
    bo.expect("Type `help`")
    bo.send(f"join {table} 1")
    bo.expect("You sit at seat 1")
    ana.send("bots random")
    ana.expect("Seat 3: a random bot sits down")
    ana.send("start")
    ana.expect("The match starts!")
    bo.expect("The match starts!")
    bo.child.terminate(force=True)             # Bo's terminal dies
    ana.expect(r"Bo lost the connection: if they are not back within 1 second, a bot "
               r"plays for them")
    ana.expect("A bot now plays for Bo")
    bo_again = spawn("--server", server_proc.url, "--name", "Bo")
    bo_again.expect(re.escape(f"Took back your seat at {table}"))
    ana.expect("Bo is back")
    bo_again.quit()
    ana.quit()


# --------------------------------------------------------------------------- item 9


def test_an_empty_name_is_asked_for(server_proc: ServerProcess, spawn) -> None:
    cli = spawn("--server", server_proc.url, "--name", "")
    cli.expect("What name do you want at the table")
    cli.send("Zoé")
    cli.expect(r"as Zoé\.")
    cli.quit()


def test_a_long_name_says_it_was_shortened(server_proc: ServerProcess, spawn) -> None:
    cli = spawn("--server", server_proc.url, "--name", "N" * 500)
    cli.expect("Your name is longer than 32 characters: it is shortened to " + "N" * 32)
    cli.expect("Type `help`")
    cli.quit()


def test_no_name_says_which_is_used(server_proc: ServerProcess, spawn) -> None:
    cli = spawn("--server", server_proc.url)
    cli.expect(r"your login name; `--name NAME` picks another")
    cli.quit()


# --------------------------------------------------------------------------- item 10


def test_finished_tables_are_not_taken_back_and_hidden(server_proc: ServerProcess,
                                                       spawn) -> None:
    ana = spawn("--server", server_proc.url, "--name", "Ana")
    table, _ = start_match(ana)
    ana.send("1")
    play_to_the_end(ana)
    ana.quit()
    again = spawn("--server", server_proc.url, "--name", "Ana")
    again.expect("Type `help`")
    again.send("tables")
    again.expect("1 finished table hidden: `tables all` shows it")
    assert "Took back" not in plain(again.output)
    again.send("tables all")
    again.expect(re.escape(table))
    again.quit()


# --------------------------------------------------------------------------- item 11


def test_a_second_client_with_the_same_name_starts_its_own_session(
        server_proc: ServerProcess, spawn) -> None:
    first = spawn("--server", server_proc.url, "--name", "Ana")
    table, hand = start_match(first)
    second = spawn("--server", server_proc.url, "--name", "Ana")
    second.expect("Another aluette on this machine is using the session remembered for Ana")
    second.expect("--new-session")
    second.expect("Type `help`")
    second.send("tables")
    second.expect(re.escape(table))
    first.send("show")                         # the first client is still connected
    assert first.wait_turn() == hand
    first.send("1")
    first.expect(re.escape(f"you play {hand[0]}"))
    assert "opened from somewhere else" not in plain(first.output)
    second.quit()
    # The remembered session is still the first client's: a restart takes its seat back.
    first.child.terminate(force=True)
    third = spawn("--server", server_proc.url, "--name", "Ana")
    third.expect(re.escape(f"Took back your seat at {table}"))
    third.quit()


# --------------------------------------------------------------------------- item 12


def test_a_small_terminal_keeps_the_essentials_together(server_proc: ServerProcess,
                                                         spawn) -> None:
    ana = spawn("--server", server_proc.url, "--name", "Ana", size=(20, 60))
    ana.expect("Type `help`")
    ana.send("create deals=1 delay=0")
    ana.expect(CREATED)
    ana.send("bots random")
    ana.expect("Seat 3: a random bot sits down")
    ana.send("start")
    ana.expect(re.escape(TURN))
    screen = plain(ana.child.before)
    screen = screen[screen.rindex("Table t"):] + TURN
    lines = [line for line in screen.replace("\r", "").split("\n") if line.strip()]
    # The whole screen (header, tricks, the trick, the hand, whose turn) fits in 20 rows.
    assert len(lines) <= 12, screen
    assert all(len(line) <= 60 for line in lines), screen
    assert "Trick 1 of 9" in screen and "Hand:" in screen
    ana.quit()
