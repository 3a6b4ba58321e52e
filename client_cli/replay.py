"""A finished match, replayed trick by trick with every hand face up (issue 28, Build 1).

The record (R17) is replayed under the rules (R18) first, so every winner, count and score
shown is derived, never read from the file. One step is one deal as dealt (with its
chanter vote and exchange, R9, and the signals sent before the first card), then one step
per trick: the four cards, who won it or why it was spoiled (R11), the signals sent during
it and who received them (R15, R16), the hands left; after the ninth trick, the deal's
result explained as the table explains it (R12-R13a). Forwards and backwards, by trick
or by deal. With the expert's review of a seat (``aluette-record review``), the seat's
costly cards carry a mark (``?!``, ``?``, ``??``) and what the expert preferred.

Pure: :class:`Replay` takes typed-in commands and gives rich renderables; the terminal
client (``replay``) and ``aluette-record replay FILE`` drive it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict, cast

from rich.console import Group, RenderableType
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

import protocol
from protocol import DealScored, SeatInfo, TableInfo, TrickDone
from protocol.records import Record, RecordDeal
from server.game import STRENGTH, card_name, fair, rules, sort_by_strength
from server.game.errors import RecordError
from server.game.record import verify_record
from server.game.seats import left_of, partner_of

from . import render
from .i18n import tr, tr_text
from .model import TableModel

#: A review's cost marks, as chess players read them: (least points lost, mark).
MARKS = ((0.5, "??"), (0.25, "?"), (0.1, "?!"))

def keys_text() -> str:
    """The replay's keys, in the terminal's language."""
    return tr("cli.replay.keys")


#: How often the client asks again while a review is being made (seconds).
REVIEW_POLL_S = 1.5


# The parts of the ``review`` and ``hint`` results (docs/PROTOCOL.md) this module reads, as
# the client's ``call`` gives them: plain maps, every key read with a default.

class ReviewedDecision(TypedDict, total=False):
    """One decision of a review (``aluette-record review``'s ``decisions``)."""

    deal: int
    trick: int | None
    kind: str
    actual: str
    preferred: str
    lost: float
    matched: bool


class ReviewMap(TypedDict, total=False):
    """The expert's review of a seat (``ReviewResult.review``, or its JSON file)."""

    seat: int
    share_matched: float
    points_lost: float
    decisions: list[ReviewedDecision]


class ReviewProgress(TypedDict, total=False):
    """Where a review stands (``ReviewResult``)."""

    status: str
    ahead: int
    done: int
    total: int


class HintChoiceMap(TypedDict, total=False):
    choice: str
    value: float | None


class HintMap(TypedDict, total=False):
    """A table's hint (``HintResult``)."""

    preferred: str
    choices: list[HintChoiceMap]


def review_progress(status: ReviewProgress, seat: Text) -> RenderableType:
    """Where a review stands (protocol ``review``): queued, or a bar of decisions done."""
    if status.get("status") == "queued":
        ahead = int(status.get("ahead") or 0)
        return tr_text("cli.review.waiting", "cyan", name=seat, n=ahead)
    done, total = int(status.get("done") or 0), int(status.get("total") or 0)
    grid = Table.grid(padding=(0, 1))
    grid.add_row(tr_text("cli.review.running", "cyan", name=seat),
                 ProgressBar(total=max(total, 1), completed=done, width=30),
                 Text(tr("cli.review.done_of", done=done, total=total)))
    return grid


def review_summary(review: ReviewMap, seat: Text) -> Text:
    """A review in one sentence: how often the seat chose as the expert, what it cost."""
    share = round(100 * float(review.get("share_matched") or 0))
    lost = float(review.get("points_lost") or 0)
    worst = sorted((d for d in review.get("decisions") or [] if not d.get("matched")),
                   key=lambda d: -float(d.get("lost") or 0))[:3]
    t = Text(tr("replay.review.done", name=seat.plain, share=share, lost=f"{lost:.2f}"),
             style="bold")
    for d in worst:
        where = (tr("cli.review.where.trick", deal=d["deal"], trick=d["trick"])
                 if d.get("trick") else tr("cli.review.where", deal=d["deal"]))
        t.append("\n  " + tr("cli.review.worst", where=where, actual=d["actual"],
                               preferred=d["preferred"], lost=f"{float(d['lost']):.2f}"))
    return t


def hint_text(result: HintMap) -> Text:
    """A table's hint (protocol ``hint``): the expert's choice and what each choice is worth
    to the team, judged from this seat's view alone."""
    preferred = str(result.get("preferred") or "")
    words = card_name(preferred) if preferred in STRENGTH else preferred
    t = Text(tr("cli.hint.choose"), style="bold").append(" " + preferred)
    if words != preferred:
        t.append(f" ({words})")
    valued = [(c["choice"], value) for c in result.get("choices") or []
              if (value := c.get("value")) is not None]
    if valued:
        t.append(". " + tr("cli.hint.values", list=", ".join(
            f"{protocol.clean_text(str(choice))[:20]} {float(value):+.2f}"
            for choice, value in valued)))
    return t.append(".")


def mark_of(lost: float) -> str:
    """The mark for a play that lost ``lost`` expected points to the expert's choice."""
    return next((mark for least, mark in MARKS if lost >= least), "")


@dataclass(frozen=True, slots=True)
class Step:
    """Where the replay is: a deal, and the tricks of it shown (0: the deal as dealt)."""

    deal: int
    trick: int


class Replay:
    """Steps through one match record; ``seat`` (if given) is "you" in the words."""

    def __init__(self, record: Record, seat: int | None = None,
                 review: ReviewMap | None = None) -> None:
        self.record = record
        # The rules first (R18); the fair-deal proof (R8a) is reported, not required.
        self.summary = verify_record({k: v for k, v in record.items() if k != "fair"})
        self.proof = _proof(record)
        names = record.get("seats") or []
        self.model = TableModel("replay", seat=seat, info=TableInfo(table="replay", seats=[
            SeatInfo(kind="human",
                     name=names[s] if s < len(names) and isinstance(names[s], str) else None)
            for s in range(4)]))
        self.steps = [Step(d, t) for d, deal in enumerate(record["deals"], start=1)
                      for t in range(len(deal["tricks"]) + 1)]
        self.at = 0
        self.marks = _marks(review)
        self.reviewed = int(review["seat"]) if review else None
        self._talon = _talon_shares(record)

    @property
    def step(self) -> Step:
        return self.steps[self.at]

    # ------------------------------------------------------------------ moving

    def command(self, line: str) -> bool:
        """Carry out one typed command; False means stop. Raises ValueError for a command
        it does not know (the caller shows :func:`keys_text`)."""
        words = line.split()
        word = words[0] if words else "n"
        if word in ("q", "quit", "stop"):
            return False
        if word in ("n", "next", "f"):
            self.at = min(self.at + 1, len(self.steps) - 1)
        elif word in ("b", "back", "p", "prev"):
            self.at = max(self.at - 1, 0)
        elif word in ("d", "deal"):
            self.go(min(self.step.deal + 1, len(self.record["deals"])), 0)
        elif word in ("D", "pd"):
            self.go(max(self.step.deal - 1, 1), 0)
        elif word in ("g", "go") and len(words) in (2, 3) and all(w.isdigit() for w in words[1:]):
            self.go(int(words[1]), int(words[2]) if len(words) == 3 else 0)
        elif word in ("first", "home"):
            self.at = 0
        elif word in ("last", "end"):
            self.at = len(self.steps) - 1
        else:
            raise ValueError(f"unknown replay command {word!r}")
        return True

    def go(self, deal: int, trick: int) -> None:
        """To deal ``deal`` after trick ``trick`` (both clamped to the match)."""
        deal = min(max(deal, 1), len(self.record["deals"]))
        last = len(self.record["deals"][deal - 1]["tricks"])
        self.at = self.steps.index(Step(deal, min(max(trick, 0), last)))

    # ------------------------------------------------------------------ showing

    def render(self) -> RenderableType:
        step = self.step
        deal = self.record["deals"][step.deal - 1]
        result = self.summary["deals"][step.deal - 1]
        m = self.model
        lines: list[RenderableType] = []
        head = tr_text("cli.replay.head", deal=step.deal, deals=len(self.record["deals"]),
                       name=render.who(m, deal["dealer"]),
                       where=tr("replay.as_dealt") if step.trick == 0
                       else tr("replay.trick_of", n=step.trick), style="bold")
        head.append(f"   [{self.at + 1}/{len(self.steps)}]", style="dim")
        lines.append(head)
        if step.trick == 0:
            lines.extend(self._chanter(step.deal, deal))
        else:
            cards = deal["tricks"][step.trick - 1]
            trick = result["tricks"][step.trick - 1]
            lines.append(render.trick_result(m, TrickDone(number=step.trick,
                                                          leader=trick["leader"], cards=cards,
                                                          winner=trick["winner"])))
            lines.extend(self._marked(step, trick["leader"], cards))
        lines.extend(self._signals(step, deal))
        lines.append(Text(tr("cli.replay.hands"), style="bold"))
        played = {c for t in deal["tricks"][:step.trick] for c in t}
        for seat in range(4):
            line = Text("  ").append_text(render.who(m, seat)).append(": ")
            left = [c for c in sort_by_strength(deal["hands"][seat]) if c not in played]
            line.append_text(Text(" ").join(render.card_text(c, with_name=False)
                                            for c in left) if left else Text("—"))
            lines.append(line)
        counts = [sum(1 for t in result["tricks"][:step.trick] if t["winner"] == s)
                  for s in range(4)]
        tally = tr_text("cli.replay.tally", list=Text(" · ").join(
            render.who(m, s).append(f" {n}") for s, n in enumerate(counts)))
        lines.append(tally)
        if step.trick == rules.TRICKS_PER_DEAL:
            winners = [t["winner"] for t in result["tricks"]]
            lines.append(render.deal_result(m, self._scored(step.deal), winners))
            if step.deal == len(self.record["deals"]):
                lines.append(Text(tr("cli.replay.match", p0=self.summary["points"][0],
                                     p1=self.summary["points"][1], proof=self.proof)))
        lines.append(Text(keys_text(), style="dim"))
        return Group(*lines)

    def _scored(self, number: int) -> DealScored:
        """The deal's result as the table's ``deal_scored`` event says it (R12-R14)."""
        deals = self.summary["deals"]
        totals = [sum(d["points"][t] for d in deals[:number]) for t in (0, 1)]
        d = deals[number - 1]
        return DealScored(deal_number=number, dealer=d["dealer"],
                          trick_counts=d["trick_counts"], winner=d["winner"],
                          points=d["points"], mordienne=d["mordienne"], totals=totals)

    def _chanter(self, number: int, deal: RecordDeal) -> list[RenderableType]:
        block = deal.get("chanter")
        if block is None:
            return []
        m, dealer = self.model, deal["dealer"]
        votes = [(s, block["votes"][s]) for s in
                 ((dealer + 1 + k) % 4 for k in range(4)) if block["votes"][s] is not None]
        out = tr_text("cli.replay.chanter", votes=Text(", ").join(
            render.who(m, s).append(" " + (tr("cli.yes") if v else tr("cli.no")))
            for s, v in votes))
        lines: list[RenderableType] = [out]
        if not block["exchange"]:
            lines.append(Text("  " + tr("replay.chanter.none")))
            return lines
        shares = self._talon.get(number, {})
        for seat in (left_of(dealer), dealer):
            t = Text("  ").append_text(render.who(m, seat))
            if seat in shares:
                t.append(" took ").append(" ".join(shares[seat])).append(" from the talon and")
            t.append(" discarded ").append(" ".join(sort_by_strength(block["discards"][seat])))
            lines.append(t)
        return lines

    def _signals(self, step: Step, deal: RecordDeal) -> list[RenderableType]:
        """The signals sent during this step (before the first card, or in this trick)."""
        block = deal.get("chanter")
        before = 0
        if block is not None:
            before = sum(v is not None for v in block["votes"]) + (2 if block["exchange"]
                                                                   else 0)
        lo, hi = ((0, before) if step.trick == 0
                  else (before + 4 * (step.trick - 1), before + 4 * step.trick))
        out: list[RenderableType] = []
        for s in deal.get("signals") or []:
            at = int(s.get("at", 0))
            if not lo <= at < hi:
                continue
            t = tr_text("cli.replay.signal", name=render.who(self.model, s["from_seat"]),
                        signal=render.signal_words(s["signal"], s.get("n")))
            noticed = [x for x in s["to"] if x != partner_of(s["from_seat"])]
            if noticed:
                t.append_text(tr_text("cli.replay.noticed", names=Text(tr("fair.and")).join(
                    render.who(self.model, x) for x in noticed)))
            out.append(t)
        return out

    def _marked(self, step: Step, leader: int, cards: list[str]) -> list[RenderableType]:
        """The review's verdict on the reviewed seat's card in this trick, if it cost."""
        if self.reviewed is None:
            return []
        verdict = self.marks.get((step.deal, step.trick))
        if verdict is None:
            return []
        lost, preferred, actual = verdict
        mark = mark_of(lost)
        if not mark:
            return []
        t = Text(f"  {mark} ", style="bold yellow").append_text(
            tr_text("cli.replay.marked", name=render.who(self.model, self.reviewed),
                    actual=actual, preferred=preferred, lost=f"{lost:.2f}"))
        return [t]


def _marks(review: ReviewMap | None) -> dict[tuple[int, int], tuple[float, str, str]]:
    """The reviewed seat's card decisions: (deal, trick) -> (points lost, preferred, made)."""
    if not review:
        return {}
    # A card's decision names its trick (the others' is null).
    return {(int(d["deal"]), int(cast(int, d["trick"]))): (float(d["lost"]),
                                                           str(d["preferred"]),
                                                str(d["actual"]))
            for d in review.get("decisions") or [] if d.get("kind") == "card"}


def _proof(record: Record) -> str:
    try:
        fair.check_record(record)
    except RecordError as exc:
        return f"The deals are NOT proven fair: {exc}."
    material = record.get("fair")
    if material is None:
        return "The record carries no fair-deal block: its deals are unproven (R8a)."
    n = fair.contributors(material["contributions"])
    return f"Deals proven fair (R8a); {fair.contributed_words(n)}."


def _talon_shares(record: Record) -> dict[int, dict[int, list[str]]]:
    """With the revealed seed: what each talon taker received (R9), by deal and seat."""
    material = record.get("fair")
    if not isinstance(material, dict) or material.get("scheme") not in fair.SCHEMES:
        return {}
    try:
        scheme = fair.SCHEMES[material["scheme"]]
        seed = fair.derive_seed(material["secret"], material["salt"],
                                material["contributions"], scheme)
    except (KeyError, TypeError, ValueError):
        return {}
    out: dict[int, dict[int, list[str]]] = {}
    for number, deal in enumerate(record["deals"], start=1):
        block = deal.get("chanter")
        if block and block.get("exchange"):
            _, talon = rules.deal(rules.deal_rng(seed, number, scheme), deal["dealer"])
            out[number] = {left_of(deal["dealer"]): sort_by_strength(talon[0::2]),
                           deal["dealer"]: sort_by_strength(talon[1::2])}
    return out
