"""Several real ``aluette-server`` processes on one store (issue 11)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from tests.durability.conftest import ServerProcess, free_port


class Fleet:
    """Server processes sharing one Redis and key prefix, each on its own port."""

    def __init__(self, redis_url: str, key_prefix: str) -> None:
        self.redis_url = redis_url
        self.key_prefix = key_prefix
        self.procs: list[ServerProcess] = []
        self.ports: list[int] = []
        self.ids: list[str] = []      # each process's id in the cluster

    async def start(self, *extra: str, port: int | None = None) -> int:
        port = port or free_port()
        proc = ServerProcess(["--port", str(port), "--redis-url", self.redis_url,
                              "--key-prefix", self.key_prefix, "--bot-workers", "0",
                              "--lease-ttl", "2", "--lease-renew", "0.5", *extra])
        await proc.start()
        from tests.server.test_health import http_get

        _, body = await http_get(port, "/healthz")
        self.procs.append(proc)
        self.ports.append(port)
        self.ids.append(body["cluster"]["process"])
        return len(self.procs) - 1

    def url(self, i: int) -> str:
        return f"ws://127.0.0.1:{self.ports[i]}"


async def registered(fleet: Fleet, redis_client: Any, clients: list[Any], tag: str) -> None:
    """Mark each client's session as an account's (what a login does), for a rated queue:
    account ``<tag><i>``."""
    for i, c in enumerate(clients):
        key = f"{fleet.key_prefix}:{{pl:{c.welcome['player_id']}}}:session"
        await redis_client.hset(key, "account", f"{tag}{i}")


@pytest.fixture
async def fleet(redis_url: str, key_prefix: str, redis_client: Any
                ) -> AsyncIterator[Fleet]:
    f = Fleet(redis_url, key_prefix)
    yield f
    for p in f.procs:
        if p.proc and p.proc.returncode is None:
            p.proc.kill()
            await p.proc.wait()


@pytest.fixture
def fleet_factory() -> Callable[[str, str], Fleet]:
    return Fleet
