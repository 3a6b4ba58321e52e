"""Everything the terminal shows, as rich renderables built from :class:`Text` only.

Safety rule: every string that came from the network (player and table names, error
messages, table ids) goes through :func:`safe`, which applies ``protocol.clean_text`` (no
control characters, no escape sequences, no bidi tricks) and returns a rich ``Text``, never
markup, so a name such as ``[bold]x`` is printed as those characters. Nothing in this module
ever passes server text to ``console.print`` as a markup string.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.columns import Columns
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

import locales
import protocol
from protocol import (
    CardPlayed,
    ChanterDiscarded,
    ChanterResult,
    ChanterVoted,
    ChatHistory,
    ChatMessage,
    DealsCommitted,
    DealScored,
    DealStarted,
    EventPayload,
    HandDealt,
    MatchOver,
    PartnerDraw,
    PlayerConnected,
    PlayerDisconnected,
    RematchAccepted,
    SeatInfo,
    SignalInfo,
    SignalReceived,
    TableChanged,
    TableInfo,
    TableOptions,
    TableView,
    TalonDealt,
    TrickDone,
    TurnTimedOut,
)
from protocol.results import SeatRef
from protocol.vocab import SIGNAL_CARD, Phase
from server.game.cards import MAJEURES, STRENGTH, card_name, sort_by_strength
from server.game.seats import partner_of, team_of

from .explain import DealFacts, deal_facts
from .i18n import card_words, tr, tr_text
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
    **{signal: f"I hold {card_name(card)} ({card})" for signal, card in SIGNAL_CARD.items()},
    "aces": "I hold N aces (signal aces N, N = 1..4)",
    "useless_hand": "my hand is worthless",
    "going_mordienne": "I am going for mordienne",
}

#: Server error codes the client puts in plain words (docs/PROTOCOL.md, "Error codes"): the
#: sentences are the catalogues' ``cli.error.<code>`` (English here, for reference).
ERROR_SENTENCES: dict[str, str] = {
    code: locales.text("en", f"cli.error.{code}") for code in (
        "not_your_turn", "card_not_in_hand", "wrong_phase", "match_over", "signals_off",
        "bad_discard", "unknown_card", "no_such_table", "bad_code", "seat_taken",
        "table_full", "not_seated", "not_at_table", "not_creator", "not_ready",
        "too_many_tables", "too_many_reviews", "hints_off", "too_many_spectators",
        "rate_limited", "storage_unavailable", "internal_error", "shutting_down",
        "server_busy", "conflict", "bad_token", "invalid_field", "unknown_type",
        "too_many_marks", "name_taken", "name_refused", "bad_credentials",
        "login_throttled", "already_registered", "not_registered", "no_such_player",
        "being_matched")}


def safe(value: object, limit: int = 200) -> Text:
    """Network text → harmless rich Text: cleaned (protocol.clean_text), length-capped."""
    return Text(protocol.clean_text(str(value))[:limit])


def error_text(code: str, message: str = "", card: str | None = None) -> Text:
    """An ``error`` reply as a sentence; unknown codes are shown like internal_error."""
    sentence = tr(f"cli.error.{code}") if code in ERROR_SENTENCES else None
    out = Text("✗ ", style="bold red")
    if code == "card_not_in_hand" and card:
        out.append(tr("cli.error.card_not_in_hand.card", card=card, name=card_words(card)))
    elif code in ("invalid_field", "name_refused"):
        out.append(f"{sentence}: ")
        out.append_text(safe(message))
    elif sentence is None:
        out.append(tr("cli.error.refused") + " ")
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
        out.append(f" {card_words(code)}")
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


def plural(n: int, word: str, words: str | None = None) -> str:
    """``1 deal``, ``2 deals``: every count the client prints goes through here."""
    return f"{n} {word if n == 1 else (words or word + 's')}"


def duration(seconds: float) -> str:
    """``1 second``, ``45 seconds``, ``2 minutes``, ``1 minute 30 seconds``."""
    s = max(0, round(seconds))
    if s < 60:
        return tr("cli.seconds.n", n=s)
    minutes, rest = divmod(s, 60)
    return tr("cli.minutes.n", n=minutes) + (f" {tr('cli.seconds.n', n=rest)}" if rest else "")


def _name_is_shared(model: TableModel, seat: int) -> bool:
    """Two seats with one name (two Anas at a table) need their seat numbers to tell apart."""
    name = model.seat_name(seat)
    return name is not None and any(
        model.seat_name(s) == name for s in range(4) if s != seat)


def who(model: TableModel, seat: int | None) -> Text:
    """``you``, ``your partner Cy``, ``Bo``: names, not seat numbers (issue 14, item 13).

    The seat number is added only where the name alone does not say who it is (no name
    known yet, or two players with one name).
    """
    if seat is None:
        return Text(tr("cli.nobody"))
    if model.seat is not None and seat == model.seat:
        out = Text()
        out.append(tr("cli.you"), style="bold")
        return out
    if model.seat is not None and seat == partner_of(model.seat):
        return tr_text("cli.your_partner", name=_short(model, seat))
    return _short(model, seat)


def _short(model: TableModel, seat: int) -> Text:
    """The shortest unambiguous way to name a seat: ``you``, ``Bo``, ``Ana (seat 2)``."""
    if model.seat == seat:
        return Text(tr("cli.you"), style="bold")
    name = model.seat_name(seat)
    if not name:
        return Text(tr("cli.seat", seat=seat))
    out = safe(name, 32)
    if _name_is_shared(model, seat):
        out.append(" " + tr("cli.seat.shared", seat=seat))
    return out


def does(model: TableModel, seat: int | None, you_form: str, other_form: str) -> Text:
    """``you lead again`` / ``Bo leads again``: the verb agrees with its subject."""
    out = who(model, seat)
    out.append(" " + (you_form if model.seat is not None and seat == model.seat
                      else other_form))
    return out


def team_label(model: TableModel, team: int) -> str:
    """``your team`` / ``their team`` for a player; spectators get the partners' names."""
    if model.seat is not None:
        return tr("cli.team.yours") if team_of(model.seat) == team else tr("cli.team.theirs")
    a, b = (0, 2) if team == 0 else (1, 3)
    return f"{_short(model, a).plain} & {_short(model, b).plain}"


