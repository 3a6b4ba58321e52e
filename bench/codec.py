"""Benchmark the protocol codec against bare msgpack on the same data, in the same run.

    .venv/bin/python bench/codec.py

Prints one JSON object. ``us_per_message`` is encode + decode + validate through
``protocol`` (typed structs, every constraint checked) for a typical mix: a ``play``
command, a ``card_played`` event and a ``snapshot`` event (weights 4:4:1, roughly what a
table sends per trick). ``baseline_us_per_message`` is ``msgpack.packb`` + ``unpackb`` of
the same messages as plain dicts, with no validation. Target: ``overhead_ratio`` <= 3.
"""

from __future__ import annotations

import json
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import msgpack

import protocol as p

OPTIONS = p.TableOptions(chanter=True, signals="risky")
VIEW = p.TableView(
    viewer=0,
    phase="play",
    options=OPTIONS,
    deal_number=2,
    dealer=0,
    to_act=3,
    hand=["3o", "1b", "Rc", "9e", "4o", "Vb", "7c"],
    hand_sizes=[7, 7, 7, 6],
    leader=1,
    trick=[(1, "2c"), (2, "Ce")],
    tricks=[
        p.TrickInfo(leader=1, cards=["5o", "8b", "Rb", "1c"], winner=0),
        p.TrickInfo(leader=0, cards=["Ro", "Re", "6b", "3e"], winner=None),
    ],
    trick_counts=[1, 0, 0, 0],
    points=[1, 0],
    deals=[
        p.DealInfo(dealer=3, winner=2, points=[1, 0], mordienne=False, trick_counts=[2, 1, 4, 2])
    ],
    chanter_votes=[True, False, None, None],
    signals=[p.SignalInfo(from_seat=2, signal="aces", n=2)],
    draw=[],
)
PLAY = p.Play(id=12345, table="t-7f3a", card="3o")
CARD = p.Event(table="t-7f3a", seq=1234, event=p.CardPlayed(seat=1, card="3o"))
SNAP = p.Event(table="t-7f3a", seq=1234, event=p.Snapshot(view=VIEW))
#: (message, decoder, weight)
MIX = [(PLAY, p.decode_client, 4), (CARD, p.decode_server, 4), (SNAP, p.decode_server, 1)]


def _time(fn: Callable[[], None], rounds: int) -> float:
    """Best of 5 runs of ``rounds`` calls, in seconds per call (best = least noise)."""
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(rounds):
            fn()
        best = min(best, (time.perf_counter() - t0) / rounds)
    return best


def main() -> None:
    weights = sum(w for _, _, w in MIX)
    ours = base = 0.0
    per_type: dict[str, dict[str, float]] = {}
    for msg, decode, weight in MIX:
        plain = p.to_dict(msg)
        assert decode(p.encode(msg)) == msg and msgpack.unpackb(msgpack.packb(plain)) == plain

        def run_ours(msg=msg, decode=decode) -> None:  # type: ignore[no-untyped-def]
            decode(p.encode(msg))

        def run_base(plain=plain) -> None:  # type: ignore[no-untyped-def]
            msgpack.unpackb(msgpack.packb(plain))

        t_ours = _time(run_ours, 20_000) * 1e6
        t_base = _time(run_base, 20_000) * 1e6
        name = msg.event.__struct_config__.tag if isinstance(msg, p.Event) else "play"  # type: ignore[union-attr]
        per_type[name] = {
            "us": round(t_ours, 3),
            "baseline_us": round(t_base, 3),
            "bytes": len(p.encode(msg)),
        }
        ours += t_ours * weight / weights
        base += t_base * weight / weights
    print(
        json.dumps(
            {
                "us_per_message": round(ours, 3),
                "baseline_us_per_message": round(base, 3),
                "overhead_ratio": round(ours / base, 3),
                "target_ratio": 3.0,
                "mix": {"play": 4, "card_played": 4, "snapshot": 1},
                "per_type": per_type,
                "python": platform.python_version(),
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
