"""Writes transcripts/10_lobby.json, 11_game.json, 12_chat_fair.json, 13_bot_client.json and 17_players.json (the long ones,
with their many per-viewer sequence numbers): `python tests/conformance/write_transcripts.py`,
then review the diff like any protocol change. The other transcripts are written by hand."""

from __future__ import annotations

import json
from pathlib import Path

OUT = Path(__file__).parent / "transcripts"

def hello(who, name, cid=1, token=None, session="*", pid="*"):
    send = {"type": "hello", "id": cid, "versions": [1], "name": name}
    if token:
        send["token"] = token
    return [{"as": who, "connect": True}, {"as": who, "send": send},
            {"as": who, "recv": {"type": "welcome", "id": cid, "version": 1, "session": session,
                                 "player_id": pid, "name": name}}]

def ok(who, cid, result):
    return {"as": who, "recv": {"type": "ok", "id": cid, "result": result}}

def err(who, cid, code, details=None, message="*"):
    return {"as": who, "recv": {"type": "error", "id": cid, "code": code, "message": message,
                                "details": details}}

def ev(who, table, seq, event):
    return {"as": who, "recv": {"type": "event", "table": table, "seq": seq, "event": event}}

def send(who, frame):
    return {"as": who, "send": frame}

def silent(*who):
    return [{"as": w, "silent": True} for w in who]

TC = {"type": "table_changed", "table": "*"}
EMPTY = {"kind": "empty", "name": None, "level": None, "connected": False,
         "grace_until": None, "bot_votes": [], "bot": False}

# ---------------------------------------------------------------- lobby
opts = {"deals": 1, "first_dealer": 3, "bot_delay_ms": 10000, "signals": "off"}
full_opts = {"deals": 1, "target_points": None, "mordienne": True, "chanter": False,
             "partner_draw": False, "first_dealer": 3, "signals": "off", "signal_risk": 0.25,
             "auto_start": False, "bot_delay_ms": 10000, "turn_timer_s": None, "grace_s": 120,
             "bot_level": "normal", "bot_budget": 1.0, "hints": False, "rated": False}
info = {"table": "$t", "name": "Friday", "options": full_opts, "private": False,
        "seats": [{"kind": "human", "name": "Ana", "level": None, "connected": True,
                   "grace_until": None, "bot_votes": [], "bot": False},
                  EMPTY, EMPTY, EMPTY],
        "status": "waiting", "spectators": 0, "creator": 0, "match": 0,
        "next_commitment": "$c1", "rematch": []}
s = []
s += hello("A", "Ana", session="$tokenA")
s += [send("A", {"type": "create_table", "id": 2, "options": opts, "private": False, "name": "Friday"}),
      ok("A", 2, {"table": "$t", "seat": 0, "code": None}),
      ev("A", "$t", 1, {"type": "table_changed", "table": info})]
s += hello("B", "Bo")
s += [send("B", {"type": "list_tables", "id": 2}),
      ok("B", 2, {"tables": [info], "seats": [], "next": None, "watching": []}),
      send("B", {"type": "join", "id": 3, "table": "$t", "seat": 0}),
      err("B", 3, "seat_taken", {"seat": 0}, "seat 0 is taken"),
      send("B", {"type": "join", "id": 4, "table": "$t", "seat": 1, "contribution": "b0b0"}),
      ok("B", 4, {"table": "$t", "seat": 1}),
      ev("B", "$t", 2, TC), ev("A", "$t", 2, TC),
      send("B", {"type": "start", "id": 5, "table": "$t"}),
      err("B", 5, "not_creator", None, "only the table's creator can start it")]
s += hello("C", "Cy")
s += [send("C", {"type": "leave", "id": 2, "table": "$t"}),
      err("C", 2, "not_at_table", None, "you are not at this table"),
      send("C", {"type": "spectate", "id": 3, "table": "$t"}),
      ok("C", 3, {"table": "$t", "seq": 2}),
      ev("C", "$t", 2, TC),
      # 1.5: a spectator's arrival is news for everyone at the table (how many watch)
      ev("C", "$t", 3, TC), ev("A", "$t", 3, TC), ev("B", "$t", 3, TC)]
