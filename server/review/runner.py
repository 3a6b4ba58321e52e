"""A review's decisions, evaluated in worker processes, with progress.

The evaluation is CPU work of a second or so per decision, so it never runs on an event
loop's thread: the command line spreads it over a pool of ``workers`` processes (the
server hands it to its bot processes, :mod:`server.reviews`). Each decision is seeded
on its own (:func:`.evaluate.evaluate`), so the result does not depend on which worker
took which decision, nor on how many there were.
"""

from __future__ import annotations

import concurrent.futures
import functools
import json
import multiprocessing
from collections.abc import Callable

from protocol.records import Record

from .evaluate import DEFAULT_SETTINGS, Settings, evaluate
from .replay import Decision, decisions
from .report import DecisionReview, Review, summarize

#: Called with (decisions done, decisions in all) as the review progresses.
Progress = Callable[[int, int], None]


def review_record(record: Record, seat: int, *, workers: int = 2,
                  settings: Settings = DEFAULT_SETTINGS, salt: str = "0",
                  progress: Progress | None = None) -> Review:
    """Review ``seat``'s decisions in ``record`` (raises RecordError for a bad record)."""
    found = decisions(record, seat)
    results = run(found, workers=workers, settings=settings, salt=salt, progress=progress)
    names = record.get("seats") or []
    name = names[seat] if seat < len(names) and isinstance(names[seat], str) else None
    return summarize(seat, name, results, {**settings.to_dict(), "salt": salt})


def run(found: list[Decision], *, workers: int, settings: Settings, salt: str,
        progress: Progress | None = None) -> list[DecisionReview]:
    """Evaluate every decision, in ``workers`` processes (0: in this one)."""
    total = len(found)
    if progress is not None:
        progress(0, total)
    if workers <= 0:
        out = []
        for i, d in enumerate(found, start=1):
            out.append(evaluate(d, settings, salt))
            if progress is not None:
                progress(i, total)
        return out
    results: list[DecisionReview | None] = [None] * total
    # spawn: a clean process image, as the server's bot processes are started.
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=workers,
                                                mp_context=context) as pool:
        # The longest decisions (the most cards left) first, so the pool ends together.
        order = sorted(range(total), key=lambda i: -len(found[i].view.hand))
        futures = {pool.submit(evaluate, found[i], settings, salt): i for i in order}
        for done, future in enumerate(concurrent.futures.as_completed(futures), start=1):
            results[futures[future]] = future.result()
            if progress is not None:
                progress(done, total)
    return [r for r in results if r is not None]


# ---------------------------------------------------------------- one decision at a time
# For a server, whose event loop must not spend its time unpickling every view of a match:
# the worker replays the record itself (once per review, cached) and sends back only the
# small verdict of the decision it was asked for.


@functools.lru_cache(maxsize=8)
def _decisions_of(record_json: bytes, seat: int) -> list[Decision]:
    return decisions(json.loads(record_json), seat)


def count_decisions(record_json: bytes, seat: int) -> int:
    """How many decisions ``seat`` took in the record (JSON bytes); raises RecordError."""
    return len(_decisions_of(record_json, seat))


def evaluate_one(record_json: bytes, seat: int, index: int, settings: Settings,
                 salt: str) -> DecisionReview:
    """The verdict on ``seat``'s ``index``-th decision in the record (JSON bytes)."""
    return evaluate(_decisions_of(record_json, seat)[index], settings, salt)
