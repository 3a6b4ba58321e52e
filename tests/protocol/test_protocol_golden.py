"""Golden vectors: the exact bytes of representative messages are checked in.

An accidental wire change (a renamed field, a reordered struct, a new default) fails here;
an intended one regenerates the file with ``ALUETTE_REGEN_GOLDEN=1`` and is reviewed as a
protocol change (docs/PROTOCOL.md, "Versions").
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import msgpack
import pytest
from protocol_samples import golden_messages

import protocol

GOLDEN = Path(__file__).parent / "golden" / "vectors.json"


def _current() -> list[dict[str, object]]:
    return [
        {
            "name": name,
            "direction": direction,
            "message": protocol.to_dict(msg),
            "hex": protocol.encode(msg).hex(),
        }
        for name, direction, msg in golden_messages()
    ]


if os.environ.get("ALUETTE_REGEN_GOLDEN") == "1":  # pragma: no cover - maintainer tool
    GOLDEN.write_text(json.dumps(_current(), indent=1, ensure_ascii=False) + "\n")

VECTORS = json.loads(GOLDEN.read_text())
BY_NAME = {v["name"]: v for v in VECTORS}


def test_every_sample_has_a_vector_and_back() -> None:
    assert [v["name"] for v in VECTORS] == [name for name, _, _ in golden_messages()]


@pytest.mark.parametrize(("name", "direction", "msg"), golden_messages(), ids=lambda x: str(x))
def test_encode_matches_golden_bytes(name: str, direction: str, msg: object) -> None:
    assert protocol.encode(msg).hex() == BY_NAME[name]["hex"]  # type: ignore[arg-type]


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v["name"])
def test_golden_bytes_decode_and_reencode(vector: dict[str, str]) -> None:
    frame = bytes.fromhex(vector["hex"])
    decode = protocol.decode_client if vector["direction"] == "client" else protocol.decode_server
    msg = decode(frame)
    assert protocol.encode(msg) == frame
    assert protocol.to_dict(msg) == vector["message"]


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v["name"])
def test_golden_bytes_are_plain_msgpack(vector: dict[str, object]) -> None:
    """Any msgpack library reads and writes the same bytes (here: msgpack-python)."""
    frame = bytes.fromhex(str(vector["hex"]))
    assert msgpack.unpackb(frame) == vector["message"]
    assert msgpack.packb(vector["message"]) == frame
