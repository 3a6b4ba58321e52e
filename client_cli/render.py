"""Everything the terminal shows, as rich renderables built from :class:`Text` only.

Safety rule: every string that came from the network (player and table names, error
messages, table ids) goes through :func:`safe`, which applies ``protocol.clean_text`` (no
control characters, no escape sequences, no bidi tricks) and returns a rich ``Text``, never
markup, so a name such as ``[bold]x`` is printed as those characters. Nothing in this module
ever passes server text to ``console.print`` as a markup string.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

import protocol
from server.game.cards import MAJEURES, STRENGTH, card_name, sort_by_strength
from server.game.seats import partner_of, team_of

from .model import TableModel

#: Suit symbol and colour (R2: o oros/coins, c copas/cups, b bastos/batons, e espadas/swords).
SUIT_STYLE: dict[str, tuple[str, str]] = {
    "o": ("◆", "yellow"),
    "c": ("♥", "red"),
    "b": ("♣", "green"),
    "e": ("♠", "blue"),
}

#: R15: the signal vocabulary, with what each one says.
SIGNAL_MEANINGS: dict[str, str] = {
    "monsieur": "I hold Monsieur (3o)",
    "madame": "I hold Madame (3c)",
    "borgne": "I hold Le Borgne (2o)",
    "vache": "I hold La Vache (2c)",
    "grand_neuf": "I hold Grand-neuf (9c)",
    "petit_neuf": "I hold Petit-neuf (9o)",
    "deux_de_chene": "I hold Deux de chêne (2b)",
    "deux_d_ecrit": "I hold Deux d'écrit (2e)",
    "aces": "I hold N aces (signal aces N, N = 1..4)",
    "useless_hand": "my hand is worthless",
    "going_mordienne": "I am going for mordienne",
}

#: Server error codes in plain words (docs/PROTOCOL.md, "Error codes").
ERROR_SENTENCES: dict[str, str] = {
    "not_your_turn": "It is not your turn: wait for your turn to come round (R10).",
    "card_not_in_hand": "You do not hold that card. Type a card from your hand, or its number.",
    "wrong_phase": "That cannot be done at this point of the deal.",
    "match_over": "The match is over.",
    "signals_off": "This table does not allow signals (R16).",
    "bad_discard": "Discard exactly six different cards of your hand (R9).",
    "unknown_card": "That is not a card code: rank 1-9, V, C or R, then suit o, c, b or e (R2).",
    "no_such_table": "There is no such table (type `tables` to list them).",
    "bad_code": "That table is private: it needs the right join code.",
    "seat_taken": "That seat is taken; pick another one or leave it out.",
    "table_full": "All four seats are taken; you can `watch` the table instead.",
    "not_seated": "You have no seat at that table.",
    "not_at_table": "You are not at that table.",
    "not_creator": "Only the player who created the table can do that.",
    "not_ready": "The table cannot start: fill all four seats with players or bots first.",
    "too_many_tables": "The server has no room for another table right now.",
    "too_many_spectators": "That table has all the spectators it can take.",
    "rate_limited": "Slow down: too many commands at once.",
    "storage_unavailable": "The server could not save that, so nothing changed; try again.",
    "internal_error": "The server hit an internal error; nothing changed.",
    "shutting_down": "The server is restarting; nothing changed. Try again in a moment.",
    "conflict": "The table changed while your move was being applied; nothing changed. "
                "Try again.",
    "bad_token": "The server no longer knows this session.",
    "invalid_field": "The server refused a value",
    "unknown_type": "The server does not know that command.",
}


def safe(value: object, limit: int = 200) -> Text:
    """Network text → harmless rich Text: cleaned (protocol.clean_text), length-capped."""
    return Text(protocol.clean_text(str(value))[:limit])


def error_text(code: str, message: str = "", card: str | None = None) -> Text:
    """An ``error`` reply as a sentence; unknown codes are shown like internal_error."""
    sentence = ERROR_SENTENCES.get(code)
    out = Text("✗ ", style="bold red")
    if code == "card_not_in_hand" and card:
        out.append(f"You do not hold {card} ({card_name(card)}). ")
        out.append("Type a card from your hand, or its number.")
    elif code == "invalid_field":
        out.append(f"{sentence}: ")
        out.append_text(safe(message))
    elif sentence is None:
        out.append("The server refused that: ")
        out.append_text(safe(message or code))
    else:
        out.append(sentence)
    return out


def problem(message: str) -> Text:
    """A local mistake (bad input) in the same style as a server error."""
    return Text("✗ ", style="bold red").append(message)


def note(message: str, style: str = "cyan") -> Text:
    return Text(message, style=style)


# --------------------------------------------------------------------------- cards


def card_text(code: str, with_name: bool = True) -> Text:
    """``3o ◆ Monsieur``: the code, the suit symbol in its colour, the name (R2, R3)."""
    symbol, colour = SUIT_STYLE.get(code[1:2], ("?", "white"))
    out = Text()
    style = f"bold {colour}" if code in MAJEURES else colour
    out.append(code, style=style)
    out.append(f" {symbol}", style=colour)
    if with_name:
        out.append(f" {card_name(code)}")
    return out


def strength_table() -> Table:
    """R3, strongest first; cards in one row are equal."""
    rows: dict[int, list[str]] = {}
    for code in sort_by_strength(list(STRENGTH)):
        rows.setdefault(STRENGTH[code], []).append(code)
    table = Table(title="Strength of the cards (R3): higher wins; a row is equal",
                  box=None, show_header=True, header_style="bold", title_justify="left")
    table.add_column("strength", justify="right")
    table.add_column("cards")
    table.add_column("name")
    for strength, codes in sorted(rows.items(), reverse=True):
        cards = Text(" ").join(card_text(c, with_name=False) for c in codes)
        name = card_name(codes[0]) if len(codes) == 1 else _GROUP_NAMES.get(codes[0][0], "")
        table.add_row(str(strength), cards, name)
    return table


_GROUP_NAMES = {"1": "the aces", "R": "the Rois", "C": "the Cavalières", "V": "the Valets",
                "9": "nines of batons and swords", "8": "eights", "7": "sevens", "6": "sixes",
                "5": "fives", "4": "fours", "3": "threes of batons and swords"}


# --------------------------------------------------------------------------- seats


def who(model: TableModel, seat: int | None) -> Text:
    """``Ana (seat 2)``, ``you (seat 0)``, ``your partner Cy (seat 2)``: names are cleaned."""
    if seat is None:
        return Text("nobody")
    out = Text()
    if model.seat is not None and seat == model.seat:
        out.append("you", style="bold")
        out.append(f" (seat {seat})")
        return out
    if model.seat is not None and seat == partner_of(model.seat):
        out.append("your partner ")
    name = model.seat_name(seat)
    out.append_text(safe(name, 32) if name else Text(f"seat {seat}"))
    if name:
        out.append(f" (seat {seat})")
    return out


def team_text(model: TableModel, team: int) -> Text:
    a, b = (0, 2) if team == 0 else (1, 3)
    out = Text(f"team {team} (")
    out.append_text(_short(model, a)).append(" & ").append_text(_short(model, b)).append(")")
    return out


def _short(model: TableModel, seat: int) -> Text:
    if model.seat == seat:
        return Text("you", style="bold")
    name = model.seat_name(seat)
    return safe(name, 32) if name else Text(f"seat {seat}")


# --------------------------------------------------------------------------- lobby


def tables_table(tables: list[dict[str, Any]], seats: list[dict[str, Any]]) -> RenderableType:
    """The lobby, two short lines per table so it reads well in 80 columns."""
    if not tables:
        return note("No tables yet. Create one with `create` (see `help create`).")
    mine = {s.get("table"): s.get("seat") for s in seats}
    lines: list[RenderableType] = [Text("Tables:", style="bold")]
    for info in tables:
        opts = info.get("options") or {}
        head = Text("  ")
        tid = safe(info.get("table", "?"), 64)
        tid.stylize("bold")
        head.append_text(tid)
        head.append("  «").append_text(safe(info.get("name", ""), 32)).append("»  ")
        head.append_text(safe(info.get("status", ""), 12))
        deals = (f"to {opts['target_points']} points" if opts.get("target_points")
                 else f"{opts.get('deals', 5)} deals")
        flags = [deals]
        if opts.get("chanter"):
            flags.append("chanter")
        if opts.get("partner_draw"):
            flags.append("partner draw")
        flags.append(f"signals {opts.get('signals', 'private')}")
        if info.get("private"):
            flags.append("private")
        if info.get("spectators"):
            flags.append(f"{info['spectators']} watching")
        head.append("  · " + ", ".join(flags))
        if info.get("table") in mine:
            head.append(f"  (you: seat {mine[info.get('table')]})", style="green")
        lines.append(head)
        seat_line = Text("      seats: ")
        for i, s in enumerate(info.get("seats") or []):
            if i:
                seat_line.append(" · ")
            seat_line.append(f"{i} ")
            kind = s.get("kind")
            if kind == "empty":
                seat_line.append("empty", style="dim")
            elif kind == "bot":
                seat_line.append(f"bot {s.get('level') or ''}".strip(), style="magenta")
            else:
                seat_line.append_text(safe(s.get("name") or "?", 32))
        lines.append(seat_line)
    return Group(*lines)


def seats_lines(model: TableModel) -> Text:
    """The four seats of a table before the match (who sits where)."""
    out = Text()
    info = model.info or {}
    for i, s in enumerate(info.get("seats") or []):
        out.append(f"  seat {i} (team {team_of(i)}): ")
        kind = s.get("kind")
        if kind == "empty":
            out.append("empty", style="dim")
        elif kind == "bot":
            out.append("bot, level ")
            out.append_text(safe(s.get("level") or "?", 10))
        else:
            out.append_text(safe(s.get("name") or "?", 32))
            if i == model.seat:
                out.append(" (you)", style="bold")
            if not s.get("connected"):
                out.append(" (disconnected)", style="dim")
        out.append("\n")
    out.rstrip()
    return out


# --------------------------------------------------------------------------- game screen


def game_screen(model: TableModel) -> RenderableType:
    """The table as one block: header, seats, the trick on the table, your hand, whose turn."""
    v = model.view
    if v is None:
        head = Text("Table ")
        head.append_text(safe(model.table, 64))
        head.append(" · waiting for the start\n")
        return Group(head, seats_lines(model))
    opts = v.get("options") or {}
    parts: list[RenderableType] = []
    head = Text("Table ", style="bold")
    head.append_text(safe(model.table, 64))
    if model.info and model.info.get("name"):
        head.append(" «").append_text(safe(model.info["name"], 32)).append("»")
    total = (f"to {opts['target_points']} points" if opts.get("target_points")
             else f"of {opts.get('deals', 5)}")
    head.append(f" · deal {v['deal_number']} {total} · dealer: ")
    head.append_text(who(model, v["dealer"]))
    if model.spectator:
        head.append(" · you are watching", style="dim")
    parts.append(head)

    grid = Table(box=None, header_style="bold", pad_edge=False)
    for col in ("seat", "player", "team", "tricks", "cards"):
        grid.add_column(col, justify="left" if col == "player" else "right")
    for seat in range(4):
        name = who(model, seat)
        if seat == v.get("to_act"):
            name.append({"chanter_vote": "  ◀ to vote", "chanter_discard": "  ◀ to discard"}
                        .get(v["phase"], "  ◀ to play"), style="bold yellow")
        info_seat = ((model.info or {}).get("seats") or [{}] * 4)[seat]
        if info_seat.get("kind") == "bot":
            name.append(" [bot]", style="magenta")
        elif info_seat.get("kind") == "human" and not info_seat.get("connected"):
            name.append(" (disconnected)", style="dim")
        grid.add_row(str(seat), name, str(team_of(seat)), str(v["trick_counts"][seat]),
                     str(v["hand_sizes"][seat]))
    parts.append(grid)
    points = Text("Points: ")
    points.append_text(team_text(model, 0)).append(f" {v['points'][0]}  ·  ")
    points.append_text(team_text(model, 1)).append(f" {v['points'][1]}")
    parts.append(points)

    if v["phase"] in ("chanter_vote", "chanter_discard"):
        votes = Text("Chanter (R9) votes: ")
        votes.append_text(Text(", ").join(
            _short(model, s).append(" yes" if vote else " no")
            for s, vote in enumerate(v["chanter_votes"]) if vote is not None) or Text("none yet"))
        parts.append(votes)
    if v["phase"] == "play":
        trick = Text(f"Trick {len(v['tricks']) + 1} of 9, led by ")
        trick.append_text(who(model, v["leader"]))
        trick.append(": ")
        if not v["trick"]:
            trick.append("no card yet", style="dim")
        for i, (seat, card) in enumerate(v["trick"]):
            if i:
                trick.append(", ")
            trick.append_text(_short(model, seat)).append(" ").append_text(card_text(card))
        parts.append(trick)
        if v["tricks"]:
            last = v["tricks"][-1]
            prev = Text(f"Last trick ({len(v['tricks'])}): ", style="dim")
            prev.append_text(trick_cards(model, last["leader"], last["cards"]))
            prev.append(" → ")
            prev.append_text(who(model, last["winner"]) if last["winner"] is not None
                             else Text("spoiled"))
            parts.append(prev)
    if v.get("signals"):
        sig = Text("Signals received this deal: ")
        sig.append_text(Text("; ").join(signal_text(model, s) for s in v["signals"]))
        parts.append(sig)
    if not model.spectator:
        parts.append(hand_table(v["hand"]))
    parts.append(turn_hint(model))
    return Group(*parts)


def trick_cards(model: TableModel, leader: int, cards: list[str]) -> Text:
    out = Text()
    for i, card in enumerate(cards):
        if i:
            out.append(", ")
        out.append_text(_short(model, (leader + i) % 4)).append(" ").append_text(card_text(card))
    return out


def hand_table(hand: list[str]) -> RenderableType:
    """Your hand strongest first (R3), numbered: type the number or the code to play."""
    if not hand:
        return Text("Your hand: (empty)")
    table = Table(box=None, title="Your hand (strongest first):", title_justify="left",
                  show_header=False, pad_edge=False)
    table.add_column(justify="right")
    table.add_column()
    table.add_column(justify="right", style="dim")
    for i, code in enumerate(sort_by_strength(hand), 1):
        table.add_row(f"{i:>2}", card_text(code), f"strength {STRENGTH[code]}")
    return table


def turn_hint(model: TableModel) -> Text:
    v = model.view
    if v is None:
        return Text()
    phase = v["phase"]
    if phase == "match_over":
        return Text("The match is over.", style="bold")
    if model.my_turn:
        if phase == "chanter_vote":
            return Text("▶ Your vote: do you want to chanter (R9)? Type `chanter yes` or "
                        "`chanter no`.", style="bold yellow")
        if phase == "chanter_discard":
            return Text("▶ Discard six cards (R9): `discard` then six codes or numbers, "
                        "e.g. `discard 10 11 12 13 14 15`.", style="bold yellow")
        return Text("▶ Your turn: type a card code (e.g. 3o) or its number in your hand.",
                    style="bold yellow")
    if v.get("to_act") is None:
        return Text()
    out = Text("Waiting for ")
    out.append_text(who(model, v["to_act"]))
    out.append({"chanter_vote": " to vote on chanter.",
                "chanter_discard": " to discard."}.get(phase, " to play."))
    return out


def signal_text(model: TableModel, sig: dict[str, Any]) -> Text:
    meaning = SIGNAL_MEANINGS.get(str(sig.get("signal")), "?")
    if sig.get("signal") == "aces":
        meaning = f"I hold {sig.get('n')} ace{'s' if sig.get('n') != 1 else ''}"
    out = who(model, sig.get("from_seat"))
    out.append(": “").append(meaning).append("”")
    return out


# --------------------------------------------------------------------------- events


def event_lines(model: TableModel, event: dict[str, Any],
                before: dict[str, Any] | None = None) -> list[RenderableType]:
    """What to print for one event (applied already; ``before`` is the lobby info before it)."""
    kind = event.get("type")
    v = model.view
    out: list[RenderableType] = []
    if kind == "table_changed":
        out += _seat_changes(model, before, event["table"])
    elif kind == "player_disconnected":
        t = who(model, event["seat"]).append(" lost the connection; a bot takes the seat if "
                                             "they do not come back in time.", style="dim")
        out.append(t)
    elif kind == "player_connected":
        out.append(who(model, event["seat"]).append(" is connected.", style="dim"))
    elif kind == "partner_draw":
        t = Text("Partner draw (R7): ")
        t.append_text(Text(", ").join(
            Text(f"seat {s} ").append_text(card_text(c)) for s, c in event["cards"]))
        if model.seat is not None:
            t.append(f". You now sit in seat {model.seat}.")
        out.append(t)
    elif kind == "deal_started" and v is not None:
        if event["deal_number"] == 1:
            out.append(Text("The match starts!", style="bold green"))
        opts = v.get("options") or {}
        total = (f"(play to {opts['target_points']} points)" if opts.get("target_points")
                 else f"of {opts.get('deals', 5)}")
        t = Text(f"── Deal {event['deal_number']} {total} · dealer: ", style="bold")
        t.append_text(who(model, event["dealer"]))
        t.append(" · first lead: ").append_text(who(model, (event["dealer"] + 1) % 4))
        t.append(" ──", style="bold")
        out.append(t)
    elif kind == "hand_dealt" and v is not None and event["seat"] == model.seat:
        t = Text("You are dealt: ")
        t.append_text(Text(", ").join(card_text(c) for c in sort_by_strength(event["cards"])))
        out.append(t)
    elif kind == "chanter_vote":
        out.append(who(model, event["seat"]).append(
            " wants to chanter." if event["vote"] else " does not want to chanter."))
    elif kind == "chanter_result":
        out.append(Text("Everyone agreed to chanter: the talon goes to the dealer's left and "
                        "the dealer, who each discard six (R9)." if event["accepted"]
                        else "No chanter this deal: play starts with the hands as dealt (R9).",
                        style="cyan"))
    elif kind == "talon_dealt" and event["seat"] == model.seat:
        t = Text("You take from the talon: ")
        t.append_text(Text(", ").join(card_text(c) for c in event["cards"]))
        out.append(t)
    elif kind == "chanter_discarded":
        out.append(who(model, event["seat"]).append(" discarded six cards face down."))
    elif kind == "card_played":
        t = who(model, event["seat"])
        t.append(" play" if event["seat"] == model.seat else " plays")
        t.append(" ").append_text(card_text(event["card"]))
        out.append(t)
    elif kind == "trick_done":
        out.append(trick_result(model, event))
    elif kind == "deal_scored":
        out.append(deal_result(model, event))
    elif kind == "match_over":
        out.append(match_result(model, event))
    elif kind == "signal":
        t = Text("Signal (R15) from ", style="magenta")
        t.append_text(signal_text(model, event))
        if model.seat is not None and event["from_seat"] != partner_of(model.seat):
            t.append(" (you noticed a signal meant for their partner, R16)", style="dim")
        out.append(t)
    return out


def _seat_changes(model: TableModel, before: dict[str, Any] | None,
                  after: dict[str, Any]) -> list[RenderableType]:
    out: list[RenderableType] = []
    if before is None:
        return out
    old, new = before.get("seats") or [], after.get("seats") or []
    for i, (a, b) in enumerate(zip(old, new, strict=False)):
        if (a.get("kind"), a.get("name")) == (b.get("kind"), b.get("name")):
            continue
        t = Text(f"Seat {i}: ")
        if b.get("kind") == "empty":
            t.append("now empty")
        elif b.get("kind") == "bot":
            t.append("a ").append_text(safe(b.get("level") or "", 10)).append(" bot sits down")
        else:
            t.append_text(safe(b.get("name") or "?", 32)).append(" sits down")
        out.append(t)
    if before.get("status") != after.get("status"):
        status = after.get("status")
        if status == "finished":
            out.append(Text("The table is finished.", style="dim"))
        elif status == "abandoned":
            out.append(Text("The table was abandoned.", style="dim"))
    return out


def trick_result(model: TableModel, event: dict[str, Any]) -> Text:
    """R11: a unique strongest card wins; a tie for the top spoils the trick."""
    t = Text(f"Trick {event['number']}: ", style="bold")
    t.append_text(trick_cards(model, event["leader"], event["cards"]))
    winner = event["winner"]
    if winner is None:
        top = max(STRENGTH[c] for c in event["cards"])
        tied = [c for c in event["cards"] if STRENGTH[c] == top]
        t.append(" — SPOILED (R11): ", style="bold red")
        t.append(" and ".join(tied) + " tie for the top, so nobody wins it; ")
        t.append_text(who(model, event["leader"])).append(" leads again.")
    else:
        best = event["cards"][(winner - event["leader"]) % 4]
        t.append(" — won by ", style="bold green").append_text(who(model, winner))
        t.append(" with ").append_text(card_text(best))
    return t


def deal_result(model: TableModel, event: dict[str, Any]) -> RenderableType:
    """R12 (the deal winner), R13 (mordienne: the winner took exactly the last k ≥ 2 tricks)."""
    lines = []
    counts = Text(f"Deal {event['deal_number']} is over. Tricks won: ")
    counts.append_text(Text(", ").join(
        _short(model, s).append(f" {n}") for s, n in enumerate(event["trick_counts"])))
    lines.append(counts)
    winner = event["winner"]
    if winner is None:
        lines.append(Text("All nine tricks were spoiled: nobody scores (R12).", style="bold"))
    else:
        team = team_of(winner)
        t = Text("The deal goes to ", style="bold")
        t.append_text(who(model, winner))
        t.append(", so ").append_text(team_text(model, team))
        pts = event["points"][team]
        t.append(f" scores {pts} point{'s' if pts != 1 else ''}")
        if event["mordienne"]:
            t.append(" — MORDIENNE! ", style="bold magenta")
            t.append("They won the last tricks in a row and none before (R13).")
        else:
            t.append(" (R12).")
        lines.append(t)
    totals = Text("Match score: ")
    totals.append_text(team_text(model, 0)).append(f" {event['totals'][0]}  ·  ")
    totals.append_text(team_text(model, 1)).append(f" {event['totals'][1]}")
    lines.append(totals)
    return Group(*lines)


def match_result(model: TableModel, event: dict[str, Any]) -> Text:
    """R14: more points wins; equal totals are a draw."""
    p = event["points"]
    t = Text(f"═══ Match over: {p[0]} to {p[1]}. ", style="bold")
    result = event["result"]
    if result == "draw":
        t.append("It is a draw.", style="bold")
    else:
        team = 0 if result == "team0" else 1
        t.append_text(team_text(model, team)).append(" wins", style="bold green")
        if model.seat is not None:
            t.append(" — you win!" if team_of(model.seat) == team else " — you lose.",
                     style="bold")
    t.append(" ═══", style="bold")
    return t


HELP = """\
Lobby
  tables                     list the tables (yours are marked)
  create [OPTION=VALUE ...]  create a table, sit at seat 0 (see `help create`)
  join TABLE [SEAT] [CODE]   sit at a table (any free seat if SEAT is left out)
  watch TABLE [CODE]         watch a table as a spectator
  bot SEAT [LEVEL]           seat a bot (levels: random, easy, normal, expert)
  bots [LEVEL]               fill every empty seat with bots
  unbot SEAT                 remove a bot
  start                      start the match (creator only)
  table [TABLE]              show a table, or switch to another one you are at
  leave                      leave the current table (a bot plays your seat)
  record [FILE]              save the match record (R17) once the match is over