s += hello("D", "Di")
s += [send("D", {"type": "spectate", "id": 2, "table": "$t"}),
      err("D", 2, "too_many_spectators"),
      send("A", {"type": "add_bot", "id": 3, "table": "$t", "seat": 2, "level": "random"}),
      ok("A", 3, {"table": "$t", "seat": 2}),
      ev("A", "$t", 4, TC), ev("B", "$t", 4, TC), ev("C", "$t", 4, TC),
      send("A", {"type": "remove_bot", "id": 4, "table": "$t", "seat": 2}),
      ok("A", 4, {"table": "$t", "seat": 2}),
      ev("A", "$t", 5, TC), ev("B", "$t", 5, TC), ev("C", "$t", 5, TC),
      send("A", {"type": "create_table", "id": 5}),
      err("A", 5, "too_many_tables", {"limit": 1}),
      send("A", {"type": "add_bot", "id": 6, "table": "$t", "seat": 2, "level": "random"}),
      ok("A", 6, {"table": "$t", "seat": 2}),
      ev("A", "$t", 6, TC), ev("B", "$t", 6, TC), ev("C", "$t", 6, TC),
      send("A", {"type": "add_bot", "id": 7, "table": "$t", "seat": 3, "level": "random"}),
      ok("A", 7, {"table": "$t", "seat": 3}),
      ev("A", "$t", 7, TC), ev("B", "$t", 7, TC), ev("C", "$t", 7, TC),
      send("D", {"type": "join", "id": 3, "table": "$t"}),
      err("D", 3, "table_full", None, "all four seats are taken"),
      send("B", {"type": "create_table", "id": 6, "options": {"deals": 1}, "private": True}),
      ok("B", 6, {"table": "$p", "seat": 0, "code": "$code"}),
      ev("B", "$p", 1, TC),
      send("D", {"type": "join", "id": 4, "table": "$p", "seat": 1}),
      err("D", 4, "bad_code", None, "wrong or missing join code"),
      send("D", {"type": "join", "id": 5, "table": "$p", "seat": 1, "code": "$code"}),
      ok("D", 5, {"table": "$p", "seat": 1}),
      ev("D", "$p", 2, TC), ev("B", "$p", 2, TC),
      send("A", {"type": "start", "id": 8, "table": "$t"}),
      ok("A", 8, {"table": "$t"})]
# R8a: the commitment every viewer saw in the table since its creation, and the
# contributions (Bo's; bots and Ana sent none), before any card
DC = {"type": "deals_committed", "match": 1, "commitment": "$c1",
      "contributions": [None, "b0b0", None, None]}
for who, hand_seat in (("A", 0), ("B", 1)):
    s += [ev(who, "$t", 8, DC),
          ev(who, "$t", 9, {"type": "deal_started", "deal_number": 1, "dealer": 3}),
          ev(who, "$t", 10, {"type": "hand_dealt", "seat": hand_seat, "cards": "*"}),
          ev(who, "$t", 11, {"type": "turn", "seat": 0, "phase": "play"}),
          ev(who, "$t", 12, TC)]
# the spectator: no hand at all, and no gap where the hands were
s += [ev("C", "$t", 8, DC),
      ev("C", "$t", 9, {"type": "deal_started", "deal_number": 1, "dealer": 3}),
      ev("C", "$t", 10, {"type": "turn", "seat": 0, "phase": "play"}),
      ev("C", "$t", 11, TC),
      send("A", {"type": "start", "id": 9, "table": "$t"}),
      err("A", 9, "not_ready", None, "the table is playing, not waiting"),
      send("A", {"type": "remove_bot", "id": 10, "table": "$t", "seat": 2}),
      err("A", 10, "wrong_phase", None, "cannot remove a bot: the match has started"),
      send("B", {"type": "signal", "id": 7, "table": "$t", "signal": "useless_hand"}),
      err("B", 7, "signals_off", None, "this table does not allow signals"),
      send("C", {"type": "play", "id": 4, "table": "$t", "card": "3o"}),
      err("C", 4, "not_seated", None, "you have no seat at this table"),
      send("A", {"type": "leave", "id": 11, "table": "$t"}),
      ok("A", 11, {"table": "$t", "seat": 0}),
      ev("B", "$t", 13, TC), ev("C", "$t", 12, TC),
      # (1.5) the spectator's tables are listed for it to resume, beside its seats (none)
      send("C", {"type": "list_tables", "id": 5}),
      ok("C", 5, {"tables": "*", "seats": [], "next": None,
                  "watching": [{"table": "$t", "status": "playing"}]})]
