"""Build scripted deals for record tests: choose each trick's winner, get legal cards."""

from __future__ import annotations

from server.game.cards import ALL_CARDS, STRENGTH
from server.game.seats import left_of


def build_deal(dealer: int, winners: list[int | None]) -> dict:
    """A record deal whose nine tricks are won by ``winners`` (None = spoiled, R11).

    The winner of a trick plays the strongest card left; a spoiled trick has its leader and
    the next seat play two equal top cards; everyone else discards the weakest cards left.
    """
    pool = sorted(ALL_CARDS, key=lambda c: -STRENGTH[c])
    hands: list[list[str]] = [[], [], [], []]
    tricks: list[list[str]] = []
    leader = left_of(dealer)
    for w in winners:
        by_seat: dict[int, str] = {}
        if w is None:
            for i, c in enumerate(pool):
                twins = [d for d in pool[i + 1 :] if STRENGTH[d] == STRENGTH[c]]
                if twins:
                    by_seat[leader], by_seat[left_of(leader)] = c, twins[0]
                    pool.remove(c)
                    pool.remove(twins[0])
                    break
        else:
            by_seat[w] = pool.pop(0)
        for seat in range(4):
            if seat not in by_seat:
                by_seat[seat] = pool.pop()
        cards = [by_seat[(leader + i) % 4] for i in range(4)]
        tricks.append(cards)
        for seat, card in by_seat.items():
            hands[seat].append(card)
        leader = leader if w is None else w
    return {"dealer": dealer, "hands": hands, "tricks": tricks}


def build_record(deals: list[dict], **options: object) -> dict:
    opts = {"deals": len(deals)}
    opts.update(options)
    return {"format": "aluette-record/1", "options": opts, "seats": ["Ana", "Bo", "Cy", "Di"],
            "deals": deals}
