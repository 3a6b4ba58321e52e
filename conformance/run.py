"""The conformance kit's reference runner: the protocol's recorded cases against a live server.

    python conformance/run.py                       # every transcript, and the vectors
    python conformance/run.py -k 11_game -k 06      # some transcripts
    python conformance/run.py --redis-url redis://127.0.0.1:6379/0

It needs Python 3.11+, ``websockets`` and ``msgpack``, nothing of the project's code, so
that it reads as a specification: port it to your language and your client's codec and
transport pass the same cases as the project's clients (conformance/README.md says how).

- **Vectors** (``tests/protocol/golden/vectors.json``): each message's exact bytes. Decoding
  the bytes must give the message, and encoding the message must give the bytes.
- **Transcripts** (``tests/conformance/transcripts/*.json``): conversations with a real
  server, frame by frame. For each one the runner starts a fresh ``aluette-server`` (the
  transcript's ``settings`` set as its environment), sends each client frame and checks
  that each frame the server sends is exactly the one recorded, ``"*"`` matching anything
  and ``"$name"`` matching what it captured the first time (a token, a table id, a hand).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgpack
import websockets

ROOT = Path(__file__).resolve().parent.parent
TRANSCRIPTS = ROOT / "tests" / "conformance" / "transcripts"
VECTORS = ROOT / "tests" / "protocol" / "golden" / "vectors.json"
#: The server conditions every transcript was recorded under; a transcript's ``settings``
#: override them. No admission control (``server_busy`` must not depend on the machine).
RECORDED_UNDER = {"hello_timeout_s": 5, "sweep_interval_s": 3600, "bot_workers": 0,
                  "busy_lag_ms": 0}
REF = re.compile(r"\$[A-Za-z]\w*(\.\d+)?\Z")
PING_IDS = 10**9          # ids of the runner's own pings (``silent`` steps)
TIMEOUT_S = 10.0          # how long a ``recv`` waits for its frame


class Mismatch(AssertionError):
    """The server sent something else than the transcript says (or nothing)."""


def env_name(setting: str) -> str:
    """The environment variable of an ``aluette-server`` setting: ``hello_timeout_s`` is
    ``ALUETTE_HELLO_TIMEOUT``, ``rate_burst`` is ``ALUETTE_RATE_BURST``."""
    return "ALUETTE_" + re.sub(r"_S\Z", "", setting.upper())


def lookup(ref: str, names: dict[str, Any]) -> Any:
    """``$name``, or ``$name.N``: the N-th item of a captured list."""
    name, _, index = ref.partition(".")
    return names[name][int(index)] if index else names[name]


def match(expected: Any, actual: Any, names: dict[str, Any], path: str = "$") -> None:
    """``actual`` is exactly ``expected`` (same keys, same types), with ``*`` and ``$name``."""
    if expected == "*":
        return
    if isinstance(expected, str) and REF.match(expected):
        if "." not in expected and expected not in names:
            names[expected] = actual              # captured the first time it is seen
            return
        if lookup(expected, names) != actual:
            raise Mismatch(f"{path}: {actual!r} != {expected} ({lookup(expected, names)!r})")
        return
    if isinstance(expected, dict):
        if not isinstance(actual, dict) or set(expected) != set(actual):
            got = sorted(actual) if isinstance(actual, dict) else actual
            raise Mismatch(f"{path}: keys {got!r} != {sorted(expected)}")
        for key, value in expected.items():
            match(value, actual[key], names, f"{path}.{key}")
        return
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            raise Mismatch(f"{path}: {actual!r} != {expected!r}")
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            match(e, a, names, f"{path}[{i}]")
        return
    if expected != actual or type(expected) is not type(actual):
        raise Mismatch(f"{path}: {actual!r} != {expected!r}")


def substitute(value: Any, names: dict[str, Any]) -> Any:
    """A frame to send, its ``$name`` (``$name.N``) replaced by what was captured."""
    if isinstance(value, str) and REF.match(value) and value.partition(".")[0] in names:
        return lookup(value, names)
    if isinstance(value, dict):
        return {k: substitute(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, names) for v in value]
    return value


async def receive(ws: Any) -> dict[str, Any]:
    frame = await asyncio.wait_for(ws.recv(), TIMEOUT_S)
    if not isinstance(frame, bytes):
        raise Mismatch("the server sent a text frame")
    decoded = msgpack.unpackb(frame)
    if not isinstance(decoded, dict):
        raise Mismatch(f"the server sent a {type(decoded).__name__}, not a map")
    return decoded


async def step(s: dict[str, Any], peers: dict[str, Any], url: str,
               names: dict[str, Any]) -> None:
    who = s["as"]
    if s.get("connect"):
        peers[who] = await websockets.connect(url, compression=None, max_size=2**20)
    elif "send" in s:
        await peers[who].send(msgpack.packb(substitute(s["send"], names)))
    elif "send_hex" in s:
        await peers[who].send(bytes.fromhex(s["send_hex"]))
    elif "send_text" in s:
        await peers[who].send(s["send_text"])
    elif "send_padded" in s:                  # a frame made larger than the limit
        frame = dict(substitute(s["send_padded"]["frame"], names))
        frame["pad"] = "x" * s["send_padded"]["bytes"]
        await peers[who].send(msgpack.packb(frame))
    elif "recv" in s:
        match(s["recv"], await receive(peers[who]), names)
    elif "silent" in s:                       # nothing else is waiting for this peer
        names["#ping"] = names.get("#ping", PING_IDS) + 1
        await peers[who].send(msgpack.packb({"type": "ping", "id": names["#ping"]}))
        match({"type": "pong", "id": names["#ping"]}, await receive(peers[who]), names)
    elif "closed" in s:
        try:
            extra = await receive(peers[who])
            raise Mismatch(f"expected the close, got {extra!r}")
        except websockets.ConnectionClosed:
            pass
        if peers[who].close_code != s["closed"]:
            raise Mismatch(f"closed with {peers[who].close_code}, not {s['closed']}")
    elif s.get("disconnect"):
        await peers[who].close()              # the player's connection drops
    elif "wait_s" in s:
        await asyncio.sleep(s["wait_s"])      # only to let a server timer expire
    else:
        raise ValueError(f"unknown step {s!r}")


async def replay(transcript: dict[str, Any], url: str) -> None:
    """Play one transcript against the server at ``url``; raises :class:`Mismatch`."""
    peers: dict[str, Any] = {}
    names: dict[str, Any] = {}
    try:
        for i, s in enumerate(transcript["steps"]):
            try:
                await step(s, peers, url, names)
            except (Mismatch, TimeoutError, websockets.ConnectionClosed) as exc:
                why = str(exc) or type(exc).__name__
                raise Mismatch(f"{transcript['name']} step {i} ({s['as']}): {why}") from None
    finally:
        for ws in peers.values():
            await ws.close()


@contextlib.asynccontextmanager
async def fresh_server(settings: dict[str, Any], command: list[str],
                       redis_url: str | None) -> AsyncIterator[str]:
    """A fresh ``aluette-server`` (its own key prefix, or its own embedded store) under the
    transcript's settings; yields its ``ws://`` URL."""
    env = {**os.environ, **{env_name(k): str(v) for k, v in
                            {**RECORDED_UNDER, **settings}.items()}}
    with tempfile.TemporaryDirectory() as data:
        store = ["--redis-url", redis_url] if redis_url else ["--data-dir", data]
        proc = await asyncio.create_subprocess_exec(
            *command, "--host", "127.0.0.1", "--port", "0", *store,
            "--key-prefix", f"conformance-{uuid.uuid4().hex[:12]}", env=env,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        assert proc.stdout is not None
        drain: asyncio.Future[bytes] | None = None
        try:
            url = None
            async with asyncio.timeout(60):
                while url is None:
                    line = (await proc.stdout.readline()).decode()
                    if not line:
                        raise RuntimeError("the server did not start")
                    found = re.search(r"listening on (ws://\S+)", line)
                    url = found.group(1).rstrip("/") if found else None
            drain = asyncio.ensure_future(proc.stdout.read())   # its log, never a full pipe
            yield url
        finally:
            if proc.returncode is None:
                proc.terminate()
                try:
                    await asyncio.wait_for(proc.wait(), 30)
                except TimeoutError:
                    proc.kill()
                    await proc.wait()
            if drain is not None:
                await drain


def check_vectors(path: Path) -> list[str]:
    """Each golden vector's bytes decode to its message, and its message encodes to them."""
    problems = []
    for v in json.loads(path.read_text(encoding="utf-8")):
        frame = bytes.fromhex(v["hex"])
        if msgpack.unpackb(frame) != v["message"]:
            problems.append(f"vector {v['name']}: the bytes do not decode to the message")
        if msgpack.packb(v["message"]) != frame:
            problems.append(f"vector {v['name']}: the message does not encode to the bytes")
    return problems


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-k", action="append", default=[], metavar="NAME",
                        help="only the transcripts whose file name contains NAME")
    parser.add_argument("--transcripts", type=Path, default=TRANSCRIPTS)
    parser.add_argument("--vectors", type=Path, default=VECTORS)
    parser.add_argument("--redis-url", help="the Redis the servers use (default: embedded)")
    parser.add_argument("--server", default=f"{sys.executable} -m server.app",
                        help="the command that runs the server (its flags are added)")
    args = parser.parse_args(argv)
    failures = check_vectors(args.vectors)
    print(f"vectors: {'FAIL' if failures else 'ok'}")
    for path in sorted(args.transcripts.glob("*.json")):
        if args.k and not any(k in path.name for k in args.k):
            continue
        transcript = json.loads(path.read_text(encoding="utf-8"))
        try:
            async with fresh_server(transcript.get("settings", {}), args.server.split(),
                                    args.redis_url) as url:
                await replay(transcript, url)
            print(f"{path.stem}: ok")
        except (Mismatch, RuntimeError, TimeoutError) as exc:
            failures.append(f"{path.stem}: {exc}")
            print(f"{path.stem}: FAIL")
    for failure in failures:
        print(failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