def team_text(model: TableModel, team: int) -> Text:
    """``your team (you & Cy)``, ``their team (Bo & Di)``; for spectators ``Ana & Cy``."""
    a, b = (0, 2) if team == 0 else (1, 3)
    members = _short(model, a).append(" & ").append_text(_short(model, b))
    if model.seat is None:
        return members
    return Text(team_label(model, team) + " (").append_text(members).append(")")


# --------------------------------------------------------------------------- lobby

#: Table statuses that are still going on (issue 14, item 10: the others are clutter).
LIVE = ("waiting", "playing")


def lobby_order(tables: list[TableInfo], seats: list[SeatRef],
                show_all: bool = False) -> tuple[list[TableInfo], int]:
    """Which tables ``tables`` shows, in what order, and how many it hides.

    Yours first, then tables waiting for players, then matches being played; finished and
    abandoned tables (yours too: `tables all` and `record` still reach them), and waiting
    tables nobody sits at (left by `leave`: their creator is gone, so nobody can start
    them), are hidden unless ``show_all``.
    """
    mine = {s.table for s in seats}

    def useful(info: TableInfo) -> bool:
        if info.status not in LIVE:
            return False
        if info.status == "waiting" and info.table not in mine:
            return any(s.kind == "human" for s in info.seats)
        return True

    def rank(info: TableInfo) -> int:
        if not useful(info):
            return 3
        if info.table in mine:
            return 0
        return {"waiting": 1, "playing": 2}.get(info.status, 3)

    shown = [t for t in tables if show_all or useful(t)]
    shown.sort(key=rank)                     # stable: the server's order within a rank
    return shown, len(tables) - len(shown)


def tables_table(tables: list[TableInfo], seats: list[SeatRef],
                 show_all: bool = False) -> RenderableType:
    """The lobby, two short lines per table so it reads well in 80 columns."""
    shown, hidden = lobby_order(tables, seats, show_all)
    lines: list[RenderableType] = []
    if not shown:
        lines.append(note(tr("cli.lobby.none")))
    else:
        lines.append(Text(tr("cli.lobby.title"), style="bold"))
    mine = {s.table: s.seat for s in seats}
    for info in shown:
        opts = info.options
        head = Text("  ")
        tid = safe(info.table, 64)
        tid.stylize("bold")
        head.append_text(tid)
        head.append("  «").append_text(safe(info.name, 32)).append("»  ")
        known = info.status in (*LIVE, "finished", "abandoned")
        head.append_text(Text(tr(f"cli.status.{info.status}")) if known
                         else safe(info.status, 12))
        target = opts.target_points
        deals = (tr("cli.lobby.to", points=tr("cli.points.n", n=target)) if target
                 else tr("cli.deals.n", n=opts.deals))
        flags = [deals]
        if opts.rated:                                 # issue 27
            flags.append("RATED")
        if opts.chanter:
            flags.append(tr("cli.lobby.chanter"))
        if opts.partner_draw:
            flags.append(tr("cli.lobby.partner_draw"))
        flags.append(tr("cli.lobby.signals", mode=opts.signals))
        if info.private:
            flags.append(tr("cli.lobby.private"))
        if info.spectators:
            flags.append(tr("cli.lobby.watching", n=info.spectators))
        head.append("  · " + ", ".join(flags))
        if info.table in mine:
            head.append("  " + tr("cli.lobby.you", seat=mine[info.table]), style="green")
        lines.append(head)
        seat_line = Text("      " + tr("cli.lobby.seats") + " ")
        for i, s in enumerate(info.seats):
            if i:
                seat_line.append(" · ")
            seat_line.append(f"{i} ")           # seat numbers: `join TABLE SEAT` needs them
            if s.kind == "empty":
                seat_line.append(tr("cli.lobby.empty"), style="dim")
            elif s.kind == "bot":
                seat_line.append(tr("cli.lobby.bot", level=s.level or "").strip(),
                                 style="magenta")
            else:
                seat_line.append_text(safe(s.name or "?", 32))
                if s.bot:        # a client that says it is a program (1.5)
                    seat_line.append(" [bot]", style="magenta")
        lines.append(seat_line)
    if hidden:
        finished = sum(1 for t in tables if t not in shown and t.status not in LIVE)
        parts = []
        if finished:
            parts.append(tr("cli.lobby.finished_n", n=finished))
        if hidden - finished:
            parts.append(tr("cli.lobby.empty_n", n=hidden - finished))
        lines.append(note(tr("cli.lobby.hidden", n=hidden, tables=tr("fair.and").join(parts)),
                          style="dim"))
    return Group(*lines)