s += silent("A", "B", "C", "D")
(OUT / "10_lobby.json").write_text(json.dumps({
    "name": "the lobby: create, list, join, spectate, bots, start, leave, and their refusals",
    "settings": {"max_spectators": 1, "max_tables_per_player": 1}, "steps": s},
    indent=1) + "\n")

# ---------------------------------------------------------------- game
g_opts = {"deals": 1, "first_dealer": 3, "chanter": True, "signals": "private"}
g = []
g += hello("A", "Ana")
g += [send("A", {"type": "create_table", "id": 2, "options": g_opts}),
      ok("A", 2, {"table": "$t", "seat": 0, "code": None}), ev("A", "$t", 1, TC)]
g += hello("B", "Bo", session="$tokenB", pid="$pidB")
g += [send("B", {"type": "join", "id": 2, "table": "$t", "seat": 1}), ok("B", 2, {"table": "$t", "seat": 1}),
      ev("B", "$t", 2, TC), ev("A", "$t", 2, TC)]
g += hello("C", "Cy")
g += [send("C", {"type": "join", "id": 2, "table": "$t", "seat": 2}), ok("C", 2, {"table": "$t", "seat": 2}),
      ev("C", "$t", 3, TC), ev("A", "$t", 3, TC), ev("B", "$t", 3, TC)]
g += hello("D", "Di")
g += [send("D", {"type": "join", "id": 2, "table": "$t", "seat": 3, "contribution": "d1d1"}),
      ok("D", 2, {"table": "$t", "seat": 3}),
      ev("D", "$t", 4, TC), ev("A", "$t", 4, TC), ev("B", "$t", 4, TC), ev("C", "$t", 4, TC),
      send("A", {"type": "start", "id": 3, "table": "$t", "contribution": "a0a0"}),
      ok("A", 3, {"table": "$t"})]
players = (("A", 0), ("B", 1), ("C", 2), ("D", 3))
for who, seat in players:
    g += [ev(who, "$t", 5, {"type": "deals_committed", "match": 1, "commitment": "$c",
                             "contributions": ["a0a0", None, None, "d1d1"]}),
          ev(who, "$t", 6, {"type": "deal_started", "deal_number": 1, "dealer": 3}),
          ev(who, "$t", 7, {"type": "hand_dealt", "seat": seat, "cards": f"$hand{who}"}),
          ev(who, "$t", 8, {"type": "turn", "seat": 0, "phase": "chanter_vote"}),
          ev(who, "$t", 9, TC)]
g += [send("B", {"type": "chanter_vote", "id": 3, "table": "$t", "vote": True}),
      err("B", 3, "not_your_turn", None, "it is seat 0's turn, not seat 1's"),
      send("A", {"type": "play", "id": 4, "table": "$t", "card": "$handB.0"}),
      err("A", 4, "wrong_phase", None, "cannot play a card now: the table is in the chanter_vote phase")]
seq = 9
for who, seat, cid in (("A", 0, 5), ("B", 1, 4), ("C", 2, 3)):
    g += [send(who, {"type": "chanter_vote", "id": cid, "table": "$t", "vote": True}),
          ok(who, cid, {"table": "$t"})]
    for w, _ in players:
        g += [ev(w, "$t", seq + 1, {"type": "chanter_vote", "seat": seat, "vote": True}),
              ev(w, "$t", seq + 2, {"type": "turn", "seat": seat + 1, "phase": "chanter_vote"})]
    seq += 2
