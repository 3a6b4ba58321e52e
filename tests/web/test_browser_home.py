"""The browser client moves to its table's home (issue 32, protocol 1.6 ``home``).

Two real server processes behind a small proxy that routes as deploy/haproxy.cfg does (a
request whose URL says ``home=<i>`` goes to process ``i``; any other to process 1). A real
Chromium opens the page through the proxy, so its socket lands on process 1, and sits at a
table process 0 runs: the page is told the table's home, reconnects through the proxy with
it, lands on process 0, and is dealt its hand there; process 1 holds no connection of it
and no longer hears the table.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.cluster.conftest import Fleet
from tests.cluster.test_homes import health
from tests.durability.conftest import free_port
from tests.server.netclient import NetClient

from .test_browser import WAIT_MS, Player, sit


class Router:
    """What the proxy does for homes, in a few lines: the first request of a connection
    picks the process (``home=<i>`` in its URL, else ``default``), then bytes flow both
    ways untouched."""

    def __init__(self, ports: list[int], default: int) -> None:
        self.ports, self.default = ports, default
        self.routed: list[tuple[str, int]] = []      # (request path, process)
        #: Set once a request named its home.
        self.homed = asyncio.Event()
        self._tasks: set[asyncio.Task[Any]] = set()

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._connection, "127.0.0.1", 0)
        return int(self.server.sockets[0].getsockname()[1])

    async def _connection(self, reader: asyncio.StreamReader,
                          writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            writer.close()
            return
        path = head.split(b"\r\n", 1)[0].split()[1].decode()
        home = parse_qs(urlsplit(path).query).get("home", [""])[0]
        process = int(home) if home.isdigit() and int(home) < len(self.ports) else self.default
        self.routed.append((path, process))
        if home:
            self.homed.set()
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.ports[process])
        up_writer.write(head)

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(ConnectionError):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            with contextlib.suppress(Exception):
                dst.close()
        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    async def close(self) -> None:
        self.server.close()


async def test_the_page_moves_to_its_tables_home_and_plays_there(
        browser: Any, redis_url: str, key_prefix: str, redis_client: Any) -> None:
    ports = [free_port(), free_port()]
    router = Router(ports, default=1)
    proxy = await router.start()
    fleet = Fleet(redis_url, key_prefix)
    ana = None
    try:
        for i, port in enumerate(ports):
            await fleet.start("--advertise-url", f"ws://127.0.0.1:{proxy}/?home={i}",
                              port=port)
        ana = await NetClient.open(fleet.url(0), "Ana")          # straight to process 0
        table = (await ana.call("create_table", options={
            "deals": 1, "bot_delay_ms": 0, "signals": "off"}))["table"]

        base = f"http://127.0.0.1:{proxy}"
        bo = await Player.open(browser, base, "Bo")
        await sit(bo, f"{base}/t/{table}", 1)
        # The page's socket went to process 1, was told process 0's URL, and came back
        # through the proxy with it.
        async with asyncio.timeout(WAIT_MS / 1000):
            await router.homed.wait()
        assert [p for path, p in router.routed if "home=" in path] == [0]
        await bo.online()
        async with asyncio.timeout(WAIT_MS / 1000):
            while True:
                left = await health(ports[1])
                if left["connections"] == 0 and left["resting_tables"] == 1:
                    break
                await asyncio.sleep(0.1)
        assert (await health(ports[0]))["connections"] == 2      # Ana and Bo

        # R8: the match starts and the page, now on process 0, is dealt its nine cards.
        await ana.call("start", table=table)
        await bo.page.wait_for_function(
            "() => document.querySelectorAll('#hand [data-card]').length === 9",
            timeout=WAIT_MS)
        assert (await bo.state())["seat"] == "1"
        assert bo.csp_or_script_errors() == []
    finally:
        if ana is not None:
            await ana.close()
        for p in fleet.procs:
            if p.proc and p.proc.returncode is None:
                p.proc.kill()
                await p.proc.wait()
        await router.close()