def seats_lines(model: TableModel) -> Text:
    """The four seats of a table before the match (who sits where).

    Seat numbers stay here: `bot SEAT`, `unbot SEAT` and `join TABLE SEAT` need them.
    """
    out = Text()
    for i, s in enumerate(model.info.seats if model.info else []):
        if model.seat is not None:
            out.append(tr("cli.seats.team", seat=i, team=team_label(model, team_of(i))))
        else:
            out.append(tr("cli.seats.partner", seat=i, partner=partner_of(i)))
        if s.kind == "empty":
            out.append(tr("cli.lobby.empty"), style="dim")
        elif s.kind == "bot":
            out.append_text(tr_text("cli.seats.bot", level=safe(s.level or "?", 10)))
        else:
            out.append_text(safe(s.name or "?", 32))
            if s.bot:            # a client that says it is a program (1.5)
                out.append(" [bot]", style="magenta")
            if i == model.seat:
                out.append(tr("cli.seats.you"), style="bold")
            if not s.connected:
                out.append(tr("cli.seat.disconnected"), style="dim")
        out.append("\n")
    out.rstrip()
    return out


# --------------------------------------------------------------------------- game screen

#: Below this many rows or columns the game screen is drawn compact (issue 14, item 12).
COMPACT_ROWS = 24
COMPACT_COLUMNS = 70


def wants_compact(width: int, height: int) -> bool:
    return height < COMPACT_ROWS or width < COMPACT_COLUMNS


def _header(model: TableModel, v: TableView, compact: bool) -> Text:
    head = Text(tr("cli.table") + " ", style="bold")
    head.append_text(safe(model.table, 64))
    if not compact and model.info and model.info.name:
        head.append(" «").append_text(safe(model.info.name, 32)).append("»")
    head.append(" · ").append_text(tr_text(
        "cli.head.deal", n=v.deal_number,
        length=_length(v.options, tr("cli.length.to"), tr("cli.length.of")),
        name=_short(model, v.dealer) if compact else who(model, v.dealer)))
    if model.info is not None and model.info.options.hints:   # issue 28: marked
        head.append(tr("cli.head.hints"), style="dim")
    elif model.info is not None and model.info.options.rated:  # issue 27
        head.append(tr("cli.head.rated"), style="bold magenta")
    if model.spectator:
        head.append(tr("cli.head.watching" if compact else "cli.head.watching.you"),
                    style="dim")
    return head


def _length(opts: TableOptions, to: str, of: str) -> str:
    """How long the match is (R14, R14a): ``to 5 points`` or ``of 5``."""
    target = opts.target_points
    return (f"{to} {tr('cli.points.n', n=target)}" if target
            else f"{of} {opts.deals}")


def _to_act_mark(v: TableView) -> str:
    phase = v.phase if v.phase in ("chanter_vote", "chanter_discard") else "play"
    return f"◀ {tr(f'acting.{phase}')}"


