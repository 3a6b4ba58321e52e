"""The browser's fair-deal checks (server/web/static/js/fair.mjs, R8a) under node, against
the server: docs/RULES.md's test vectors, true and tampered reveals, and the same battery
of real records as the server's and docs/verify/'s verifiers (test_fair_v2.py), scheme 1
records included. Skipped without node."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from server.game import fair
from server.game.cards import ALL_CARDS
from server.game.errors import RecordError

from .fair_vectors import documented
from .snippet import NODE
from .test_fair_v2 import DATA, battery, needs_node

JS = Path(__file__).resolve().parent / "js"
ROOT = Path(__file__).resolve().parents[2]


def _python(record: dict[str, Any], expected: str | None) -> str | None:
    try:
        fair.check_record(record, expected)
    except RecordError as exc:
        return str(exc)
    return None


@needs_node
def test_the_pages_fair_deal_checks_agree_with_the_server(tmp_path: Path) -> None:
    reveals = [fair.reveal(*fair.new_secret(), [None, f"{n:02x}", None, "ab" * 32])
               for n in range(4)]
    reveals.append(fair.reveal(*fair.new_secret(), ["01", None, None, None], 1))
    records = [{"name": name, "record": record, "expected": expected,
                "python": _python(record, expected)} for name, record, expected in battery()]
    for path in sorted(DATA.glob("v1-*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        records.append({"name": "scheme 1", "record": record,
                        "expected": record["fair"]["commitment"], "python": None})
    assert all((r["python"] is None) == (r["name"] in ("genuine", "scheme 1")) for r in records)
    path = tmp_path / "fair.json"
    path.write_text(json.dumps({"vectors": documented(), "all_cards": list(ALL_CARDS),
                                "reveals": reveals, "records": records}), encoding="utf-8")
    assert NODE is not None
    done = subprocess.run([NODE, "--test", str(JS / "fair.test.mjs")], capture_output=True,
                          text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, "FAIR_VECTORS": str(path)})
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout and "# pass 7" in done.stdout
