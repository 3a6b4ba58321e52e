"""The standalone verifiers of docs/verify/ (R8a), loaded from the documents themselves, so
the programs a third party would copy are the ones the tests run: ``verify.py`` imported
as a module, ``verify.mjs`` run by node on a record file."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

VERIFY = Path(__file__).resolve().parents[2] / "docs" / "verify"
NODE = shutil.which("node")


def verifier() -> ModuleType:
    """docs/verify/verify.py as a module."""
    spec = importlib.util.spec_from_file_location("aluette_doc_verify", VERIFY / "verify.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check_fair() -> Callable[[dict[str, Any], str], None]:
    """docs/verify/verify.py's check: raises AssertionError (saying what) unless the
    record's deals follow from the commitment."""
    check = verifier().check

    def run(record: dict[str, Any], commitment: str) -> None:
        check(record, commitment)

    return run


def run_node(record: dict[str, Any], commitment: str | None, tmp: Path
             ) -> subprocess.CompletedProcess[str]:
    """``node docs/verify/verify.mjs RECORD [COMMITMENT]`` on ``record``."""
    assert NODE is not None
    path = tmp / f"record-{abs(hash(json.dumps(record, sort_keys=True)))}.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    args = [NODE, str(VERIFY / "verify.mjs"), str(path)] + ([commitment] if commitment else [])
    return subprocess.run(args, capture_output=True, text=True, timeout=60, check=False)
