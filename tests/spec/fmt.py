"""Lay out the specification's vectors the same way: `python -m tests.spec.fmt [FILE...]`
(every vector when none is named). One step per line where it fits in 120 columns, so a diff
of a vector reads step by step; longer steps are indented. Nothing else changes."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from .spec import AREAS, SPEC

WIDTH = 120


def _one_line(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _lay_out(value: Any, indent: int, lead: int = 0) -> str:
    """``value`` at column ``indent``, its first line after ``lead`` characters (a key)."""
    pad = " " * indent
    flat = _one_line(value)
    if len(flat) + indent + lead <= WIDTH or not isinstance(value, dict | list) or not value:
        return flat
    inner = " " * (indent + 2)
    if isinstance(value, list):
        items = [inner + _lay_out(v, indent + 2) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    items = []
    for k, v in value.items():
        key = f"{json.dumps(k, ensure_ascii=False)}: "
        items.append(inner + key + _lay_out(v, indent + 2, len(key)))
    return "{\n" + ",\n".join(items) + "\n" + pad + "}"


def lay_out(vector: dict[str, Any]) -> str:
    return _lay_out(vector, 0) + "\n"


def main(argv: list[str]) -> None:
    paths = [Path(a) for a in argv] or [p for area in AREAS
                                        for p in sorted((SPEC / area).rglob("*.json"))]
    for path in paths:
        text = lay_out(json.loads(path.read_text(encoding="utf-8")))
        if text != path.read_text(encoding="utf-8"):
            path.write_text(text, encoding="utf-8")
            print(f"laid out {path}")


if __name__ == "__main__":
    main(sys.argv[1:])