g += [send("D", {"type": "chanter_vote", "id": 3, "table": "$t", "vote": True}), ok("D", 3, {"table": "$t"})]
# seq is 15 for everyone; then vote 16, result 17, then the talon (A and D only), then turn
for w, seat in players:
    g += [ev(w, "$t", 16, {"type": "chanter_vote", "seat": 3, "vote": True}),
          ev(w, "$t", 17, {"type": "chanter_result", "accepted": True})]
    if w in ("A", "D"):
        g += [ev(w, "$t", 18, {"type": "talon_dealt", "seat": seat, "cards": f"$talon{w}"}),
              ev(w, "$t", 19, {"type": "turn", "seat": 0, "phase": "chanter_discard"})]
    else:
        g += [ev(w, "$t", 18, {"type": "turn", "seat": 0, "phase": "chanter_discard"})]
last = {"A": 19, "B": 18, "C": 18, "D": 19}
g += [send("A", {"type": "discard", "id": 6, "table": "$t", "cards": ["$handA.0"] * 6}),
      err("A", 6, "bad_discard", None, "the six discards must be six different cards"),
      send("A", {"type": "discard", "id": 7, "table": "$t", "cards": "$talonA"}),
      ok("A", 7, {"table": "$t"})]
for w, _ in players:
    g += [ev(w, "$t", last[w] + 1, {"type": "chanter_discarded", "seat": 0}),
          ev(w, "$t", last[w] + 2, {"type": "turn", "seat": 3, "phase": "chanter_discard"})]
    last[w] += 2
g += [send("D", {"type": "discard", "id": 4, "table": "$t", "cards": "$talonD"}), ok("D", 4, {"table": "$t"})]
for w, _ in players:
    g += [ev(w, "$t", last[w] + 1, {"type": "chanter_discarded", "seat": 3}),
          ev(w, "$t", last[w] + 2, {"type": "turn", "seat": 0, "phase": "play"})]
    last[w] += 2
b_before_play = last["B"]
g += [send("A", {"type": "play", "id": 8, "table": "$t", "card": "$handB.0"}),
      err("A", 8, "card_not_in_hand", {"card": "$handB.0"}),
      send("A", {"type": "play", "id": 9, "table": "$t", "card": "$handA.0"}),
      ok("A", 9, {"table": "$t"})]
for w, _ in players:
    g += [ev(w, "$t", last[w] + 1, {"type": "card_played", "seat": 0, "card": "$handA.0"}),
          ev(w, "$t", last[w] + 2, {"type": "turn", "seat": 1, "phase": "play"})]
    last[w] += 2
g += [send("B", {"type": "signal", "id": 5, "table": "$t", "signal": "aces", "n": 2}),
      ok("B", 5, {"table": "$t"}),
      ev("B", "$t", last["B"] + 1, {"type": "signal_sent", "signal": "aces", "n": 2}),
      ev("D", "$t", last["D"] + 1, {"type": "signal", "from_seat": 1, "signal": "aces", "n": 2})]
last["B"] += 1
last["D"] += 1
g += silent("A", "C")   # the other team: nothing at all, not even a number
g += [send("A", {"type": "get_record", "id": 10, "table": "$t"}),
      err("A", 10, "wrong_phase", None, "the match is not over: its record is private until it ends")]
# B's session reconnects elsewhere: the old connection is replaced (4009)
g += hello("E", "Bo", token="$tokenB", session="$tokenE", pid="$pidB")
g += [{"as": "B", "closed": 4009}]
for w in ("A", "C", "D"):
    g += [ev(w, "$t", last[w] + 1, {"type": "player_disconnected", "seat": 1}),
          ev(w, "$t", last[w] + 2, TC)]
    last[w] += 2
replay = [{"type": "card_played", "seat": 0, "card": "$handA.0"},
          {"type": "turn", "seat": 1, "phase": "play"},
          {"type": "signal_sent", "signal": "aces", "n": 2},
          {"type": "player_disconnected", "seat": 1}, TC,
          {"type": "player_connected", "seat": 1}, TC]
