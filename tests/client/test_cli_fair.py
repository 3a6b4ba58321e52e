"""Issue 15 as a person meets it in the terminal client (a real ``aluette`` in a pty, a
real server subprocess): chat lines set apart, spectators' words never shown to a seat,
the deals' commitment checked at the start and proven at the end (R8a), and a rematch in
one keystroke."""

from __future__ import annotations

import re

from .conftest import ServerProcess, plain
from .test_cli_game import open_table


def words(text: str) -> str:
    """``text`` as a pattern that lets the terminal wrap its lines between words."""
    return r"\s+".join(re.escape(w) for w in text.split(" "))


def committed(match: int, then: str) -> str:
    """The start's R8a line: the full commitment (issue 31, item 6), then ``then``."""
    return (words(f"Match {match} at this table: the deals are committed (R8a) to") + r"\s+"
            + "[0-9a-f]{64}" + words(f"; {then}"))


def test_chat_fair_deals_and_a_rematch_in_one_keystroke(server_proc: ServerProcess,
                                                        spawn) -> None:
    ana = spawn("--server", server_proc.url, "--name", "Ana")
    table = open_table(ana)
    bo = spawn("--server", server_proc.url, "--name", "Bo")
    bo.expect("Type `help`")
    bo.send(f"watch {table}")
    bo.expect("You are watching table")
    bo.send("say Ana holds Monsieur")                  # a spectator: to spectators only
    bo.expect(re.escape("[chat] Bo (watching): Ana holds Monsieur"))
    ana.send("'good luck everyone")                    # a seat: to everyone
    ana.expect(re.escape("[chat] you: good luck everyone"))
    bo.expect(re.escape("[chat] Ana: good luck everyone"))
    ana.send("start")
    ana.expect(committed(1, "1 of 4 seats contributed to the seed; your contribution is in."))
    for _ in range(9):
        hand = ana.wait_turn()
        ana.send(hand[-1])
        ana.expect(re.escape(f"you play {hand[-1]}"))
    ana.expect(words("Fair deals (R8a): every deal followed from the seed committed before "
                     "the first card (") + "[0-9a-f]{64}" + words("); 1 of 4 seats contributed"))
    ana.expect(re.escape("Type `r` to play again"))
    bo.expect(re.escape("Fair deals (R8a): every deal followed from the seed committed"))
    ana.send("chat")                                   # the chat alone, apart from the game
    ana.expect(re.escape(f"Chat at table {table}"))
    ana.expect(re.escape("[chat] you: good luck everyone"))
    ana.send("r")                                      # the rematch: bots always agree
    ana.expect(committed(2, "1 of 4 seats contributed to the seed; your contribution is in."))
    ana.expect("The match starts!")
    ana.wait_turn()
    bo.expect(committed(2, "1 of 4 seats contributed to the seed."))
    assert "Ana holds Monsieur" not in plain(ana.output)
    assert "⚠" not in plain(ana.output) and "⚠" not in plain(bo.output)
    ana.quit()
    bo.quit()


def test_a_restarted_client_reads_the_chat_so_far_and_can_unmute(server_proc: ServerProcess,
                                                                  spawn) -> None:
    """Protocol 1.4: a client that comes back (a new process, the remembered session) gets
    the table's chat so far, learns whom it mutes there (their lines are left out, so it
    has no name to unmute them by) and `unmute all` brings them back."""
    bo = spawn("--server", server_proc.url, "--name", "Bo")
    bo.expect("Type `help`")
    bo.send("create deals=1 delay=0")
    table = bo.expect(r"Created table (t[0-9a-f]+)").group(1)
    ana = spawn("--server", server_proc.url, "--name", "Ana")
    ana.expect("Type `help`")
    ana.send(f"join {table} 1")
    ana.expect("You sit at seat 1")
    bo.send("'welcome Ana")
    ana.expect(re.escape("[chat] Bo: welcome Ana"))
    ana.send("'thanks, ready when you are")
    bo.expect(re.escape("[chat] Ana: thanks, ready when you are"))
    bo.send("mute Ana")
    bo.expect(re.escape("You will no longer see Ana's chat at this table"))
    bo.quit()
    back = spawn("--server", server_proc.url, "--name", "Bo")
    back.expect(r"1 earlier chat line at this table: `chat` shows them\.")
    back.expect(re.escape("You mute 1 person at this table (`unmute all` to see their chat "
                          "again)."))
    back.send("chat")
    back.expect(re.escape("[chat] you: welcome Ana"))
    back.send("unmute all")
    back.expect(re.escape("You will see everyone's chat at this table again."))
    ana.send("'welcome back")
    back.expect(re.escape("[chat] Ana: welcome back"))
    assert "thanks, ready" not in plain(back.output)
    back.quit()
    ana.quit()
