"""``aluette-server``: the asyncio websocket shell (docs/ARCHITECTURE.md convention 1 and 7).

Frames come in, :mod:`protocol` turns them into commands, the :class:`~.hub.Hub` applies
them, replies and events go out. Lifecycle is a stack of context managers: storage (the
embedded Valkey or a Redis URL), the hub and its tables, the websocket server; SIGTERM
unwinds them in reverse so in-flight writes finish and clients are told.
"""

from __future__ import annotations

import asyncio
import contextlib
import http
import json
import logging
import signal
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

import websockets
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

import protocol
from protocol import CloseCode, ErrorCode
from server.store import EmbeddedStore, StorageUnavailable, Store, connect

from .config import Settings, parse_settings
from .errors import CommandError
from .hub import Hub
from .peer import Peer
from .ratelimit import RateLimiter

log = logging.getLogger("aluette.server")


@dataclass
class Running:
    """A started server: where it listens and its hub (tests look inside)."""

    hub: Hub
    server: Server
    port: int
    store_url: str


def _error(code: ErrorCode, message: str, cid: int | None) -> bytes:
    return protocol.encode(protocol.error(code, message, id=cid))


async def _send(peer: Peer, frame: bytes) -> None:
    with contextlib.suppress(websockets.ConnectionClosed):
        await peer.ws.send(frame)


async def _greet(hub: Hub, peer: Peer, settings: Settings) -> bool:
    """The first frame must be a hello (docs/PROTOCOL.md, "Session flow")."""
    ws = peer.ws
    try:
        frame = await asyncio.wait_for(ws.recv(), settings.hello_timeout_s)
    except TimeoutError:
        await ws.close(CloseCode.HELLO_TIMEOUT, "no hello")
        return False
    try:
        cmd = protocol.decode_client(frame)  # type: ignore[arg-type]
    except protocol.ProtocolError as exc:
        await _send(peer, protocol.encode(protocol.error_reply(exc)))
        await ws.close(CloseCode.PROTOCOL_ERROR, "expected hello")
        return False
    if not isinstance(cmd, protocol.Hello):
        await _send(peer, _error(ErrorCode.HELLO_REQUIRED, "say hello first", cmd.id))
        await ws.close(CloseCode.PROTOCOL_ERROR, "expected hello")
        return False
    try:
        welcome = await hub.hello(peer, cmd)
    except CommandError as exc:
        if exc.code is ErrorCode.UNSUPPORTED_VERSION:
            await _send(peer, protocol.encode(protocol.unsupported_version(cmd.id)))
            await ws.close(CloseCode.UNSUPPORTED_VERSION, "unsupported version")
        elif exc.code is ErrorCode.BAD_TOKEN:
            await _send(peer, _error(exc.code, exc.message, cmd.id))
            await ws.close(CloseCode.BAD_TOKEN, "bad token")
        else:
            await _send(peer, _error(exc.code, exc.message, cmd.id))
            await ws.close(CloseCode.SERVICE_RESTART, exc.code.value)
        return False
    await _send(peer, protocol.encode(welcome))
    return True


async def _serve_connection(hub: Hub, settings: Settings, ws: ServerConnection) -> None:
    peer = Peer(ws, settings.max_send_buffer)
    if len(hub.peers) >= settings.max_connections:
        await ws.close(CloseCode.SERVICE_RESTART, "server full")
        return
    try:
        if not await _greet(hub, peer, settings):
            return
        limiter = RateLimiter(settings.rate_per_second, settings.rate_burst)
        async for frame in ws:
            if peer.dropped:
                continue        # closing: drain what is queued so the close handshake ends
            if peer.retiring is not None:
                await hub.confirm_rotation(peer)
            await _send(peer, await _answer(hub, peer, frame, limiter))
    except websockets.ConnectionClosed:
        pass
    finally:
        await hub.disconnected(peer)