upto = b_before_play + len(replay)
g += [send("E", {"type": "resume", "id": 6, "token": "$tokenE", "table": "$t", "last_seq": b_before_play}),
      ok("E", 6, {"table": "$t", "seat": 1, "seq": upto, "snapshot": False, "replayed": len(replay)})]
g += [ev("E", "$t", b_before_play + 1 + i, e) for i, e in enumerate(replay)]
for w in ("A", "C", "D"):
    g += [ev(w, "$t", last[w] + 1, {"type": "player_connected", "seat": 1}),
          ev(w, "$t", last[w] + 2, TC)]
g += [send("E", {"type": "resume", "id": 7, "token": "$tokenB", "table": "$t", "last_seq": 0}),
      err("E", 7, "bad_token", None, "resume must carry this session's current token (the one in your latest welcome)")]
g += silent("A", "C", "D", "E")
(OUT / "11_game.json").write_text(json.dumps({
    "name": "a match: chanter (R9), plays (R10), a private signal (R16), resume after a replaced connection, and the refusals",
    "steps": g}, indent=1) + "\n")

# ---------------------------------------------------------------- chat, mute, rematch (1.3)
q_opts = {"deals": 1, "first_dealer": 3, "bot_delay_ms": 10000, "signals": "off"}
c = []
c += hello("A", "Ana")
c += [send("A", {"type": "create_table", "id": 2, "options": q_opts}),
      ok("A", 2, {"table": "$t", "seat": 0, "code": None}), ev("A", "$t", 1, TC)]
c += hello("B", "Bo")
c += [send("B", {"type": "join", "id": 2, "table": "$t", "seat": 1}),
      ok("B", 2, {"table": "$t", "seat": 1}), ev("B", "$t", 2, TC), ev("A", "$t", 2, TC)]
c += hello("S", "Sam")
c += [send("S", {"type": "spectate", "id": 2, "table": "$t"}), ok("S", 2, {"table": "$t", "seq": 2}),
      ev("S", "$t", 2, TC)]
# 1.5: a spectator's arrival is news for everyone at the table (how many watch)
c += [ev("S", "$t", 3, TC), ev("A", "$t", 3, TC), ev("B", "$t", 3, TC)]
c += hello("E", "Eve")
c += [send("E", {"type": "chat", "id": 2, "table": "$t", "text": "hi"}),
      err("E", 2, "not_at_table", None, "you are not at this table: join or watch it first"),
      send("E", {"type": "mute", "id": 3, "table": "$t", "sender": "0123456789abcdef"}),
      err("E", 3, "not_at_table", None, "you are not at this table: join or watch it first")]
# a seat speaks to everyone at the table (cleaned: the escape is gone)
said = {"type": "chat", "from_seat": 0, "name": "Ana", "text": "hello [1mall", "sender": "$senderA"}
c += [send("A", {"type": "chat", "id": 3, "table": "$t", "text": "hello \u001b[1mall"}),
      ok("A", 3, {"table": "$t"}),
      ev("A", "$t", 4, said), ev("B", "$t", 4, said), ev("S", "$t", 4, said)]
# a spectator speaks to the spectators only: the seats get nothing, not even a number
c += [send("S", {"type": "chat", "id": 3, "table": "$t", "text": "Bo holds Monsieur"}),
      ok("S", 3, {"table": "$t"}),
      ev("S", "$t", 5, {"type": "chat", "from_seat": None, "name": "Sam",
                         "text": "Bo holds Monsieur", "sender": "$senderS"})]
c += silent("A", "B")
# Bo mutes Ana: her next words reach everyone else, and Bo's sequence has no gap
c += [send("B", {"type": "mute", "id": 3, "table": "$t", "sender": "$senderA"}),
      ok("B", 3, {"table": "$t"}),
      send("A", {"type": "chat", "id": 4, "table": "$t", "text": "again"}),
      ok("A", 4, {"table": "$t"}),
      ev("A", "$t", 5, {**said, "text": "again"}), ev("S", "$t", 6, {**said, "text": "again"})]