Game
  3o   or   1..9             play a card by its code (R2) or its number in hand
  chanter yes|no             vote on chanter (R9)
  discard C1 C2 C3 C4 C5 C6  discard six cards after the talon (R9)
  signal NAME [N]            signal your partner (R15); `signal` lists them
  show                       draw the table again
  help strength | help signals | help create
  quit                       leave the program (your seat is kept for a while)
A table can be named by the start of its id (e.g. `join t3f`)."""

HELP_CREATE = """\
create [OPTION=VALUE ...] [private] [name=TEXT]
  deals=5            number of deals (R14)
  target=N           play until a team has N points instead (R14a)
  mordienne=on|off   a late run of tricks scores 2 (R13)
  chanter=on|off     the chanter vote and talon (R9)
  draw=on|off        the partner draw (R7)
  dealer=random|0-3  the first dealer (R6)
  signals=off|private|risky  partner signals (R16); risk=0.25 for risky
  delay=600          bots pause this many ms before playing
  timer=SECONDS      a bot plays for a seat that takes longer
  grace=120          seconds a dropped player keeps the seat
  level=normal       level of the bots that fill in (random/easy/normal/expert)
  autostart          start as soon as four are seated
  private            only players with the join code can sit or watch
Example: create deals=3 chanter=on signals=risky name=Friday"""
