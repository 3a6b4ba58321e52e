"""The conformance kit for client authors (issue 33, Build 4): conformance/run.py, run as a
third party runs it, against real ``aluette-server`` processes it starts itself.

It must pass on the server as it is, fail (naming the transcript, the step and the field)
on a server that answers otherwise, check the vectors, and start each server under the
settings a transcript names, by the server's own environment variables.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from conformance.run import RECORDED_UNDER, check_vectors, env_name
from server.config import ENV

ROOT = Path(__file__).resolve().parents[2]
TRANSCRIPTS = sorted((ROOT / "tests" / "conformance" / "transcripts").glob("*.json"))


async def run_kit(*args: str) -> subprocess.CompletedProcess[str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(ROOT / "conformance" / "run.py"), *args, cwd=ROOT,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 300)
    assert proc.returncode is not None
    return subprocess.CompletedProcess(args, proc.returncode, out.decode(), err.decode())


async def test_the_kit_passes_every_case_against_real_servers(redis_url: str,
                                                              redis_client: Any) -> None:
    done = await run_kit("--redis-url", redis_url)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "vectors: ok"
    assert lines[1:] == [f"{p.stem}: ok" for p in TRANSCRIPTS]


async def test_the_kit_names_what_a_server_answered_otherwise(tmp_path: Path, redis_url: str,
                                                              redis_client: Any) -> None:
    """A transcript that expects something else than the server sends fails, and says where:
    here a seat the server gives as seat 1 is expected as seat 2."""
    lobby = json.loads((ROOT / "tests/conformance/transcripts/10_lobby.json").read_text())
    steps = lobby["steps"]
    at = next(i for i, s in enumerate(steps)
              if s.get("recv", {}).get("result") == {"table": "$t", "seat": 1})
    steps[at]["recv"]["result"]["seat"] = 2
    (tmp_path / "10_lobby.json").write_text(json.dumps(lobby))
    done = await run_kit("--transcripts", str(tmp_path), "--redis-url", redis_url)
    assert done.returncode == 1
    assert "10_lobby: FAIL" in done.stdout
    assert f"step {at} (B): $.result.seat: 1 != 2" in done.stderr


def test_the_kit_checks_the_vectors_bytes(tmp_path: Path) -> None:
    vectors = json.loads((ROOT / "tests/protocol/golden/vectors.json").read_text())
    assert check_vectors(ROOT / "tests/protocol/golden/vectors.json") == []
    ping = next(v for v in vectors if v["name"] == "ping")
    ping["hex"] = ping["hex"][:-2] + "03"                 # id 2 in the message, 3 in the bytes
    (tmp_path / "vectors.json").write_text(json.dumps(vectors))
    assert check_vectors(tmp_path / "vectors.json") == [
        "vector ping: the bytes do not decode to the message",
        "vector ping: the message does not encode to the bytes"]


def test_the_kit_sets_each_setting_by_the_servers_own_variable() -> None:
    """The runner imports nothing of the server: its rule for the environment variables
    must give the server's own name for every setting a transcript uses."""
    used = set(RECORDED_UNDER)
    for path in TRANSCRIPTS:
        used |= set(json.loads(path.read_text()).get("settings", {}))
    assert {"hello_timeout_s", "rate_burst", "max_spectators", "chat_per_second"} <= used
    assert {k: env_name(k) for k in used} == {k: ENV[k] for k in used}
