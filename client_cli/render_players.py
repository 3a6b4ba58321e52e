"""Players in the terminal (issue 27): a history page, a profile, the play-now wait."""

from __future__ import annotations

import time

from rich.text import Text

from protocol.players import HistoryEntry, Rating
from protocol.results import HistoryResult, ProfileResult

from .render import safe

HELP_PLAY = """\
play [rated|casual] [OPTION=VALUE ...]
  Play now: wait for three other players asking for the same game (same options),
  of about your level; the teams are balanced. A casual game that waits too long is
  filled with bots of about your level; a rated game needs an account and never gets a
  bot. You are seated by yourself when the table is made; the match starts at once.
  `cancel` stops waiting. Options as for `create` (`help create`), e.g. play deals=3.
history [NAME] | history more   finished matches (yours, or a registered player's)
profile NAME                    a registered player's rating, results and partners"""


def rating_text(r: Rating | None) -> str:
    if r is None:
        return "unrated"
    return f"{r.display} (μ {r.mu:.1f}, σ {r.sigma:.1f})"


def entry_line(m: HistoryEntry) -> Text:
    """One finished match: when, the table, the result for the seat you had, who."""
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(m.finished_at))
    line = Text(f"{when}  ")
    line.append_text(safe(m.table, 16)).append(f" #{m.match}  ")
    pts = m.points
    if m.seat is not None:
        team = m.seat % 2
        mine, theirs = pts[team], pts[1 - team]
        won = m.result == f"team{team}"
        line.append("won " if won else ("draw " if m.result == "draw" else "lost "),
                    style="bold green" if won else "red")
        line.append(f"{mine}–{theirs}")
    else:
        line.append(f"{pts[0]}–{pts[1]}")
    if m.rated:
        line.append("  rated", style="bold magenta")
    names = []
    for p in m.players:
        name = safe(p.name, 32).plain + (" (bot)" if p.bot else "")
        if p.left:
            name += " (left)"
        if p.after is not None and p.before is not None:
            name += f" {p.before.display}→{p.after.display}"
        names.append(name)
    line.append("  " + ", ".join(names), style="dim")
    return line


def history_lines(result: HistoryResult, whose: str) -> list[Text]:
    matches = result.matches
    if not matches:
        return [Text(f"No finished match in {whose} history.", style="cyan")]
    out = [Text(f"Finished matches ({whose}), the most recent first:", style="bold")]
    out += [entry_line(m) for m in matches]
    out.append(Text("`record` needs the table: `watch TABLE` then `replay`; "
                    + ("`history more` for older ones." if result.next else
                       "that is all."), style="cyan"))
    return out


def profile_lines(p: ProfileResult) -> list[Text]:
    out = [Text.assemble(("Profile of ", "bold"), safe(p.name, 32))]
    out.append(Text(f"  rating   {rating_text(p.rating)}"))
    out.append(Text(f"  matches  {p.played} played, {p.won} won, {p.rated_played} rated"))
    ladder = ", ".join(f"{s.level} {s.display}" for s in p.ladder)
    out.append(Text(f"  bots     {ladder}", style="dim"))
    if p.partners:
        out.append(Text("  partners " + ", ".join(
            f"{safe(x.name, 32).plain} ({x.won}/{x.matches})" for x in p.partners)))
    if p.recent:
        out.append(Text("  recent:"))
        out += [Text("    ").append_text(entry_line(m)) for m in p.recent]
    return out


def waiting_line(rated: bool, since: float, now: float | None = None) -> Text:
    waited = int((now or time.monotonic()) - since)
    kind = "a rated" if rated else "a casual"
    return Text(f"… looking for players for {kind} game ({waited // 60}:{waited % 60:02d}); "
                "`cancel` stops waiting.", style="cyan")
