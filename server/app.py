"""``aluette-server``: the asyncio websocket shell, set up and torn down in order.

The lifecycle is a stack of context managers (docs/ARCHITECTURE.md): storage (the embedded
Valkey or a Redis URL), the hub with its tables, tasks and bots, then the websocket server.
SIGTERM (or SIGINT, SIGHUP) unwinds them in reverse: stop listening, refuse new commands
(``shutting_down``), let stored work finish, close clients with 1001 (they resume later),
stop every task, then the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import http
import ipaddress
import json
import logging
import os
import signal
import sys
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

import protocol
from protocol import CloseCode
from server.store import StorageConfig, StoreError, open_storage

from . import logs, web
from .config import Settings, parse_settings
from .dispatch import serve_connection
from .hub import Hub
from .loops import loop_factory, running_loop_name
from .metrics import CONTENT_TYPE_LATEST
from .wire import GuardedConnection, WireLimits

log = logging.getLogger("aluette.server")


@dataclass
class Running:
    """A started server: where it listens and its hub (tests look inside)."""

    hub: Hub
    server: Server
    port: int
    store_url: str


def client_address(conn: ServerConnection, request: Request, trusted: frozenset[str]) -> str:
    """The client's address: the peer's, or, when the peer is a trusted proxy, the last
    address in ``X-Forwarded-For`` that is not one of the trusted proxies."""
    peer = conn.remote_address[0] if conn.remote_address else ""
    if peer not in trusted:
        return str(peer)
    forwarded = ",".join(request.headers.get_all("X-Forwarded-For"))
    for hop in reversed([h.strip() for h in forwarded.split(",") if h.strip()]):
        try:
            ipaddress.ip_address(hop)
        except ValueError:
            break
        if hop not in trusted:
            return hop
    return str(peer)


def _process_request(hub: Hub, settings: Settings):  # type: ignore[no-untyped-def]
    trusted = frozenset(a.strip() for a in settings.trusted_proxies.split(",") if a.strip())
    # The browser client; the Host and Origin checks.
    web_request = web.handler(settings.allowed_origins, settings.allowed_hosts, settings.host)

    async def process_request(conn: ServerConnection, request: Request) -> Response | None:
        refused = web.method_refused(request)     # GET and HEAD only (issue 30)
        if refused is not None:
            return refused
        if request.path.split("?")[0] == "/healthz":
            body = await hub.health()
            status = http.HTTPStatus.OK if body["storage"] else http.HTTPStatus.SERVICE_UNAVAILABLE
            data = json.dumps(body).encode()
            headers = Headers([("Content-Type", "application/json"),
                               ("Content-Length", str(len(data))),
                               ("Cache-Control", "no-store")])
            return web.for_method(request, Response(status.value, status.phrase, headers, data))
        if request.path.split("?")[0] == "/metrics":
            data = hub.metrics.render()
            headers = Headers([("Content-Type", CONTENT_TYPE_LATEST),
                               ("Content-Length", str(len(data))),
                               ("Cache-Control", "no-store")])
            return web.for_method(request, Response(200, "OK", headers, data))
        page = web_request(request)
        if page is not None:
            return page
        assert isinstance(conn, GuardedConnection)
        address = client_address(conn, request, trusted)
        conn.client_address = address
        hub.count.by_address[address] += 1
        if hub.count.total > settings.max_connections:
            conn.refusal = (CloseCode.TRY_AGAIN_LATER, "server full; try again later")
            hub.count.refusals["server_full"] += 1
        elif hub.count.by_address[address] > settings.max_connections_per_address:
            conn.refusal = (CloseCode.TRY_AGAIN_LATER, "too many connections from your address")
            hub.count.refusals["address_connections"] += 1
        return None

    return process_request


def storage_config(settings: Settings) -> StorageConfig:
    return StorageConfig(redis_url=settings.redis_url, data_dir=settings.data_dir,
                         key_prefix=settings.key_prefix)


@contextlib.asynccontextmanager
async def running(settings: Settings) -> AsyncIterator[Running]:
    """The whole server, started in order and stopped in reverse."""
    async with open_storage(storage_config(settings)) as storage, \
            Hub(storage.store, settings, storage) as hub:
        log.info("storage: %s (%s)", storage.url_for_logs(), storage.backend)
        limits = WireLimits(settings.max_send_buffer, settings.drain_timeout_s,
                            settings.close_timeout_s, settings.max_pings_per_second)
        async with serve(
            functools.partial(serve_connection, hub),
            settings.host, settings.port,
            create_connection=functools.partial(  # type: ignore[arg-type]
                GuardedConnection, limits=limits, count=hub.count),
            compression=None,
            max_size=protocol.TRANSPORT_MAX_BYTES,
            max_queue=16,
            ping_interval=settings.ping_interval_s,
            ping_timeout=settings.ping_timeout_s,
            close_timeout=settings.close_timeout_s,
            process_request=_process_request(hub, settings),
            # --workers: sibling processes share the port (the kernel spreads connections).
            reuse_port=bool(os.environ.get("ALUETTE_REUSE_PORT")),
            origins=web.ws_origins(web.parse_origins(settings.allowed_origins)),
            server_header=None,
        ) as server:
            port = server.sockets[0].getsockname()[1]
            try:
                yield Running(hub, server, port, storage.url_for_logs())
            finally:
                # Stop listening, refuse commands, let stored work finish, then tell
                # clients we are going away (they resume with their tokens).
                server.close(close_connections=False)
                hub.closing = True
                await hub.lobby.close()
                for client in list(hub.clients):
                    client.drop(CloseCode.GOING_AWAY, "server stopping")
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(settings.close_timeout_s + 1):
                        await server.wait_closed()
                await hub.close()


async def run(settings: Settings) -> None:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    # SIGHUP too: a server started from a terminal that closes still stops its embedded
    # store instead of leaving it running.
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        loop.add_signal_handler(sig, stop.set)
    async with running(settings) as srv:
        # Collection pauses stall the loop (issue 11: 160-170 ms full collections at 400
        # tables piled up store writes): what start-up made is frozen out of every later
        # collection, and young collections run less often.
        gc.collect()
        gc.freeze()
        gc.set_threshold(50_000, 20, 100)
        print(f"aluette-server listening on ws://{settings.host}:{srv.port} "
              f"(play in a browser: http://{settings.host}:{srv.port}/; "
              f"health: http://{settings.host}:{srv.port}/healthz; "
              f"event loop: {running_loop_name()})", flush=True)
        await stop.wait()
        log.info("shutting down")
    print("aluette-server stopped", flush=True)


def store_tool(command: str, argv: Sequence[str]) -> int:
    """``aluette-server backup FILE`` / ``restore FILE`` [storage flags] (issue 30;
    server/store/backup.py, docs/OPERATIONS.md): one JSON line on success."""
    from server.store import backup

    if not argv or argv[0].startswith("-"):
        print(f"usage: aluette-server {command} FILE [--redis-url URL | --data-dir DIR] "
              "[--key-prefix PREFIX]", file=sys.stderr)
        return 2
    settings = parse_settings(argv[1:])
    logs.configure(settings.log_format, logging.WARNING)
    try:
        summary = asyncio.run(backup.run("backup" if command == "backup" else "restore",
                                         Path(argv[0]), storage_config(settings)))
    except (StoreError, backup.BackupError, OSError) as exc:
        print(f"aluette-server {command}: {exc}", file=sys.stderr, flush=True)
        return 2
    print(json.dumps(msgspec.structs.asdict(summary)), flush=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("backup", "restore"):
        return store_tool(args[0], args[1:])
    settings = parse_settings(argv)
    logs.configure(settings.log_format)
    try:
        if settings.workers > 1:
            from .workers import run_workers

            return asyncio.run(run_workers(settings, list(argv or sys.argv[1:])))
        with asyncio.Runner(loop_factory=loop_factory(settings.event_loop)) as runner:
            runner.run(run(settings))
    except StoreError as exc:
        # Refused storage (data directory in use, a store that is not ours, an empty store
        # where the data directory says there was data, no store at all): one clear line.
        print(f"aluette-server: {exc}", file=sys.stderr, flush=True)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
