"""Same seed, same view, same decision (docs/ARCHITECTURE.md convention 2); and a bot cannot reach a
card its seat may not see (convention 4: the view is all it gets)."""

from __future__ import annotations

import ast
import copy
import random
from pathlib import Path

import msgspec
import pytest

from protocol import TableView
from server.bots import LEVELS, Budget, decide
from server.game import ALL_CARDS, Match, Options, Play, view

BUDGET = Budget(steps=2000, worlds_cap=20)
BOTS_DIR = Path(__file__).resolve().parents[2] / "server" / "bots"


def positions(seed: int, chanter: bool = False) -> list[TableView]:
    """Views of the seat to act along one deal played by normal bots."""
    m, _ = Match.new(Options(deals=1, chanter=chanter, signals="private"), seed)
    out = []
    while not m.over:
        seat = m.to_act
        assert seat is not None
        v = view(m, seat)
        out.append(v)
        m.apply(decide("normal", v, random.Random(0)).action)  # type: ignore[arg-type]
    return out


@pytest.mark.parametrize("level", LEVELS)
def test_same_seed_same_decision(level: str) -> None:
    for v in positions(11, chanter=True)[::4]:
        a = decide(level, copy.deepcopy(v), random.Random(42), BUDGET)
        b = decide(level, copy.deepcopy(v), random.Random(42), BUDGET)
        assert a == b


def test_bot_does_not_mutate_the_view() -> None:
    for v in positions(12)[::5]:
        before = msgspec.json.encode(v)
        decide("expert", v, random.Random(1), BUDGET)
        assert msgspec.json.encode(v) == before


def _cards_in(obj: object) -> set[str]:
    """Every card code anywhere inside a plain-data structure."""
    if isinstance(obj, str):
        return {obj} if obj in ALL_CARDS else set()
    if isinstance(obj, dict):
        return set().union(*(_cards_in(x) for x in obj.values())) if obj else set()
    if isinstance(obj, list | tuple):
        return set().union(*(_cards_in(x) for x in obj)) if obj else set()
    return set()


@pytest.mark.parametrize("chanter", [False, True])
def test_view_holds_no_hidden_card(chanter: bool) -> None:
    """R8-R9: another hand, the talon and others' discards are never in a bot's input; the
    view is plain data (no Match, nothing to reach through)."""
    m, _ = Match.new(Options(deals=1, chanter=chanter, signals="risky"), 21)
    while not m.over:
        seat = m.to_act
        assert seat is not None
        for s in range(4):
            v = view(m, s)
            # The wire's own view: plain data only, no objects a bot could walk into the match.
            assert type(v) is TableView
            assert msgspec.json.decode(msgspec.json.encode(v), type=TableView) == v
            played = {c for t in m.tricks for c in t["cards"]} | set(m.trick)
            allowed = set(m.hands[s]) | played | set(m.discards[s])
            assert _cards_in(msgspec.to_builtins(v)) <= allowed
            assert {"talon", "hands"}.isdisjoint(TableView.__struct_fields__)
        action = decide("normal", view(m, seat), random.Random(0)).action
        assert action is not None
        m.apply(action)
        if isinstance(action, Play) and len(m.tricks) == 3:
            break


def test_bot_modules_never_import_match() -> None:
    """Only the arena (the shell that runs matches) may touch Match; bots get views."""
    for path in sorted(BOTS_DIR.glob("*.py")):
        if path.name == "arena.py":
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                names = {a.name for a in node.names}
                assert "Match" not in names, path.name
                assert not (node.module or "").endswith("game.match"), path.name
                assert not (node.module or "").endswith("game.views"), path.name
            if isinstance(node, ast.Name):
                assert node.id not in ("Match", "spectator_view"), path.name