c += silent("B")
c += [send("A", {"type": "chat", "id": 5, "table": "$t", "text": "x" * 201}),
      err("A", 5, "invalid_field", {"field": "$.text"}),
      send("A", {"type": "chat", "id": 6, "table": "$t", "text": "three"}),
      ok("A", 6, {"table": "$t"}),
      ev("A", "$t", 6, {**said, "text": "three"}), ev("S", "$t", 7, {**said, "text": "three"}),
      send("A", {"type": "chat", "id": 7, "table": "$t", "text": "four"}),
      err("A", 7, "rate_limited", None, "too many chat messages; wait a moment and send it again")]
# Bo unmutes Ana and hears her again
c += [send("B", {"type": "mute", "id": 4, "table": "$t", "sender": "$senderA", "muted": False}),
      ok("B", 4, {"table": "$t"}),
      send("A", {"type": "start", "id": 8, "table": "$t"}), ok("A", 8, {"table": "$t"})]
# (Ana's chat bucket is empty: the start went through, chat is limited on its own)
START = [{"type": "deals_committed", "match": 1, "commitment": "*", "contributions": [None] * 4},
         {"type": "deal_started", "deal_number": 1, "dealer": 3}]
for who, first, seat in (("A", 7, 0), ("B", 5, 1), ("S", 8, None)):
    evs = START + ([{"type": "hand_dealt", "seat": seat, "cards": "*"}] if seat is not None
                   else []) + [{"type": "turn", "seat": 0, "phase": "play"}, TC]
    c += [ev(who, "$t", first + i, e) for i, e in enumerate(evs)]
c += [send("B", {"type": "rematch", "id": 5, "table": "$t"}),
      err("B", 5, "wrong_phase", None, "a rematch can only follow a finished match"),
      send("S", {"type": "rematch", "id": 5, "table": "$t"}),
      err("S", 5, "not_seated", None, "you have no seat at this table"),
      send("S", {"type": "get_record", "id": 6, "table": "$t", "match": 2}),
      err("S", 6, "no_such_table", None, "this table has no match 2"),
      send("S", {"type": "get_record", "id": 7, "table": "$t", "match": 1}),
      err("S", 7, "wrong_phase", None, "the match is not over: its record is private until it ends")]
# (1.4) Eve starts watching: her head ends with the chat so far (Sam's spectator line too,
# since she watches), and her own sender id
sam_said = {"type": "chat", "from_seat": None, "name": "Sam", "text": "Bo holds Monsieur",
            "sender": "$senderS"}
history = {"type": "chat_history", "lines": [said, sam_said, {**said, "text": "again"},
                                             {**said, "text": "three"}],
           "sender": "$senderE", "muted": []}
c += [send("E", {"type": "spectate", "id": 4, "table": "$t"}), ok("E", 4, {"table": "$t", "seq": 8}),
      ev("E", "$t", 8, TC), ev("E", "$t", 8, {"type": "snapshot", "view": "*"}),
      ev("E", "$t", 8, history),
      # 1.5: one more spectator, announced to everyone at the table
      ev("E", "$t", 9, TC), ev("A", "$t", 12, TC), ev("B", "$t", 10, TC), ev("S", "$t", 12, TC)]
c += silent("A", "B", "S", "E")
(OUT / "12_chat_fair.json").write_text(json.dumps({
    "name": "chat (seats to all, spectators to spectators), mute and unmute, chat limits, rematch and per-match records refused before the end, a new spectator's chat_history",
    "settings": {"chat_burst": 3, "chat_per_second": 0.01}, "steps": c}, indent=1) + "\n")

# ---------------------------------------------------------------- seats in play (1.5)
# A player who dropped is waited for (grace_until in its SeatInfo) unless the others vote
# to let a bot play now (let_bot_play); a late friend takes a bot's seat mid-match (join);
# a turn timer that runs out says so (turn_timed_out) before the bot's card.
p_opts = {"deals": 1, "first_dealer": 3, "bot_delay_ms": 10000, "signals": "off",
          "grace_s": 3600, "turn_timer_s": 4}