async def _answer(hub: Hub, peer: Peer, frame: bytes | str, limiter: RateLimiter) -> bytes:
    """One command in, one reply out; nothing a client sends can crash the server."""
    try:
        cmd = protocol.decode_client(frame)  # type: ignore[arg-type]
    except protocol.ProtocolError as exc:
        cmd = None
        error = protocol.encode(protocol.error_reply(exc))
    if not limiter.allow():
        if limiter.over_hard_limit:
            peer.close(CloseCode.RATE_LIMITED, "too many commands")
        return _error(ErrorCode.RATE_LIMITED, "too many commands; slow down and resend",
                      cmd.id if cmd is not None else None)
    if cmd is None:
        return error
    try:
        if isinstance(cmd, protocol.Ping):
            return protocol.encode(protocol.Pong(id=cmd.id))
        if isinstance(cmd, protocol.Hello):
            raise CommandError(ErrorCode.INVALID_FIELD, "hello was already said")
        if hub.closing:
            raise CommandError(ErrorCode.SHUTTING_DOWN, "the server is restarting; nothing was "
                               "applied: reconnect, resume and send it again")
        result = await hub.handle(peer, cmd)
        return protocol.encode(protocol.Ok(id=cmd.id, result=result))
    except CommandError as exc:
        return _error(exc.code, exc.message, cmd.id)
    except StorageUnavailable:
        return _error(ErrorCode.STORAGE_UNAVAILABLE, "storage is unavailable; try again", cmd.id)
    except Exception:
        log.exception("internal error on %s", type(cmd).__name__)
        return _error(ErrorCode.INTERNAL_ERROR, "internal error; nothing was changed", cmd.id)


def _health_handler(hub: Hub):  # type: ignore[no-untyped-def]
    async def process_request(conn: ServerConnection, request: Request) -> Response | None:
        if request.path.split("?")[0] != "/healthz":
            return None
        body = await hub.health()
        status = http.HTTPStatus.OK if body["storage"] else http.HTTPStatus.SERVICE_UNAVAILABLE
        data = json.dumps(body).encode()
        headers = Headers([("Content-Type", "application/json"),
                           ("Content-Length", str(len(data))), ("Cache-Control", "no-store")])
        return Response(status.value, status.phrase, headers, data)
    return process_request


@contextlib.asynccontextmanager
async def storage(settings: Settings) -> AsyncIterator[tuple[Store, str]]:
    """Redis at ``redis_url``, or the embedded Valkey with its files in ``data_dir``."""
    embedded: EmbeddedStore | None = None
    url = settings.redis_url
    if not url:
        embedded = EmbeddedStore(settings.data_dir)
        await asyncio.to_thread(embedded.start)
        url = embedded.url
        log.info("embedded store at %s (data in %s)", url, settings.data_dir)
    client = await connect(url)
    try:
        yield Store(client, settings.key_prefix), url
    finally:
        await client.aclose()
        if embedded is not None:
            await asyncio.to_thread(embedded.stop)


@contextlib.asynccontextmanager
async def running(settings: Settings) -> AsyncIterator[Running]:
    """The whole server, started in order and stopped in reverse."""
    async with storage(settings) as (store, url):
        hub = Hub(store, settings)
        await hub.load()
        try:
            async with serve(
                lambda ws: _serve_connection(hub, settings, ws),
                settings.host, settings.port,
                compression=None,
                max_size=protocol.TRANSPORT_MAX_BYTES,
                ping_interval=settings.ping_interval_s,
                ping_timeout=settings.ping_timeout_s,
                process_request=_health_handler(hub),
                server_header=None,
            ) as server:
                port = server.sockets[0].getsockname()[1]
                try:
                    yield Running(hub, server, port, url)
                finally:
                    # Stop taking connections and commands, let in-flight writes finish,
                    # then tell clients we are restarting (they resume with their tokens).
                    server.close(close_connections=False)
                    await hub.close()
                    for peer in list(hub.peers):
                        peer.close(CloseCode.SERVICE_RESTART, "server restarting")
                    await server.wait_closed()
        finally:
            await hub.close()


async def run(settings: Settings) -> None:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    # SIGHUP too: a server started from a terminal that closes still stops its embedded
    # store instead of leaving it running.
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        loop.add_signal_handler(sig, stop.set)
    async with running(settings) as srv:
        print(f"aluette-server listening on ws://{settings.host}:{srv.port} "
              f"(health: http://{settings.host}:{srv.port}/healthz)", flush=True)
        await stop.wait()
        log.info("shutting down")
    print("aluette-server stopped", flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    settings = parse_settings(argv)
    logging.basicConfig(level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    asyncio.run(run(settings))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
