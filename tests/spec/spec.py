"""The specification's vectors and how an implementation's observations are checked.

A vector (``tests/spec/<area>/*.json``) is a list of steps; each step gives one input and,
optionally, what must come out of it (``out``: the outputs, in order) and what the client
must hold or show afterwards (``state`` for a session, ``shows`` for a table model,
``outcome`` for a deal). Each implementation has a *driver* (tests/spec/pydriver.py for the
Python client, tests/spec/driver.mjs for the browser's modules) that carries out the inputs
and reports, for every step, what it observed, in the same plain JSON shape. The check
below is written once, here, for both: a drift between the two clients is a vector that one
of them fails.

The comparison is partial on maps, exact elsewhere: a map in the vector names only the keys
it cares about (a key absent from the observation reads as ``null``, as on the wire, where
an optional field left out means nil); lists must have the same length and match item by
item; scalars must be equal and of the same kind (``true`` is not ``1``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import msgpack

SPEC = Path(__file__).resolve().parent
ROOT = SPEC.parents[1]
AREAS = ("session", "model", "explain")
NODE = shutil.which("node")

#: The input keys a step may have, per area (exactly one per step).
INPUTS = {
    "session": ("connect", "receive", "receive_hex", "lost", "command", "resume", "forget"),
    "model": ("event", "discarding", "contributing"),
    "explain": ("deal",),
}
#: The expectation keys a step may have, per area.
EXPECTS = {
    "session": ("out", "state"),
    "model": ("shows",),
    "explain": ("outcome", "facts"),
}


def vectors(area: str) -> list[Path]:
    return sorted((SPEC / area).glob("*.json"))


def _expand(area: str, vector: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A vector's ``new`` (how the client is made) and its steps, after those of the
    situation it starts from (``given``: a file of ``<area>/given/``, itself maybe given
    another), so that a common start is written once."""
    given = vector.get("given")
    new: dict[str, Any] = {}
    before: list[dict[str, Any]] = []
    if given is not None:
        new, before = _expand(area, json.loads(
            (SPEC / area / "given" / f"{given}.json").read_text(encoding="utf-8")))
    return {**new, **vector.get("new", {})}, [*before, *vector["steps"]]


def load(path: Path) -> dict[str, Any]:
    """A vector with its ``given`` start written out (what both drivers are given)."""
    vector: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    area = path.parent.name
    vector["new"], vector["steps"] = _expand(area, vector)
    for n, step in enumerate(vector["steps"], start=1):
        inputs = [k for k in step if k in INPUTS[area]]
        extra = set(step) - set(INPUTS[area]) - set(EXPECTS[area]) - {"note", "resend",
                                                                       "last_seq"}
        if len(inputs) != 1 or extra:
            raise ValueError(f"{path.name} step {n}: one input of {INPUTS[area]} expected, "
                             f"got {sorted(step)}")
    return vector


def unpack_frame(hex_frame: str) -> Any:
    """A frame a client sent, as the plain map the vectors write it in."""
    return msgpack.unpackb(bytes.fromhex(hex_frame), raw=False, strict_map_key=False)


def mismatch(expected: Any, actual: Any, path: str = "") -> str | None:
    """Where ``actual`` departs from ``expected`` (the partial rule above), or None."""
    if isinstance(expected, dict):
        if actual is None:
            actual = {}
        if not isinstance(actual, dict):
            return f"{path or '.'}: expected a map, got {json.dumps(actual)}"
        for key, want in expected.items():
            found = mismatch(want, actual.get(key), f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return f"{path or '.'}: expected {json.dumps(expected)}, got {json.dumps(actual)}"
        for i, (want, got) in enumerate(zip(expected, actual, strict=True)):
            found = mismatch(want, got, f"{path}[{i}]")
            if found:
                return found
        return None
    if (expected != actual or isinstance(expected, bool) != isinstance(actual, bool)
            or (expected is None) != (actual is None)):
        return f"{path or '.'}: expected {json.dumps(expected)}, got {json.dumps(actual)}"
    return None


def describe(step: dict[str, Any]) -> str:
    for key in (*INPUTS["session"], *INPUTS["model"], *INPUTS["explain"]):
        if key in step:
            text = json.dumps(step[key], ensure_ascii=False)
            return f"{key} {text[:120]}"
    return "?"


def check(path: Path, observed: list[dict[str, Any]]) -> None:
    """Fail with the first step whose observation departs from the vector."""
    vector = load(path)
    area = path.parent.name
    for n, step in enumerate(vector["steps"], start=1):
        where = f"{path.parent.name}/{path.name} step {n} ({describe(step)})"
        if n > len(observed):
            raise AssertionError(f"{where}: the driver stopped before this step")
        seen = observed[n - 1]
        if "raised" in seen:
            raise AssertionError(f"{where}: the implementation raised {seen['raised']}")
        for key in EXPECTS[area]:
            if key in step:
                found = mismatch(step[key], seen.get(key), key)
                if found:
                    raise AssertionError(f"{where}: {found}\n  observed {key}: "
                                         f"{json.dumps(seen.get(key), ensure_ascii=False)}")


def run_node(area: str) -> dict[str, list[dict[str, Any]]]:
    """Every vector of ``area`` through the browser's modules (tests/spec/driver.mjs, the
    vectors on its standard input), in one node process: the observations by file name."""
    assert NODE is not None
    given = json.dumps({p.name: load(p) for p in vectors(area)})
    done = subprocess.run([NODE, str(SPEC / "driver.mjs"), area], input=given,
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    if done.returncode != 0:
        raise AssertionError(f"driver.mjs failed: {done.stderr[-4000:]}")
    result: dict[str, list[dict[str, Any]]] = json.loads(done.stdout)
    for observed in result.values():
        for seen in observed:
            seen["out"] = [{"send": unpack_frame(o["send_hex"])} if "send_hex" in o else o
                           for o in seen.get("out", [])]
    return result