def game_screen(model: TableModel, compact: bool = False) -> RenderableType:
    """The table as one block: header, seats, the trick on the table, your hand, whose turn.

    The essentials (the trick, your hand, whose turn) come last, next to the prompt.
    ``compact`` (a small terminal) draws the same in about ten lines of 60 columns.
    """
    v = model.view
    if v is None:
        head = Text(tr("cli.table") + " ")
        head.append_text(safe(model.table, 64))
        head.append(tr("cli.head.waiting") + "\n")
        return Group(head, seats_lines(model))
    parts: list[RenderableType] = [_header(model, v, compact)]
    seats_info = model.info.seats if model.info else []
    if compact:
        tricks = Text(tr("cli.tricks.compact"))
        for seat in range(4):
            if seat:
                tricks.append(", ")
            tricks.append_text(_short(model, seat)).append(f" {v.trick_counts[seat]}")
            if seat == v.to_act:
                tricks.append(" " + _to_act_mark(v), style="bold yellow")
        parts.append(tricks)
        parts.append(Text(tr("cli.points.compact", team0=team_label(model, 0), p0=v.points[0],
                             team1=team_label(model, 1), p1=v.points[1])))
    else:
        grid = Table(box=None, header_style="bold", pad_edge=False)
        for col in ("player", "team", "tricks", "cards"):
            grid.add_column(tr(f"cli.col.{col}"),
                            justify="left" if col in ("player", "team") else "right")
        for seat in range(4):
            name = who(model, seat)
            if seat == v.to_act:
                name.append("  " + _to_act_mark(v), style="bold yellow")
            info_seat = seats_info[seat] if seat < len(seats_info) else SeatInfo()
            if info_seat.kind == "bot" or info_seat.bot:
                name.append(" [bot]", style="magenta")
            if info_seat.kind == "human" and not info_seat.connected:
                name.append(tr("cli.seat.bot_plays" if info_seat.level
                               else "cli.seat.disconnected"), style="dim")
            team = ((tr("cli.col.yours") if team_of(seat) == team_of(model.seat)
                     else tr("cli.col.theirs"))
                    if model.seat is not None
                    else tr("cli.col.with", name=_short(model, partner_of(seat)).plain))
            grid.add_row(name, team, str(v.trick_counts[seat]), str(v.hand_sizes[seat]))
        parts.append(grid)
        parts.append(tr_text("cli.points", team0=team_text(model, 0), p0=v.points[0],
                             team1=team_text(model, 1), p1=v.points[1]))

    if v.phase in (Phase.CHANTER_VOTE, Phase.CHANTER_DISCARD):
        votes = Text(tr("cli.chanter.votes"))
        votes.append_text(Text(", ").join(
            _short(model, s).append(" " + tr("cli.yes" if vote else "cli.no"))
            for s, vote in enumerate(v.chanter_votes) if vote is not None)
            or Text(tr("cli.chanter.none_yet")))
        parts.append(votes)
    if v.signals:
        sig = Text(tr("cli.signals.received"))
        sig.append_text(Text("; ").join(signal_text(model, s) for s in v.signals))
        parts.append(sig)
    if v.phase == Phase.PLAY:
        if v.tricks:
            last = v.tricks[-1]
            prev = tr_text("cli.trick.last", "dim", n=len(v.tricks),
                           cards=trick_cards(model, last.leader, last.cards,
                                             with_name=not compact),
                           winner=_short(model, last.winner) if last.winner is not None
                           else Text(tr("cli.spoiled")))
            parts.append(prev)
        trick = tr_text("cli.trick.now", n=len(v.tricks) + 1, name=_short(model, v.leader))
        trick.append(" ")
        if not v.trick:
            trick.append(tr("cli.trick.no_card"), style="dim")
        for i, (seat, card) in enumerate(v.trick):
            if i:
                trick.append(", ")
            trick.append_text(_short(model, seat)).append(" ").append_text(
                card_text(card, with_name=not compact))
        parts.append(trick)
    if not model.spectator:
        parts.append(hand_line(v.hand) if compact else hand_table(v.hand))
    parts.append(turn_hint(model, compact))
    return Group(*parts)


def trick_cards(model: TableModel, leader: int, cards: list[str],
                with_name: bool = True) -> Text:
    out = Text()
    for i, card in enumerate(cards):
        if i:
            out.append(", ")
        out.append_text(_short(model, (leader + i) % 4)).append(" ").append_text(
            card_text(card, with_name=with_name))
    return out


def hand_table(hand: list[str]) -> RenderableType:
    """Your hand strongest first (R3), numbered: type the number or the code to play."""
    if not hand:
        return Text(tr("cli.hand.empty"))
    table = Table(box=None, title=tr("cli.hand.title"), title_justify="left",
                  show_header=False, pad_edge=False)
    table.add_column(justify="right")
    table.add_column()
    table.add_column(justify="right", style="dim")
    for i, code in enumerate(sort_by_strength(hand), 1):
        table.add_row(f"{i:>2}", card_text(code), tr("cli.strength", n=STRENGTH[code]))
    return table


def hand_line(hand: list[str]) -> RenderableType:
    """The compact hand: ``Hand:  1 3o◆  2 9c♥ …``, numbered strongest first like the table,
    in columns so a number never wraps away from its card."""
    if not hand:
        return Text(tr("cli.hand.compact.empty"))
    cells = [Text(tr("cli.hand.compact"))]
    for i, code in enumerate(sort_by_strength(hand), 1):
        symbol, colour = SUIT_STYLE.get(code[1:2], ("?", "white"))
        cell = Text(f"{i} ")
        cell.append(code, style=f"bold {colour}" if code in MAJEURES else colour)
        cell.append(symbol, style=colour)
        cells.append(cell)
    return Columns(cells, padding=(0, 2))


def turn_hint(model: TableModel, compact: bool = False) -> Text:
    v = model.view
    if v is None:
        return Text()
    phase = v.phase
    if phase == "match_over":
        return Text(tr("cli.turn.over"), style="bold")
    if model.my_turn:
        if phase in ("chanter_vote", "chanter_discard"):
            return Text(tr(f"cli.turn.{phase}"), style="bold yellow")
        return Text(tr("cli.turn.play.compact" if compact else "cli.turn.play"),
                    style="bold yellow")
    if v.to_act is None:
        return Text()
    waiting = phase if phase in ("chanter_vote", "chanter_discard") else "play"
    return tr_text(f"cli.waiting.{waiting}", name=who(model, v.to_act))


def signal_words(signal: str, n: int | None) -> str:
    """What a signal says (R15), in the catalogues' words (the browser's too)."""
    if signal == "aces":
        return tr("signal.aces", n=n or 0)
    if signal in SIGNAL_MEANINGS:
        return tr(f"signal.{signal}")
    return tr("signal.unknown", id=protocol.clean_text(signal)[:32])


def signal_text(model: TableModel, sig: SignalInfo | SignalReceived) -> Text:
    meaning = signal_words(sig.signal, sig.n)
    out = who(model, sig.from_seat)
    out.append(": “").append(meaning).append("”")
    return out


# --------------------------------------------------------------------------- events


def grace_of(model: TableModel) -> int:
    """The table's grace period (option grace_s): how long a dropped seat is kept."""
    opts = model.info.options if model.info else model.view.options if model.view else None
    return opts.grace_s if opts is not None else TableOptions().grace_s


