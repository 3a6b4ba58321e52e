"""R8a's test vectors, computed by the server's own code (server/game/fair.py, chance.py,
rules.py): docs/RULES.md prints them, and the tests check that the document, the server
and both verifiers of docs/verify/ agree on every one."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from server.game import chance, fair, rules
from server.game.cards import ALL_CARDS

RULES = Path(__file__).resolve().parents[2] / "docs" / "RULES.md"

SECRET, SALT = "ab" * 32, "cd" * 16
CONTRIBUTIONS: list[str | None] = ["9f2c41d0", None, "00ff" * 8, "09"]


def compute() -> dict[str, Any]:
    seed = fair.derive_seed(SECRET, SALT, CONTRIBUTIONS)
    words = chance.Stream(seed, "deal:1")
    pack = list(ALL_CARDS)
    chance.Stream(seed, "deal:1").shuffle(pack)
    draw = rules.partner_draw(chance.Stream(seed, "partner_draw"))
    noticing = []
    for k in range(3):
        s = chance.Stream(seed, f"signal:{k}")
        pair = [s.word(), s.word()]
        noticing.append({"label": f"signal:{k}", "words": pair,
                         "noticed_at_0.25": [w < 0.25 * 2**32 for w in pair]})
    return {
        "secret": SECRET, "salt": SALT, "contributions": CONTRIBUTIONS,
        "commitment": fair.commitment(SECRET, SALT),
        "seed": seed,
        "deal:1 block 0": hashlib.sha256(f"{seed}:deal:1:0".encode()).hexdigest(),
        "deal:1 words": [words.word() for _ in range(10)],
        "deal:1 pack": " ".join(pack),
        "first_dealer": chance.Stream(seed, "first_dealer").below(4),
        "partner_draw": {"turned": " ".join(f"{s}:{c}" for s, c in draw.cards),
                         "seating": draw.seating, "first_dealer": draw.first_dealer},
        "signals": noticing,
    }


def documented() -> dict[str, Any]:
    """The JSON block of docs/RULES.md's R8a test vectors."""
    text = RULES.read_text(encoding="utf-8")
    rule = text[text.index("\nR8a. "):text.index("\nR9. ")]
    (block,) = re.findall(r"```json\n(.*?)```", rule, re.S)
    return json.loads(block)  # type: ignore[no-any-return]


if __name__ == "__main__":
    print(json.dumps(compute(), indent=1))