d = []
d += hello("A", "Ana")
d += [send("A", {"type": "create_table", "id": 2, "options": p_opts}),
      ok("A", 2, {"table": "$t", "seat": 0, "code": None}), ev("A", "$t", 1, TC)]
d += hello("B", "Bo")
d += [send("B", {"type": "join", "id": 2, "table": "$t", "seat": 2}),
      ok("B", 2, {"table": "$t", "seat": 2}), ev("B", "$t", 2, TC), ev("A", "$t", 2, TC),
      send("A", {"type": "start", "id": 3, "table": "$t"}), ok("A", 3, {"table": "$t"})]
P_START = [{"type": "deals_committed", "match": 1, "commitment": "*", "contributions": [None] * 4},
           {"type": "deal_started", "deal_number": 1, "dealer": 3}]
for who, seat in (("A", 0), ("B", 2)):
    evs = [*P_START, {"type": "hand_dealt", "seat": seat, "cards": "*"},
           {"type": "turn", "seat": 0, "phase": "play"}, TC]
    d += [ev(who, "$t", 3 + i, e) for i, e in enumerate(evs)]
d += [{"as": "B", "disconnect": True},
      ev("A", "$t", 8, {"type": "player_disconnected", "seat": 2}), ev("A", "$t", 9, TC),
      send("A", {"type": "let_bot_play", "id": 4, "table": "$t", "seat": 2}),
      ok("A", 4, {"table": "$t", "seat": 2}), ev("A", "$t", 10, TC),
      send("A", {"type": "let_bot_play", "id": 5, "table": "$t", "seat": 1}),
      err("A", 5, "wrong_phase", None, "seat 1 is not waiting for its player to come back")]
d += hello("C", "Cy")
d += [send("C", {"type": "join", "id": 2, "table": "$t", "seat": 3}),
      ok("C", 2, {"table": "$t", "seat": 3}),
      ev("C", "$t", 10, TC), ev("C", "$t", 10, {"type": "snapshot", "view": "*"}),
      ev("A", "$t", 11, TC)]
TIMER = [{"type": "turn_timed_out", "seat": 0}, {"type": "card_played", "seat": 0, "card": "*"},
         {"type": "turn", "seat": 1, "phase": "play"}]
d += [ev("A", "$t", 12 + i, e) for i, e in enumerate(TIMER)]
d += [ev("C", "$t", 11 + i, e) for i, e in enumerate(TIMER)]
d += silent("A", "C")
(OUT / "13_seats_in_play.json").write_text(json.dumps({
    "name": "1.5: a dropped player's seat given to a bot by vote, a late friend taking a bot's seat mid-match, a turn timer running out",
    "steps": d}, indent=1) + "\n")

# ---------------------------------------------------------------- a bot client (1.5)
b_opts = {"deals": 1, "first_dealer": 3, "bot_delay_ms": 10000, "signals": "off"}
b_full = {**full_opts, "signals": "off"}
NOBODY_AWAY = {"grace_until": None, "bot_votes": []}
ROBO = {"kind": "human", "name": "Robo", "level": None, "connected": True, **NOBODY_AWAY,
        "bot": True}
SERVER_BOT = {"kind": "bot", "name": "*", "level": "random", "connected": True,
              **NOBODY_AWAY, "bot": True}
ANA = {"kind": "human", "name": "Ana", "level": None, "connected": True, **NOBODY_AWAY,
       "bot": False}
b_info = {"table": "$t", "name": "Robo's table", "options": b_full, "private": False,
          "seats": [ROBO, EMPTY, EMPTY, EMPTY], "status": "waiting", "spectators": 0,
          "creator": 0, "match": 0, "next_commitment": "$c", "rematch": []}