def _seat_info(info: TableInfo | None, seat: int) -> SeatInfo:
    seats = info.seats if info else []
    return seats[seat] if 0 <= seat < len(seats) else SeatInfo()


def _taken_over(s: SeatInfo) -> bool:
    """A human's seat played by a bot after the grace period: the server's SeatInfo says
    ``kind: human``, ``connected: false`` and a bot ``level`` (docs/PROTOCOL.md)."""
    return s.kind == "human" and not s.connected and bool(s.level)


def event_lines(model: TableModel, event: EventPayload,
                before: TableInfo | None = None) -> list[RenderableType]:
    """What to print for one event (applied already; ``before`` is the lobby info before it)."""
    v = model.view
    out: list[RenderableType] = []
    match event:
        case TableChanged(table=info):
            out += _seat_changes(model, before, info)
        case PlayerDisconnected(seat=seat):
            if model.status == "playing":
                t = tr_text("cli.lost.grace", name=who(model, seat),
                            duration=duration(grace_of(model)))
            else:
                t = tr_text("cli.lost", name=who(model, seat))
            t.stylize("dim")
            out.append(t)
        case PlayerConnected(seat=seat):
            # How the seat was before this event (the model shows the return at once): only
            # a real return is news.
            was = _seat_info(before or model.info, seat)
            if was.kind == "human" and not was.connected:
                if seat == model.seat:
                    if _taken_over(was):
                        out.append(Text(tr("cli.back.you"), style="green"))
                else:
                    t = tr_text("cli.back.bot" if _taken_over(was) else "cli.back",
                                name=who(model, seat))
                    t.stylize("green")
                    out.append(t)
        case PartnerDraw():
            out.append(_partner_draw(model, event))
        case DealStarted(deal_number=number, dealer=dealer) if v is not None:
            if number == 1:
                out.append(Text(tr("cli.match.starts"), style="bold green"))
            target = v.options.target_points
            total = (tr("cli.deal.play_to", points=tr("cli.points.n", n=target)) if target
                     else tr("cli.deal.of", n=v.options.deals))
            out.append(tr_text("cli.deal.started", "bold", n=number, total=total,
                               dealer=who(model, dealer), lead=who(model, (dealer + 1) % 4)))
        case HandDealt(seat=seat, cards=cards) if v is not None and seat == model.seat:
            out.append(tr_text("cli.dealt", cards=Text(", ").join(
                card_text(c) for c in sort_by_strength(cards))))
        case ChanterVoted(seat=seat, vote=vote):
            you = model.seat is not None and seat == model.seat
            out.append(tr_text(f"cli.chanter.{'yes' if vote else 'no'}{'.you' if you else ''}",
                               name=who(model, seat)))
        case ChanterResult(accepted=accepted):
            out.append(Text(tr("cli.chanter.accepted" if accepted else "cli.chanter.refused"),
                            style="cyan"))
        case TalonDealt(seat=seat, cards=cards) if seat == model.seat:
            out.append(tr_text("cli.talon", cards=Text(", ").join(card_text(c)
                                                                  for c in cards)))
        case ChanterDiscarded(seat=seat):
            out.append(tr_text("cli.discarded", name=who(model, seat)))
        case CardPlayed(seat=seat, card=card):
            you = model.seat is not None and seat == model.seat
            out.append(tr_text("cli.plays.you" if you else "cli.plays", name=who(model, seat),
                               card=card_text(card)))
        case TurnTimedOut(seat=seat):     # the bot's move for the seat follows (protocol 1.5)
            if model.seat is not None and seat == model.seat:
                out.append(Text(tr("timer.played.you"), style="bold yellow"))
            else:
                out.append(tr_text("timer.played", "yellow", name=who(model, seat)))
        case TrickDone():
            out.append(trick_result(model, event))
        case DealScored():
            out.append(deal_result(model, event))
        case MatchOver():
            out.append(match_result(model, event))
            if model.fair_note is not None and model.fair_note_of == "match_over":
                out.append(fair_text(model.fair_note))
            if before is not None and model.info is not None:
                out += _status_change(before, model.info)   # the table is finished
        case DealsCommitted():
            if model.fair_note is not None and model.fair_note_of == "deals_committed":
                out.append(fair_text(model.fair_note))
        case RematchAccepted(seat=seat):
            out.append(rematch_text(model, seat))
        case ChatMessage():
            out.append(chat_line(model, event))
        case ChatHistory():
            n = len(model.chat)
            if n:
                out.append(note(tr("cli.chat.earlier", n=n)))
            if model.muted:
                out.append(note(tr("cli.chat.muting", n=len(model.muted))))
        case SignalReceived(from_seat=sender):
            t = tr_text("cli.signal.from", "magenta", signal=signal_text(model, event))
            if model.seat is not None and sender != partner_of(model.seat):
                t.append(" " + tr("cli.signal.noticed"), style="dim")
            out.append(t)
        case _:
            pass
    return out


def fair_text(note: tuple[bool, str]) -> Text:
    """R8a's check, as the client found it: quiet when all is well, loud when not."""
    ok, words = note
    if ok:
        return Text(words, style="dim green")
    return Text("⚠ " + words, style="bold red")


