"""An Aluette Online bot from scratch: websockets + msgpack, nothing of the project's code.
Usage: python examples/bot.py ws://HOST:PORT [DEALS [BOT_DELAY_MS]]; docs/BOT-API.md.

It says it is a bot, creates a table (DEALS deals, 5 by default), starts it (the server's
bots fill the other seats and play without pause, or BOT_DELAY_MS), plays one whole match
with legal cards, signals its partner, survives dropped connections and server restarts,
and exits 0 when the match is over."""

import asyncio
import secrets
import sys
from itertools import count
from typing import Any

import msgpack
import websockets

FRESH = 2**53 - 1                                     # a last_seq that asks for a snapshot
FATAL = {4000, 4001, 4002, 4009, 1009}                # close codes not to reconnect after
MAJORS = {"3o": "monsieur", "3c": "madame", "2o": "borgne", "2c": "vache", "9c": "grand_neuf",
          "9o": "petit_neuf", "2b": "deux_de_chene", "2e": "deux_d_ecrit"}
STRENGTH = {"3o": 19, "3c": 18, "2o": 17, "2c": 16, "9c": 15, "9o": 14, "2b": 13, "2e": 12}
RANKS = {rank: 11 - i for i, rank in enumerate("1RCV9876543")}   # aces 11 ... threes 1
ACTIONS = ("play", "chanter_vote", "discard")
PACE = 1 / 16              # seconds between frames: under the server's 20 per second


def strength(card: str) -> int:
    """R3: the eight cartes majeures by name, then by rank; suits never matter."""
    return STRENGTH.get(card) or RANKS[card[0]]


