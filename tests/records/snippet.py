"""The R8a verification snippet of docs/RULES.md, loaded from the document itself, so the
ten lines a third party would copy are the ones the tests run."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

RULES = Path(__file__).resolve().parents[2] / "docs" / "RULES.md"


def check_fair() -> Callable[[dict[str, Any], str], None]:
    text = RULES.read_text(encoding="utf-8")
    rule = text[text.index("\nR8a. "):text.index("\nR9. ")]
    (code,) = re.findall(r"```python\n(.*?)```", rule, re.S)
    namespace: dict[str, Any] = {}
    exec(compile(code, f"{RULES}:R8a", "exec"), namespace)   # our own document
    return namespace["check_fair"]  # type: ignore[no-any-return]