def rematch_text(model: TableModel, seat: int) -> Text:
    """Who asked for a rematch, and whom it waits for (bots always agree)."""
    agreed = set(model.info.rematch if model.info else []) | {seat}
    seats = model.info.seats if model.info else []
    waiting = [s for s, si in enumerate(seats) if si.kind == "human" and s not in agreed]
    names = [_short(model, s) for s in waiting if s != model.seat]
    if seat == model.seat:
        t = Text(tr("cli.rematch.you"))
    elif model.seat is not None and model.seat not in agreed:
        return tr_text("cli.rematch.asks", "bold", name=who(model, seat))
    else:
        t = tr_text("cli.rematch.too", name=_short(model, seat))
    if names:
        listed = Text(", ").join(names[:-1])
        if len(names) > 1:
            listed.append(tr("fair.and"))
        listed.append_text(names[-1])
        t.append_text(tr_text("cli.rematch.waiting", names=listed))
    else:
        t.append(".")
    return t


def chat_line(model: TableModel, event: ChatMessage) -> Text:
    """A chat message, set apart from the game's lines by its mark and colour; its text
    and name are network text, cleaned (``safe``)."""
    t = Text("[chat] ", style="bold magenta")
    seat = event.from_seat
    # Our own sender id (from a chat_history) says it best: a seat's earlier line may be
    # someone else's; without it, our seat's lines are ours.
    if model.my_sender:
        mine = event.sender == model.my_sender
    else:
        mine = seat is not None and seat == model.seat
    if mine:
        t.append(tr("cli.you"), style="bold")
    else:
        t.append_text(safe(event.name or "?", 32))
        if seat is None:
            t.append(tr("cli.chat.watching"), style="dim")
    t.append(": ")
    t.append_text(safe(event.text or "", protocol.MAX_CHAT_LEN))
    t.stylize("magenta", 7)
    return t


def chat_history(model: TableModel, last: int = 20) -> RenderableType:
    """`chat` alone: the table's latest messages, apart from the game."""
    if not model.chat:
        return note(tr("cli.chat.none"))
    return Group(Text(tr("cli.chat.title", table=protocol.clean_text(model.table),
                         n=min(last, len(model.chat))), style="bold"),
                 *(chat_line(model, e) for e in model.chat[-last:]))


def _partner_draw(model: TableModel, event: PartnerDraw) -> Text:
    """R7: who drew which card, then who partners whom (by name: the seats just moved)."""
    seating = event.seating

    def drawer(old: int) -> Text:
        if model.seat is not None and 0 <= old < len(seating) and seating[old] == model.seat:
            return Text(tr("cli.you"), style="bold")
        name = model.seat_name(old)        # the lobby info still has the old seating
        return safe(name, 32) if name else Text(tr("cli.seat", seat=old))

    t = Text(tr("cli.draw.title"))
    t.append_text(Text(", ").join(
        drawer(s).append(" ").append_text(card_text(c)) for s, c in event.cards))
    if model.seat is not None:
        partner_old = next((s for s in range(4) if s < len(seating)
                            and seating[s] == partner_of(model.seat)), None)
        if partner_old is not None:
            t.append_text(tr_text("cli.draw.partner", name=drawer(partner_old)))
        t.append(tr("cli.draw.seat", seat=model.seat))
    return t


def _seat_changes(model: TableModel, before: TableInfo | None,
                  after: TableInfo) -> list[RenderableType]:
    out: list[RenderableType] = []
    if before is None:
        return out
    for i, (a, b) in enumerate(zip(before.seats, after.seats, strict=False)):
        if not _taken_over(a) and _taken_over(b):
            # Issue 14, item 8: the grace period ran out.
            name = safe(b.name or tr("cli.seat", seat=i), 32)
            if i == model.seat:
                t = Text(tr("cli.takeover.you"), style="yellow")
            else:
                t = tr_text("cli.takeover", "yellow", name=name)
            out.append(t)
            continue
        if (a.kind, a.name) == (b.kind, b.name):
            continue
        if a.kind == "human" and b.kind == "bot" and before.status == "playing":
            out.append(tr_text("cli.left.bot", name=safe(a.name or tr("cli.seat", seat=i), 32),
                               level=safe(b.level or "", 10)))
            continue
        if b.kind == "empty":
            t = tr_text("cli.seat.now_empty", seat=i)
        elif b.kind == "bot":
            t = tr_text("cli.seat.bot", seat=i, level=safe(b.level or "", 10))
        else:
            t = tr_text("cli.seat.sits", seat=i, name=safe(b.name or "?", 32))
        out.append(t)
    return out + _status_change(before, after)


def _status_change(before: TableInfo, after: TableInfo) -> list[RenderableType]:
    if before.status == after.status:
        return []
    if after.status == "finished":
        return [Text(tr("cli.table.finished"), style="dim")]
    if after.status == "abandoned":
        return [Text(tr("cli.table.abandoned"), style="dim")]
    return []


