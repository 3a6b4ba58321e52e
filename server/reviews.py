"""The expert's review of a finished match, as a service (protocol 1.5 ``review``, issue 28),
and the hints of a casual table (``hint``: what would the expert play now?).

A player asks for the review of one seat of a match whose record they may read (the same
rule as ``get_record``: a private table's records are its players'). The answer says where
the review stands: ``queued`` behind others, ``running`` with how many decisions are done,
``done`` with the review, or ``failed``; asking again is how a client follows it (a poll:
one command, no stream to keep).

- **Off the event loop.** The review (:mod:`server.review`) replays the record and values
  every decision in the bot worker processes (:class:`~.botrunner.BotRunner`'s pool), one
  decision at a time per review and at most :attr:`Reviews.in_flight` at once in all: a
  queue of reviews never takes every bot worker from the tables' bots. Only each
  decision's small verdict comes back to this process: the worker replays the record
  itself (once per review), so the loop never unpickles the seat's views.
- **Cached with the record.** A finished review is stored next to the record
  (``review:<match>:<seat>``), expiring when records do; asking for it again answers at
  once, whoever asks.
- **Bounded.** One queue per server process (:attr:`Reviews.max_active` reviews queued or
  running), at most :attr:`Reviews.per_player` of them asked by one player and
  :attr:`Reviews.per_address` from one address (``too_many_reviews``, ``details.limit``);
  a full queue is ``server_busy``. A failed review is remembered briefly, then forgotten so
  that asking again tries again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import msgspec

from protocol import (
    CommandError,
    ErrorCode,
    HintChoice,
    HintResult,
    RequestHint,
    RequestReview,
    ReviewResult,
    ServiceError,
)
from protocol.records import Record
from protocol.results import ReviewStatus
from server.game import view
from server.game.errors import RecordError
from server.review import DecisionReview, Settings, summarize
from server.review.evaluate import recommend
from server.review.runner import count_decisions, evaluate_one
from server.store import StorageUnavailable, Store

from .botrunner import BotRunner
from .lobby import Lobby
from .supervisor import Supervisor

log = logging.getLogger(__name__)

#: (table, match number, seat)
ReviewKey = tuple[str, int, int]


@dataclass(slots=True)
class Job:
    """One review being made: who asked first (for the bounds), and how far it is."""

    key: ReviewKey
    record: Record
    player: str
    address: str
    status: ReviewStatus = "queued"
    done: int = 0
    total: int = 0
    error: str | None = None
    failed_at: float = 0.0
    finished: asyncio.Event = field(default_factory=asyncio.Event)


class Reviews:
    """The server's reviews: a bounded queue worked off in the bot processes."""

    #: Reviews queued or running at once in this process.
    max_active = 64
    #: Of those, asked by one player, and from one address.
    per_player = 2
    per_address = 4
    #: Decisions being valued at once, all reviews together.
    in_flight = 1
    #: How long a failed review is reported before asking again retries it (seconds).
    failed_keep_s = 60.0

    def __init__(self, store: Store, lobby: Lobby, bots: BotRunner, supervisor: Supervisor,
                 *, ttl_s: int, settings: Settings | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.store = store
        self.lobby = lobby
        self.bots = bots
        self.supervisor = supervisor
        self.ttl_s = ttl_s
        self.settings = settings or Settings()
        self.clock = clock
        self.jobs: dict[ReviewKey, Job] = {}
        self.queue: deque[Job] = deque()
        self._wake = asyncio.Event()
        self._slots = asyncio.Semaphore(self.in_flight)
        self.made = 0
        self._hinting: set[str] = set()
        self.hints = 0

    def start(self) -> None:
        """Work the queue off in a supervised task (cancelled when the server closes)."""
        self.supervisor.spawn("reviews", self._work_forever())

    # ------------------------------------------------------------------ asking

    async def request(self, player: str, address: str, cmd: RequestReview) -> ReviewResult:
        """Where the review of ``cmd.seat`` in the match stands; queue it if nobody has."""
        found = await self.lobby.record(player, cmd.table, cmd.match, cmd.code)  # who may
        key: ReviewKey = (cmd.table, found.match or cmd.match or 1, cmd.seat)
        self._forget_failures()
        job = self.jobs.get(key)
        if job is None:
            try:
                cached = await self.store.load_review(*key)
            except StorageUnavailable:
                raise ServiceError(ErrorCode.STORAGE_UNAVAILABLE,
                                   "storage is unavailable") from None
            if cached is not None:
                return self._result(key, "done", review=msgspec.json.decode(cached))
            # A record this server wrote (the wire's result carries it as a plain map).
            job = self._enqueue(key, cast(Record, found.record), player, address)
        if job.status == "failed":
            return self._result(key, "failed", error=job.error)
        ahead = next((i for i, j in enumerate(self.queue) if j is job), 0)
        return self._result(key, job.status, done=job.done, total=job.total, ahead=ahead)

    def _enqueue(self, key: ReviewKey, record: Record, player: str,
                 address: str) -> Job:
        active = [j for j in self.jobs.values() if j.status in ("queued", "running")]
        for mine, limit, who in ((sum(j.player == player for j in active), self.per_player,
                                  "you have"),
                                 (sum(j.address == address for j in active),
                                  self.per_address, "your address has")):
            if mine >= limit:
                raise CommandError(ErrorCode.TOO_MANY_REVIEWS,
                                   f"{who} {limit} reviews waiting already: ask again once "
                                   f"one is done", details={"limit": limit})
        if len(active) >= self.max_active:
            raise ServiceError(ErrorCode.SERVER_BUSY, "too many reviews are waiting; try "
                               "again shortly", details={"retry_after_ms": 10_000})
        job = Job(key, record, player, address)
        self.jobs[key] = job
        self.queue.append(job)
        self._wake.set()
        return job

    def _forget_failures(self) -> None:
        now = self.clock()
        for key, job in list(self.jobs.items()):
            if job.status == "failed" and now - job.failed_at > self.failed_keep_s:
                del self.jobs[key]

    @staticmethod
    def _result(key: ReviewKey, status: ReviewStatus, **fields: Any) -> ReviewResult:
        table, match, seat = key
        return ReviewResult(table=table, match=match, seat=seat, status=status, **fields)

    async def finished(self, key: ReviewKey) -> None:
        """Wait until the review of ``key`` is stored or has failed (for tests)."""
        job = self.jobs.get(key)
        if job is not None:
            await job.finished.wait()

    # ------------------------------------------------------------------ hints

    async def hint(self, player: str, cmd: RequestHint) -> HintResult:
        """What the expert would do in ``player``'s seat now (issue 28, Build 3): only at a
        table with ``options.hints``, for a seated player whose turn it is; one hint at a
        time per player, valued in the bot processes from the seat's view."""
        table = await self.lobby.find(cmd.table)
        state, match = table.state, table.match
        if not state.options.hints:
            raise CommandError(ErrorCode.HINTS_OFF, "this table does not allow hints: its "
                               "creator may turn them on for a casual table (option hints)")
        seat = state.seat_of(player)
        if seat is None:
            raise CommandError(ErrorCode.NOT_SEATED, "only the players seated at the table "
                               "may ask what the expert would play")
        if match is None or match.over:
            raise CommandError(ErrorCode.WRONG_PHASE, "there is nothing to decide: no match "
                               "is being played")
        if match.to_act != seat:
            raise CommandError(ErrorCode.NOT_YOUR_TURN, "a hint is for your own turn")
        if player in self._hinting:
            raise CommandError(ErrorCode.RATE_LIMITED, "one hint at a time")
        seen = view(match, seat)             # the seat's own view: nothing hidden in it
        self._hinting.add(player)
        try:
            loop = asyncio.get_running_loop()
            preferred, choices = await loop.run_in_executor(
                self.bots.executor, recommend, seen, None,
                f"hint:{cmd.table}:{match.deal_number}:{match.version}")
        finally:
            self._hinting.discard(player)
        self.hints += 1
        return HintResult(table=cmd.table, phase=seen.phase, preferred=preferred,
                          choices=[HintChoice(choice=c.choice, value=c.value)
                                   for c in choices][:16])

    # ------------------------------------------------------------------ working

    async def _work_forever(self) -> None:
        while True:
            while not self.queue:
                self._wake.clear()
                await self._wake.wait()
            job = self.queue.popleft()
            try:
                await self._make(job)
            except asyncio.CancelledError:
                raise
            except RecordError as exc:
                self._fail(job, f"this record cannot be reviewed: {exc}")
            except Exception:
                log.exception("review of %s failed", job.key)
                self._fail(job, "the review could not be made; ask again to retry")
            finally:
                job.finished.set()

    def _fail(self, job: Job, why: str) -> None:
        job.status, job.error, job.failed_at = "failed", why, self.clock()

    async def _make(self, job: Job) -> None:
        job.status = "running"
        table, match, seat = job.key
        loop = asyncio.get_running_loop()
        pool = self.bots.executor
        record = msgspec.json.encode(job.record)
        job.total = await loop.run_in_executor(pool, count_decisions, record, seat)
        salt = f"{table}:{match}"
        results: list[DecisionReview] = []
        for index in range(job.total):
            async with self._slots:
                results.append(await loop.run_in_executor(
                    pool, evaluate_one, record, seat, index, self.settings, salt))
            job.done += 1
        names = job.record.get("seats") or []
        name = names[seat] if seat < len(names) and isinstance(names[seat], str) else None
        review = summarize(seat, name, results, {**self.settings.to_dict(), "salt": salt})
        await self.store.save_review(table, match, seat, msgspec.json.encode(review),
                                     self.ttl_s)
        self.made += 1
        del self.jobs[job.key]
