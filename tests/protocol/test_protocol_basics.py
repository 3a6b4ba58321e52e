"""Cards (R2), text cleaning, versions, constants."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

import protocol


def test_exactly_48_card_codes() -> None:
    """R1/R2: 12 ranks x 4 suits, two characters each, all distinct."""
    assert len(set(protocol.CARD_CODES)) == 48
    assert all(len(c) == 2 for c in protocol.CARD_CODES)
    assert {"3o", "Rb", "1e", "Cc", "Vo", "9b"} <= set(protocol.CARD_CODES)
    assert not protocol.is_card("10o") and not protocol.is_card("3O") and not protocol.is_card(3)


@given(st.text(max_size=3))
def test_is_card_agrees_with_pattern(s: str) -> None:
    import re

    assert protocol.is_card(s) == bool(re.search(protocol.CARD_PATTERN, s))


def test_clean_text_examples() -> None:
    assert protocol.clean_text("  Ana\x1b[2J \t Bo\x7f\x85\u200b\u202e ") == "Ana[2J Bo"
    assert protocol.clean_text("Zoë 🂡") == "Zoë 🂡"
    assert protocol.clean_text("\x00\x01") == ""


@given(st.text())
def test_clean_text_leaves_no_control_or_format_chars(s: str) -> None:
    out = protocol.clean_text(s)
    assert all(unicodedata.category(ch) not in {"Cc", "Cf", "Cs", "Zl", "Zp"} for ch in out)
    assert out == out.strip() and "  " not in out
    assert protocol.clean_text(out) == out  # idempotent


def test_versions() -> None:
    assert protocol.PROTOCOL_VERSION == 1 and protocol.SUPPORTED_VERSIONS == (1,)
    assert protocol.negotiate([1, 2]) == 1
    assert protocol.negotiate([2, 3]) is None
    err = protocol.unsupported_version(4)
    assert err.code == "unsupported_version" and err.details == {"supported": [1]}
    assert err.id == 4


def test_limits() -> None:
    assert protocol.MAX_FRAME_BYTES == 16 * 1024
    assert protocol.MAX_NAME_LEN == 32
    assert (protocol.RATE_PER_SECOND, protocol.RATE_BURST) == (20, 40)
    assert protocol.CloseCode.UNSUPPORTED_VERSION == 4001
    assert protocol.CloseCode.SLOW_READER == 4008


def test_package_is_sans_io() -> None:
    """docs/ARCHITECTURE.md: protocol imports no websockets, redis or engine."""
    import ast
    from pathlib import Path

    root = Path(protocol.__file__).parent
    for path in root.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            for name in names:
                assert name.split(".")[0] not in {"websockets", "redis", "server", "asyncio"}, (
                    f"{path.name} imports {name}"
                )