def trick_result(model: TableModel, event: TrickDone) -> Text:
    """R11: a unique strongest card wins; a tie for the top spoils the trick."""
    t = Text(tr("cli.trick.n", n=event.number) + " ", style="bold")
    t.append_text(trick_cards(model, event.leader, event.cards))
    winner = event.winner
    if winner is None:
        top = max(STRENGTH[c] for c in event.cards)
        tied = [c for c in event.cards if STRENGTH[c] == top]
        t.append(f" — {tr('cli.trick.spoiled')} ", style="bold red")
        you = model.seat is not None and event.leader == model.seat
        t.append_text(tr_text("cli.trick.tie.you" if you else "cli.trick.tie",
                              cards=tr("fair.and").join(tied), name=who(model, event.leader)))
    else:
        best = event.cards[(winner - event.leader) % 4]
        t.append(f" — {tr('cli.trick.won_by')} ", style="bold green").append_text(
            tr_text("cli.trick.won", name=who(model, winner), card=card_text(best)))
    return t


def _number(n: int) -> str:
    """A count of tricks in words (``two``), as R12's tie is told."""
    return tr(f"cli.number.{n}") if 0 <= n < 10 else str(n)


def _facts(model: TableModel, event: DealScored,
           winners: Sequence[int | None] | None = None) -> DealFacts:
    """The deal's reasons, from its nine tricks' winners (``winners``, else the view's when
    the client saw them)."""
    if winners is None:
        winners = [t.winner for t in model.view.tricks] if model.view else []
    return deal_facts(event, list(winners) if len(winners) == 9 else None)


def deal_reason(model: TableModel, event: DealScored,
                winners: Sequence[int | None] | None = None) -> str:
    """Why the deal went where it did, in words (R12, R13, R13a).

    Uses the deal's nine tricks from the view when the client saw them (to say at which
    trick a tie was broken); without them it still says who reached the count first.
    """
    facts = _facts(model, event, winners)
    winner = facts.winner
    assert winner is not None          # a deal nobody won has no reason to give
    top = facts.most
    subject = _short(model, winner).plain
    if top == 9:
        why = tr("cli.reason.all")
        if facts.mordienne == "all":
            why += tr("cli.reason.sweep")
        return why
    if facts.tied:
        others = tr("fair.and").join(_short(model, s).plain for s in facts.tied)
        at = facts.reached_at[winner] if facts.reached_at else None
        reached = tr("cli.reason.reached", n=at) if at else ""
        why = tr("cli.reason.tied", tricks=tr("cli.tricks.n", n=top), others=others,
                 name=subject, count=_number(top), reached=reached)
    else:
        why = tr("cli.reason.most", n=top)
    if facts.mordienne == "run":
        why += tr("cli.reason.run", n=top)
    return why


def deal_result(model: TableModel, event: DealScored,
                winners: Sequence[int | None] | None = None) -> RenderableType:
    """R12 (the deal winner), R13 (mordienne: the winner took exactly the last k ≥ 2 tricks),
    R13a (a clean sweep is a mordienne); R11 spoiled tricks count for nobody."""
    facts = _facts(model, event, winners)
    lines: list[RenderableType] = []
    counts = tr_text("cli.deal.over", n=event.deal_number, list=Text(", ").join(
        _short(model, s).append(f" {n}") for s, n in enumerate(event.trick_counts)))
    if facts.spoiled:
        counts.append(tr("cli.deal.spoiled", tricks=tr("cli.tricks.n", n=facts.spoiled)))
    counts.append(".")
    lines.append(counts)
    winner = facts.winner
    if winner is None or facts.team is None:
        lines.append(Text(tr("cli.deal.all_spoiled"), style="bold"))
    else:
        team, pts = facts.team, facts.points
        if facts.mordienne is not None:
            m = Text(tr("cli.mordienne") + " ", style="bold magenta")
            you = ".you" if model.seat is not None and winner == model.seat else ""
            m.append_text(tr_text(f"cli.mordienne.{facts.mordienne}{you}",
                                  name=who(model, winner), n=facts.most))
            m.append(tr("cli.mordienne.points", points=tr("cli.points.n", n=pts)))
            lines.append(m)
        # "your team scores", but for a spectator "Bo & Di score" (a plural subject).
        t = tr_text("cli.deal.goes" if model.seat is not None else "cli.deal.goes.watching",
                    style="bold", name=who(model, winner),
                    reason=deal_reason(model, event, winners), team=team_text(model, team),
                    points=tr("cli.points.n", n=pts))
        lines.append(t)
    totals = tr_text("cli.match.score", team0=team_text(model, 0), p0=event.totals[0],
                     team1=team_text(model, 1), p1=event.totals[1])
    lines.append(totals)
    return Group(*lines)


def match_result(model: TableModel, event: MatchOver) -> Text:
    """R14: more points wins; equal totals are a draw."""
    p = event.points
    t = tr_text("cli.match.over", "bold", team0=team_text(model, 0), p0=p[0],
                team1=team_text(model, 1), p1=p[1])
    t.append(" ")
    result = event.result
    if result == "draw":
        t.append(tr("cli.match.draw"), style="bold")
    else:
        team = 0 if result == "team0" else 1
        if model.seat is not None:
            t.append(tr("cli.match.win") if team_of(model.seat) == team
                     else tr("cli.match.lose"),
                     style="bold green" if team_of(model.seat) == team else "bold")
        else:
            t.append_text(tr_text("cli.match.team_wins", team=team_text(model, team)))
    t.append(" ═══", style="bold")
    return t


# --------------------------------------------------------------------------- help