r = [{"as": "R", "connect": True},
     send("R", {"type": "hello", "id": 1, "versions": [1], "name": "Robo", "bot": True}),
     {"as": "R", "recv": {"type": "welcome", "id": 1, "version": 1, "session": "*",
                          "player_id": "*", "name": "Robo"}},
     send("R", {"type": "create_table", "id": 2, "options": b_opts}),
     ok("R", 2, {"table": "$t", "seat": 0, "code": None}),
     ev("R", "$t", 1, {"type": "table_changed", "table": b_info}),
     send("R", {"type": "add_bot", "id": 3, "table": "$t", "seat": 2, "level": "random"}),
     ok("R", 3, {"table": "$t", "seat": 2}),
     ev("R", "$t", 2, {"type": "table_changed",
                       "table": {**b_info, "seats": [ROBO, EMPTY, SERVER_BOT, EMPTY]}})]
r += hello("A", "Ana")
both = {**b_info, "seats": [ROBO, ANA, SERVER_BOT, EMPTY]}
r += [send("A", {"type": "join", "id": 2, "table": "$t", "seat": 1}),
      ok("A", 2, {"table": "$t", "seat": 1}),
      ev("A", "$t", 3, {"type": "table_changed", "table": both}),
      ev("R", "$t", 3, {"type": "table_changed", "table": both}),
      send("A", {"type": "list_tables", "id": 3}),
      ok("A", 3, {"tables": [both], "seats": [{"table": "$t", "seat": 1, "status": "waiting"}],
                  "next": None, "watching": []})]
r += silent("R", "A")
(OUT / "15_bot_client.json").write_text(json.dumps({
    "name": "a client that says it is a program (hello bot: true, 1.5): its seat is shown as a bot to everyone, like the server's own",
    "steps": r}, indent=1) + "\n")

# ---------------------------------------------------------------- players (1.5, issue 27)
q = []
q += hello("A", "Ana")
q += [send("A", {"type": "history", "id": 2}),
      ok("A", 2, {"matches": [], "next": None}),
      send("A", {"type": "history", "id": 3, "cursor": "yesterday"}),
      err("A", 3, "invalid_field", {"field": "$.cursor"}),
      send("A", {"type": "profile", "id": 4, "name": "Nobody"}),
      err("A", 4, "no_such_player"),
      send("A", {"type": "queue", "id": 5, "rated": True}),
      err("A", 5, "not_registered"),
      send("A", {"type": "unqueue", "id": 6}),
      ok("A", 6, {"queued": False, "rated": False, "waiting": 0}),
      send("A", {"type": "list_tables", "id": 7, "filter": {"free": 1, "rated": True}}),
      ok("A", 7, {"tables": [], "seats": [], "next": None, "watching": []}),
      send("A", {"type": "queue", "id": 8, "rated": False, "options": opts}),
      ok("A", 8, {"queued": True, "rated": False, "waiting": 1}),
      {"as": "A", "recv": {"type": "matched", "table": "$t", "seat": 0, "rated": False}},
      ev("A", "$t", 1, TC),
      ev("A", "$t", 2, {"type": "deals_committed", "match": 1, "commitment": "*",
                        "contributions": [None, None, None, None]}),
      ev("A", "$t", 3, {"type": "deal_started", "deal_number": 1, "dealer": 3}),
      ev("A", "$t", 4, {"type": "hand_dealt", "seat": 0, "cards": "*"}),
      ev("A", "$t", 5, {"type": "turn", "seat": 0, "phase": "play"}),
      ev("A", "$t", 6, TC),
      send("A", {"type": "list_tables", "id": 9}),
      ok("A", 9, {"tables": "*", "seats": [{"table": "$t", "seat": 0, "status": "playing"}],
                  "next": None, "watching": []})]
q += silent("A")
(OUT / "17_players.json").write_text(json.dumps({
    "name": "players (added in 1.5): history and its cursor, a profile nobody has, a rated queue for a guest, unqueue, the lobby's filter, a casual play-now request seated with bots after the wait (matched, then the table as after a join)",
    "settings": {"queue_bots_after_s": 0.3, "queue_tick_s": 0.05},
    "steps": q}, indent=1) + "\n")
