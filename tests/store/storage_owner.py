"""A process that owns a storage (``open_storage``), driven line by line over stdin/stdout.

Tests run it as a separate OS process so it can be SIGKILLed like a crashed server.
Usage::

    python -m tests.store.storage_owner --data-dir DIR [--redis-url URL]
                                        [--key-prefix P] [--no-pdeathsig]

It prints one JSON line when ready (``pid``, ``store_pid``, ``port``, ``identity``), or
``{"error": ..., "message": ...}`` and exits 2 when refused. Then it answers commands, one
JSON line each: ``create <table>``, ``load <table>``, ``check``, ``quit``.

``--no-pdeathsig`` starts the store as on a platform without ``PR_SET_PDEATHSIG``, so a
SIGKILL of this process leaves a real orphan store behind for the next start to deal with.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from server.store import StoreError, open_storage
from server.store import child as child_module
from server.store.runtime import Storage, StorageConfig


def _say(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


async def _serve(storage: Storage) -> None:
    while True:
        line = await asyncio.to_thread(sys.stdin.readline)
        if not line:
            return
        cmd, *args = line.split()
        try:
            if cmd == "create":
                await storage.store.create_table(args[0], f"doc-{args[0]}".encode())
                _say({"ok": True})
            elif cmd == "load":
                loaded = await storage.store.load_table(args[0])
                _say({"ok": True, "doc": None if loaded is None else loaded[1].decode()})
            elif cmd == "check":
                _say({"ok": await storage.check()})
            elif cmd == "quit":
                _say({"ok": True})
                return
            else:
                _say({"ok": False, "error": f"unknown command {cmd}"})
        except StoreError as exc:
            _say({"ok": False, "error": type(exc).__name__, "message": str(exc)})


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", type=Path, default=Path("data"))
    parser.add_argument("--redis-url", default="")
    parser.add_argument("--key-prefix", default="aluette")
    parser.add_argument("--no-pdeathsig", action="store_true")
    args = parser.parse_args()
    if args.no_pdeathsig:
        child_module._pdeathsig_supported = lambda: False
    cfg = StorageConfig(redis_url=args.redis_url, data_dir=args.data_dir,
                        key_prefix=args.key_prefix)
    try:
        async with open_storage(cfg) as storage:
            emb = storage.embedded
            _say({
                "pid": os.getpid(),
                "store_pid": emb.pid if emb else None,
                "port": emb.port if emb else None,
                "identity": storage.identity,
            })
            await _serve(storage)
    except StoreError as exc:
        _say({"error": type(exc).__name__, "message": str(exc)})
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