def help_text(name: str) -> str:
    """A help page in the terminal's language: ``main``, ``create``, ``rules``,
    ``mordienne``, ``chanter``, ``signals``. The English pages below are the source; the
    catalogues' ``cli.help.*`` hold each language's (tests/client/test_cli_i18n.py keeps
    English's equal to these)."""
    return tr(f"cli.help.{name}")


HELP = """\
Lobby
  tables [all]               list the tables (yours first; `all` adds finished ones)
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
  replay [MATCH]             step through a finished match, every hand face up
  replay LINK | TABLE [MATCH] [CODE]  another table's finished match (a replay link)
  review [SEAT]              the expert's review of your (or SEAT's) decisions
  hint                       what would the expert play? (tables with hints=on)
  r | rematch                after a match: ask for (or accept) another one, same seats
Players
  play [rated|casual] [OPT=V] play now: be seated with players of your level (`help play`)
  cancel                     stop waiting for a game
  history [NAME]             finished matches (yours, or a registered player's); `history more`
  profile NAME               a registered player's rating, results, partners, recent matches
Account (no e-mail; the password is asked at a prompt that does not show it)
  register [NAME]            make this session an account: your name for good, a password;
                             your seats and matches stay yours
  login NAME                 speak for your account here (leave your tables first)
  logout [all]               end this device's session (`all`: every device's)
  passwd                     change your password (your other devices are logged out)
Chat
  say TEXT  or  'TEXT        say something: seated, to everyone; watching, to spectators
  chat                       the table's latest messages
  mute NAME | unmute NAME    hide (or show again) someone's messages (a name or seat;
                             `unmute all`: everyone you mute here)
Game
  3o   or   1..9             play a card by its code (R2) or its number in hand
  yes | no                   at the chanter prompt: vote on chanter (R9)
  C1 C2 C3 C4 C5 C6          at the discard prompt: discard six cards (R9)
  signal NAME [N]            signal your partner (R15); `signal` lists them
  show                       draw the table again
  help rules | help strength | help mordienne | help signals | help chanter | help create
  help play
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
  hints=on|off       a casual table: `hint` asks what the expert would play (never rated)
  rated=on|off       a rated table: four registered players' ratings change (issue 27)
  private            only players with the join code can sit or watch
Example: create deals=3 chanter=on signals=risky name=Friday"""

HELP_RULES = """\
The rules in short (the whole rule book: docs/RULES.md)
  Four players, two teams: partners sit opposite (R4, R5). 48 Spanish cards, 9 each;
  the other 12 stay face down (R1, R8).
  Cards have a fixed strength, suits never matter: `help strength` (R3). Monsieur (3o)
  beats everything; cards in one row are equal.
  Play any card you like: there is no duty to follow suit, to beat or to trump (R10).
  The strongest card takes the trick and its player leads the next. If two or more
  cards tie for the top, the trick is spoiled: nobody wins it and the same player leads
  again (R11). A deal is always nine tricks.
  After nine tricks, the player (not the team) with the most tricks wins the deal; if
  several have the most, the one who got to that number first wins. Their team scores
  1 point (R12). Partners' tricks are never added together.
  Mordienne: a winner who took the last tricks in a row (two or more) and none before
  scores 2 instead (R13); so does one who took all nine (R13a). `help mordienne`.
  A match is 5 deals (or to a target); the team with more points wins (R14).
  Partners may send each other signals about their hands (R15, R16): `help signals`.
  Some tables play the chanter, a swap with the hidden cards (R9): `help chanter`."""

HELP_MORDIENNE = """\
Mordienne (R13, R13a; table option mordienne, on by default)
  The deal winner (R12) scores 2 points instead of 1 when the tricks they won are
  exactly the last tricks of the deal, at least two, won in a row up to trick 9.
  - Won no trick early, then the last five in a row: mordienne.
  - Also won trick 2: no mordienne (an earlier trick breaks it).
  - Won tricks 6, 7 and 9 while trick 8 was spoiled: no mordienne (a spoiled trick
    inside the run breaks it; so does a spoiled last trick).
  - Won all nine tricks: mordienne too (R13a).
  Nothing is declared: the client announces it when the deal is scored. A signal,
  `signal going_mordienne`, tells your partner you are going for it."""

HELP_CHANTER = """\
Chanter (R9; table option chanter, off by default: `create chanter=on`)
  After the deal each player in turn, starting left of the dealer, votes whether to
  chanter: at the `chanter yes/no>` prompt type `yes` or `no`.
  Only if all four say yes: the 12 hidden cards (the talon) are dealt, six to the player
  left of the dealer and six to the dealer. Each of them then discards six cards face
  down, keeping nine: at the `discard 6 cards>` prompt type six codes or hand numbers,
  e.g. `10 11 12 13 14 15` (the six weakest). Nobody else sees the talon or the discards.
  If anyone says no, play starts with the hands as dealt."""

HELP_SIGNALS_INTRO = """\
Signals (R15, R16; table option signals: off, private (the default) or risky)
  In the old game partners pass secret grimaces about their hands. Here you send one of
  these signals at any time during a deal; only your partner sees it with `private`.
  With `risky`, each opponent may notice it too (option signal_risk, 0.25 by default)
  and you are not told who did. Spectators never see signals. Nothing checks that a
  signal is true: it is a gesture, not a proof."""
