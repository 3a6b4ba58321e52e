"""Check that an Aluette match record was dealt fairly (docs/RULES.md, R8a, aluette-fair/2).

    python3 verify.py RECORD.json [COMMITMENT]     exit 0: proven; 1: not (the reason)

Written from the rule book alone, with the standard library only: the commitment, the seed,
the first dealer (R6, R7), every hand of every deal (R8, R9's exchange) and who noticed
each risky signal (R16). The tricks' legality (R18) is `aluette-record verify`'s job.
"""

import hashlib
import json
import sys

PACK = [rank + suit for suit in "ocbe" for rank in "123456789VCR"]    # R2's order
TOP = ["3o", "3c", "2o", "2c"]                                       # R7's four cards


def sha256(text):
    return hashlib.sha256(text.encode("ascii")).hexdigest()


class Stream:
    """Block i = SHA-256(seed:label:i), read as 32-bit big-endian words, first to last."""

    def __init__(self, seed, label):
        self.prefix, self.i, self.words = f"{seed}:{label}:", 0, []

    def word(self):
        if not self.words:
            block = hashlib.sha256(f"{self.prefix}{self.i}".encode("ascii")).digest()
            self.i += 1
            self.words = [int.from_bytes(block[k:k + 4], "big") for k in range(28, -1, -4)]
        return self.words.pop()

    def below(self, n):                       # unbiased: redraw at or above the limit
        limit = 2**32 - 2**32 % n
        while (w := self.word()) >= limit:
            pass
        return w % n

    def shuffle(self, items):                 # Fisher-Yates, from the last index down
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]
        return items


def first_dealer(seed, options):
    if options["partner_draw"]:               # R7: Madame's holder sits opposite Monsieur's
        holder, seat = {}, 0
        for card in Stream(seed, "partner_draw").shuffle(PACK[:]):
            while seat in holder.values():
                seat = (seat + 1) % 4
            if card in TOP:
                holder[card] = seat
                if len(holder) == 4:
                    break
            seat = (seat + 1) % 4
        return (holder["3o"] + 2) % 4
    if options["first_dealer"] == "random":   # R6
        return Stream(seed, "first_dealer").below(4)
    return options["first_dealer"]


def check(record, commitment):
    """Raise AssertionError, saying what, unless the record's deals follow from the seed."""
    f, options = record["fair"], record["options"]
    assert f["scheme"] == "aluette-fair/2", f"scheme {f['scheme']}: use aluette-record verify"
    assert commitment == f["commitment"] == sha256(
        f"aluette-commit/2:{f['secret']}:{f['salt']}"), "the commitment"
    seed = sha256(f"aluette-seed/2:{f['secret']}:{f['salt']}:"
                  + ",".join(c or "" for c in f["contributions"]))
    assert record["deals"][0]["dealer"] == first_dealer(seed, options), "the first dealer"
    k = 0                                     # the match's signals, counted from 0
    for n, deal in enumerate(record["deals"], start=1):
        d, pack = deal["dealer"], Stream(seed, f"deal:{n}").shuffle(PACK[:])
        hands = {(d + 1 + i) % 4: {pack[12 * r + 3 * i + j] for r in range(3) for j in range(3)}
                 for i in range(4)}           # R8: three rounds of three from the left
        chanter = deal.get("chanter") or {"exchange": False}
        if chanter["exchange"]:               # R9: talon alternately to left and dealer
            for seat, share in (((d + 1) % 4, pack[36::2]), (d, pack[37::2])):
                hands[seat] = (hands[seat] | set(share)) - set(chanter["discards"][seat])
        for seat in range(4):
            assert set(deal["hands"][seat]) == hands[seat], f"deal {n}, seat {seat}'s hand"
        for signal in deal.get("signals", []):   # R16: left opponent, then right
            s, me = Stream(seed, f"signal:{k}"), signal["from_seat"]
            to = {(me + 2) % 4}
            if options["signals"] == "risky":
                to |= {o for o in ((me + 1) % 4, (me + 3) % 4)
                       if s.word() < options["signal_risk"] * 2**32}
            assert set(signal["to"]) == to, f"deal {n}, signal {k + 1}: who noticed it"
            k += 1
    return seed


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as fh:
        rec = json.load(fh)
    try:
        check(rec, sys.argv[2] if len(sys.argv) > 2 else rec["fair"]["commitment"])
    except (AssertionError, KeyError, TypeError) as exc:
        sys.exit(f"NOT PROVEN: {exc}")
    print(f"proven: {len(rec['deals'])} deals follow from commitment {rec['fair']['commitment']}")
