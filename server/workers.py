"""``aluette-server --workers N``: N server processes on one port, sharing one store.

The parent opens the storage (the embedded store, or checks ``--redis-url``), then starts
N ordinary ``aluette-server`` processes that listen on the same port with SO_REUSEPORT
(the kernel spreads connections among them) and share the store like processes on
different machines would (docs/ARCHITECTURE.md, "Many processes"). The parent supervises
them: a child that dies is started again (its tables' leases pass to the others within
``--lease-ttl`` meanwhile); a store that had to be restarted on a new port restarts the
children with its new address; SIGTERM stops the children gracefully, then the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import sys
from collections.abc import Sequence
from urllib.parse import quote

from server.store import StorageConfig, open_storage

from .config import Settings

log = logging.getLogger("aluette.workers")


def _log_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and (exc := task.exception()) is not None:
        log.error("reading a worker's output failed", exc_info=exc)


def _free_port(host: str) -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _store_url(storage: object, settings: Settings) -> str:
    """The address children use: the given Redis URL, or the embedded store's with its
    password (handed over in the environment, never on a command line)."""
    embedded = getattr(storage, "embedded", None)
    if embedded is None:
        return settings.redis_url
    return f"redis://:{quote(embedded.password, safe='')}@127.0.0.1:{embedded.port}"


class Child:
    def __init__(self, index: int, argv: list[str], env: dict[str, str]) -> None:
        self.index = index
        self.argv = argv
        self.env = env
        self.proc: asyncio.subprocess.Process | None = None
        self.ready = asyncio.Event()
        self._reader: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self.ready.clear()
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "server.app", *self.argv, env=self.env,
            stdout=asyncio.subprocess.PIPE, stderr=None)
        # Kept, and awaited in stop(): its failure is logged, never lost.
        self._reader = asyncio.get_running_loop().create_task(self._read())
        self._reader.add_done_callback(_log_failure)

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            text = line.decode(errors="replace").rstrip()
            if "listening on" in text:
                self.ready.set()
            print(f"[worker {self.index}] {text}", flush=True)

    async def stop(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), 30)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader


async def run_workers(settings: Settings, argv: Sequence[str]) -> int:
    port = settings.port or _free_port(settings.host)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        loop.add_signal_handler(sig, stop.set)
    cfg = StorageConfig(redis_url=settings.redis_url, data_dir=settings.data_dir,
                        key_prefix=settings.key_prefix)
    async with open_storage(cfg) as storage:
        child_argv = [a for a in _strip(argv)] + ["--workers", "1", "--port", str(port)]
        children: list[Child] = []
        url = _store_url(storage, settings)
        env = {**os.environ, "REDIS_URL": url, "ALUETTE_REUSE_PORT": "1",
               "PYTHONUNBUFFERED": "1"}
        children = [Child(i, child_argv, env) for i in range(settings.workers)]
        for child in children:
            await child.start()
        await asyncio.wait_for(asyncio.gather(*(c.ready.wait() for c in children)), 120)
        print(f"aluette-server listening on ws://{settings.host}:{port} with "
              f"{settings.workers} workers (health: http://{settings.host}:{port}/healthz)",
              flush=True)
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 1.0)
            if stop.is_set():
                break
            new_url = _store_url(storage, settings)
            if new_url != url:            # the store was restarted on a new port
                url = new_url
                log.warning("the store moved; restarting the workers with its new address")
                for child in children:
                    child.env = {**child.env, "REDIS_URL": url}
                    await child.stop()
                    await child.start()
            for child in children:
                if child.proc is not None and child.proc.returncode is not None:
                    log.error("worker %d exited (%s); starting it again", child.index,
                              child.proc.returncode)
                    await child.start()
        await asyncio.gather(*(c.stop() for c in children))
    print("aluette-server stopped", flush=True)
    return 0


def _strip(argv: Sequence[str]) -> list[str]:
    """The parent's own flags that children must not repeat (they get their own)."""
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if name in ("--workers", "--port", "--redis-url", "--data-dir"):
            skip = "=" not in arg
            continue
        out.append(arg)
    return out
