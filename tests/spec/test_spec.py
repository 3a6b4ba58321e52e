"""One specification for both clients (issue 29, part 3): every vector of tests/spec/ run
against the Python client (protocol/session.py, client_cli/model.py, the rules' scorer and
client_cli/explain.py) and against the browser's modules under node (session.mjs, model.mjs,
explain.mjs). A vector that one implementation fails is a drift: fix the implementation
that is wrong, never the vector to fit it (docs/ARCHITECTURE.md, "One session
specification"). The JavaScript half is skipped, with its reason, where node is missing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from . import pydriver
from .spec import AREAS, NODE, check, load, run_node, vectors

PY_DRIVERS = {"session": pydriver.run_session, "model": pydriver.run_model,
              "explain": pydriver.run_explain}

CASES = [(area, path) for area in AREAS for path in vectors(area) if area in PY_DRIVERS]
IDS = [f"{area}/{path.stem}" for area, path in CASES]


@pytest.mark.parametrize(("area", "path"), CASES, ids=IDS)
def test_python(area: str, path: Path) -> None:
    check(path, PY_DRIVERS[area](load(path)))


@pytest.fixture(scope="module")
def node_observations() -> dict[str, dict[str, list[dict[str, Any]]]]:
    if NODE is None:
        pytest.skip("node is not installed")
    return {area: run_node(area) for area in AREAS if area in PY_DRIVERS}


@pytest.mark.parametrize(("area", "path"), CASES, ids=IDS)
def test_javascript(area: str, path: Path,
                    node_observations: dict[str, dict[str, list[dict[str, Any]]]]) -> None:
    check(path, node_observations[area][path.name])


def test_every_area_has_vectors() -> None:
    for area in PY_DRIVERS:
        assert vectors(area), area
