"""One human and three bots play a whole match over a real websocket (issue 5)."""

from __future__ import annotations

from server.game.record import verify_record

FAST = {"deals": 1, "bot_delay_ms": 0}


async def test_one_human_three_bots_play_a_match(connect):
    ana = await connect("Ana")
    table = (await ana.call("create_table", options=FAST))["table"]
    for seat in (1, 2, 3):
        await ana.call("add_bot", table=table, seat=seat, level="random")
    await ana.call("start", table=table)
    while True:
        snap_or_turn = await ana.wait_event(
            lambda e: e["type"] in ("match_over",) or (e["type"] == "turn" and e["seat"] == 0),
            timeout=30)
        if snap_or_turn["event"]["type"] == "match_over":
            break
        hand = _hand(ana)
        await ana.call("play", table=table, card=hand[-1])
        ana.events = [e for e in ana.events if e is not snap_or_turn]
    over = ana.payloads("match_over")[0]
    summary = verify_record(over["record"])
    assert summary["points"] == over["points"]


def _hand(client) -> list[str]:
    """Track seat 0's hand from its hand_dealt and card_played events."""
    hand = list(client.payloads("hand_dealt")[-1]["cards"])
    for p in client.payloads("card_played"):
        if p["seat"] == 0 and p["card"] in hand:
            hand.remove(p["card"])
    return hand