class Bot:
    def __init__(self, url: str, deals: int, delay_ms: int) -> None:
        self.url, self.options = url, {"deals": deals, "bot_delay_ms": delay_ms}
        self.ids, self.next_at, self.ws, self.token = count(1), 0.0, None, None
        self.pending: dict[int, dict[str, Any]] = {}   # table commands without a reply yet
        self.table = self.seat = self.to_act = self.phase = self.hello_id = self.resume_id = None
        self.last_seq, self.replay_left, self.head = 0, 0, False
        self.hand: list[str] = []               # our cards; the trick's cards so far
        self.trick: list[str] = []
        self.signals_on, self.started, self.over, self.refused = True, False, False, 0
        self.contribution, self.commitment = secrets.token_hex(16), None

    async def send(self, msg: dict[str, Any], old: bool = False) -> int:
        if not old:
            msg["id"] = next(self.ids)   # command ids: unique for the session's whole life
            if msg["type"] not in ("hello", "resume"):
                self.pending[msg["id"]] = msg   # resent with the same id after a reconnect
        now = asyncio.get_running_loop().time()     # every frame counts towards the rate
        await asyncio.sleep(max(0.0, self.next_at - now))
        self.next_at = max(self.next_at, now) + PACE
        await self.ws.send(msgpack.packb(msg))
        return msg["id"]

    async def run(self) -> int:
        backoff = 0.5
        while not self.over:
            try:
                # websockets pings every 20 s by itself: a dead link is noticed and closed
                async with websockets.connect(self.url, compression=None,
                                              max_size=2**20) as ws:
                    self.ws, backoff = ws, 0.5
                    self.hello_id = await self.send({
                        "type": "hello", "versions": [1], "name": "example bot (python)",
                        "token": self.token, "bot": True})
                    while not self.over:
                        await self.receive(msgpack.unpackb(await ws.recv()))
            except (OSError, TimeoutError, websockets.ConnectionClosed):
                pass                            # the server went away, or never answered
            if not self.over and self.ws is not None and self.ws.close_code in FATAL:
                sys.exit(f"closed with {self.ws.close_code}: not reconnecting")
            await asyncio.sleep(0 if self.over else backoff)   # back off, then come back
            backoff = min(backoff * 2, 10)
        return 0

    async def receive(self, msg: dict[str, Any]) -> None:
        if msg["type"] == "event":
            await self.on_event(msg["seq"], msg["event"])
        elif msg["type"] == "welcome":
            self.token = msg["session"]        # keep only the newest token
            unanswered = list(self.pending.values())
            if self.table is not None:
                await self.resume(self.last_seq)
            elif not self.pending:
                await self.send({"type": "create_table", "options": self.options})
            for old in unanswered:
                await self.send(old, old=True)  # the same id: never applied twice
        elif msg["type"] in ("ok", "error"):
            await self.on_reply(self.pending.pop(msg["id"], None), msg)

    async def resume(self, last_seq: int) -> None:
        self.resume_id = await self.send({"type": "resume", "token": self.token,
                                          "table": self.table, "last_seq": last_seq})

    async def on_reply(self, sent: dict[str, Any] | None, msg: dict[str, Any]) -> None:
        if msg["type"] == "error":
            if msg["id"] == self.hello_id:      # "later" (the server closes) or "never"
                if msg["code"] == "bad_token":
                    sys.exit("the server forgot our session: our seat is gone")
                return
            if msg["code"] == "shutting_down" and sent is not None:
                self.pending[msg["id"]] = sent   # not applied: resent after reconnecting
                return
            self.refused += 1
            print(f"refused: {msg['code']}: {msg['message']}", file=sys.stderr)
            if sent is not None and sent["type"] in ACTIONS:
                await self.resume(FRESH)        # our picture was stale: ask for a snapshot
            return
        result, kind = msg["result"], sent["type"] if sent else None
        if kind in ACTIONS:
            self.to_act = None                  # applied: the turn has passed
        if kind == "create_table":
            self.table, self.seat = result["table"], result["seat"]
            print(f"table {self.table}, seat {self.seat}", flush=True)
        elif kind == "discard":
            self.hand = [c for c in self.hand if c not in sent["cards"]]
        elif msg["id"] == self.resume_id:
            self.head, self.replay_left = result["snapshot"], result["replayed"]
        await self.maybe_act()

    async def on_event(self, seq: int, ev: dict[str, Any]) -> None:
        kind = ev["type"]
        if kind == "snapshot" or (kind in ("table_changed", "chat_history")
                                  and (self.head or seq == self.last_seq)):
            self.last_seq = seq                 # a head re-bases the sequence
        elif seq <= self.last_seq:
            return                              # a duplicate, around a resume
        elif seq != self.last_seq + 1:
            return await self.resume(self.last_seq)   # a gap: ask for what we missed
        else:                                   # the next event: in order, never twice
            self.last_seq, self.replay_left = seq, max(0, self.replay_left - 1)
        await self.apply(kind, ev)
        await self.maybe_act()

    async def apply(self, kind: str, ev: dict[str, Any]) -> None:
        if kind == "table_changed":
            info = ev["table"]
            self.head = self.head and info["status"] == "playing"   # a snapshot follows
            self.signals_on = info["options"]["signals"] != "off"
            if info["status"] == "waiting" and not self.started and info["next_commitment"]:
                self.started, self.commitment = True, info["next_commitment"]  # R8a
                await self.send({"type": "start", "table": self.table,
                                 "contribution": self.contribution})
        elif kind == "snapshot":                # it replaces all we knew of the table
            view, self.head = ev["view"], False
            self.seat, self.hand = view["viewer"], view["hand"]
            self.trick = [card for _, card in view["trick"]]
            self.to_act, self.phase = view["to_act"], view["phase"]
            self.over = self.over or view["phase"] == "match_over"
        elif kind == "deals_committed" and ev["commitment"] != self.commitment:
            print("R8a: this is not the commitment we saw", file=sys.stderr)
        elif kind == "hand_dealt":
            self.hand = list(ev["cards"])
            await self.signal()                 # R15
        elif kind == "talon_dealt":             # R9: six more, six to discard
            self.hand = self.hand + ev["cards"]
        elif kind == "turn":
            self.to_act, self.phase = ev["seat"], ev["phase"]
        elif kind == "card_played":
            self.trick.append(ev["card"])
            if ev["seat"] == self.seat:
                self.hand = [c for c in self.hand if c != ev["card"]]
        elif kind == "trick_done":
            self.trick = []
        elif kind == "match_over":
            self.over = True
            print(f"match over: {ev['result']}, points {ev['points']}; "
                  f"{self.refused} commands refused")

    async def signal(self) -> None:
        """R15: tell the partner our cartes majeures and our aces (not again in a replay)."""
        if not self.signals_on or self.replay_left:
            return
        aces = sum(card[0] == "1" for card in self.hand)
        said = [(MAJORS[c], None) for c in self.hand if c in MAJORS] + [("aces", aces)] * (aces > 0)
        for name, n in said or [("useless_hand", None)]:
            await self.send({"type": "signal", "table": self.table, "signal": name, "n": n})

    async def maybe_act(self) -> None:
        """Act when it is our turn, once the replay is read and no action awaits its reply."""
        if (self.over or self.to_act is None or self.to_act != self.seat or self.replay_left
                or self.head or any(p["type"] in ACTIONS for p in self.pending.values())):
            return
        if self.phase == "chanter_vote":        # R9: never ask for the talon
            await self.send({"type": "chanter_vote", "table": self.table, "vote": False})
        elif self.phase == "chanter_discard":   # R9: keep the nine strongest
            weakest = sorted(self.hand, key=strength)[:6]
            await self.send({"type": "discard", "table": self.table, "cards": weakest})
        elif self.phase == "play":              # R10: every card in hand is legal
            top = max(map(strength, self.trick), default=0)
            winners = [c for c in self.hand if strength(c) > top]   # R11: beat the top card
            card = min(winners or self.hand, key=strength)
            await self.send({"type": "play", "table": self.table, "card": card})


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[2:4]]
    sys.exit(asyncio.run(Bot(sys.argv[1], *(args + [5, 0][len(args):])).run()))
