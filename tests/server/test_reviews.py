"""The expert's review over the network (protocol 1.5 ``review``, issue 28, Build 2): asked
for a seat of a finished match, queued, made in the bot workers, cached with the record,
and only for those who may read that record; bounded per player."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec

from server.review import Review, review_record

from .players import autoplay

OPTIONS = {"deals": 1, "bot_delay_ms": 0, "first_dealer": 3}


async def finished_match(client: Any, **options: Any) -> tuple[str, dict[str, Any]]:
    """A one-deal match of ``client`` (seat 0) and three bots, played to its end."""
    created = await client.call("create_table", options={**OPTIONS, **options})
    table = created["table"]
    await client.call("start", table=table)
    over = await autoplay(client, table, 0)
    assert over is not None
    return table, over["record"]


async def test_a_review_is_queued_made_in_the_workers_and_cached(connect, server,
                                                                redis_client) -> None:
    ana, bo = await connect("Ana"), await connect("Bo")
    table, record = await finished_match(ana)
    first = await ana.call("review", table=table, seat=1)
    assert first["status"] in ("queued", "running")
    assert (first["table"], first["match"], first["seat"]) == (table, 1, 1)
    reviews = server.hub.reviews
    async with asyncio.timeout(60):
        await reviews.finished((table, 1, 1))
    done = await bo.call("review", table=table, seat=1)     # anyone who may read the record
    assert done["status"] == "done" and done["total"] == 0
    review = msgspec.convert(done["review"], Review)
    # The very review the command line makes, with the server's salt (the table and match).
    expected = review_record(record, 1, workers=0, settings=reviews.settings,
                             salt=f"{table}:1")
    assert review == expected
    assert review.total_decisions == 9 and review.name == record["seats"][1]
    # Cached with the record, expiring with it.
    key = server.hub.store.keys.review(table, 1, 1)
    assert 0 < await redis_client.ttl(key) <= server.hub.settings.record_ttl_s
    again = await ana.call("review", table=table, seat=1, match=1)
    assert again == done and reviews.made == 1


async def test_only_those_who_may_read_the_record_get_its_review(connect) -> None:
    ana, eve = await connect("Ana"), await connect("Eve")
    created = await ana.call("create_table", private=True, options=OPTIONS)
    table = created["table"]
    unfinished = await ana.request("review", table=table, seat=0)
    assert unfinished["code"] == "wrong_phase"
    await ana.call("start", table=table)
    assert await autoplay(ana, table, 0) is not None
    stranger = await eve.request("review", table=table, seat=0)
    assert stranger["type"] == "error" and stranger["code"] == "no_such_table"
    mine = await ana.call("review", table=table, seat=0)
    assert mine["status"] in ("queued", "running", "done")
    nothing = await eve.request("review", table="t-none", seat=0)
    assert nothing["code"] == "no_such_table"
    bad = await ana.request("review", table=table, seat=4)
    assert bad["code"] == "invalid_field"


async def test_reviews_are_bounded_per_player(connect, server) -> None:
    """A player may have ``per_player`` reviews waiting; the next is ``too_many_reviews``
    until one is done (then asking again is fine)."""
    ana = await connect("Ana")
    table, _ = await finished_match(ana)
    reviews = server.hub.reviews
    limit = reviews.per_player
    for seat in range(limit):
        assert (await ana.call("review", table=table, seat=seat))["status"] in (
            "queued", "running")
    refused = await ana.request("review", table=table, seat=limit)
    assert refused["type"] == "error" and refused["code"] == "too_many_reviews"
    assert refused["details"] == {"limit": limit}
    assert len(reviews.jobs) == limit                      # the refusal queued nothing
    async with asyncio.timeout(60):
        await reviews.finished((table, 1, 0))
    later = await ana.call("review", table=table, seat=limit)
    assert later["status"] in ("queued", "running")


async def test_a_hint_at_a_casual_table_is_the_experts_choice_from_the_seats_view(
        connect, server) -> None:
    """Issue 28, Build 3: with ``hints`` on, the player whose turn it is may ask what the
    expert would play; anyone else is refused, and a table without hints says so."""
    ana, eve = await connect("Ana"), await connect("Eve")
    created = await ana.call("create_table", options={**OPTIONS, "bot_delay_ms": 10000,
                                                      "hints": True})
    table = created["table"]
    head = await ana.wait_event(lambda e: e["type"] == "table_changed")
    assert head["event"]["table"]["options"]["hints"] is True          # marked
    await ana.call("start", table=table)
    await ana.wait_event(lambda e: e["type"] == "turn" and e["seat"] == 0)
    hand = next(e["cards"] for e in ana.payloads("hand_dealt"))
    hint = await ana.call("hint", table=table)
    assert hint["phase"] == "play" and hint["preferred"] in hand
    assert {c["choice"] for c in hint["choices"]} == set(hand)
    assert all(isinstance(c["value"], float) for c in hint["choices"])
    assert server.hub.reviews.hints == 1
    await eve.call("spectate", table=table)
    refused = await eve.request("hint", table=table)
    assert refused["code"] == "not_seated"
    await ana.call("play", table=table, card=hint["preferred"])
    not_mine = await ana.request("hint", table=table)
    assert not_mine["code"] == "not_your_turn"
    plain = (await ana.call("create_table", options=OPTIONS))["table"]
    off = await ana.request("hint", table=plain)
    assert off["code"] == "hints_off"
