"""One connection's life, and where each command goes.

Frames go through the connection's :class:`~protocol.session.ServerSession`, which answers
what the protocol answers by itself (malformed frames, hello first, ping, the rate limit)
and hands over valid hellos and commands. A connection's commands are carried out one at a
time, in the order they came (frames wait in the library's bounded queue meanwhile, and
TCP pushes back on a client that sends faster).
"""

from __future__ import annotations

import asyncio
import logging
import time

from websockets.exceptions import ConnectionClosed

import protocol
from protocol import AluetteError, CloseCode, CommandError, ErrorCode, ServiceError
from protocol.session import Close, CommandReceived, HelloReceived, Send, ServerSession

from .hub import Hub
from .lobby import table_id_for
from .wire import Client, GuardedConnection

log = logging.getLogger(__name__)

#: A connection renews its session's lifetime at most this often (seconds).
TOUCH_EVERY_S = 3600


async def serve_connection(hub: Hub, ws: GuardedConnection) -> None:
    """Hello within the timeout, then every frame in order, until the connection ends."""
    s = hub.settings
    session = ServerSession(now=time.monotonic(), rate_per_second=s.rate_per_second,
                            rate_burst=s.rate_burst)
    client = Client(ws, session, lambda name, coro: hub.supervisor.spawn(name, coro))
    hub.clients.add(client)
    touched = time.monotonic()
    try:
        try:
            frame = await asyncio.wait_for(ws.recv(), s.hello_timeout_s)
        except TimeoutError:
            client.drop(CloseCode.HELLO_TIMEOUT, "no hello")
            return
        while True:
            for out in session.receive(frame, time.monotonic()):
                await _carry_out(hub, client, out)
            if client.dropped:
                return
            if client.player_id is not None and time.monotonic() - touched > TOUCH_EVERY_S:
                touched = time.monotonic()
                await hub.sessions.touch(client)
            frame = await ws.recv()
    except ConnectionClosed:
        pass
    finally:
        hub.clients.discard(client)
        await disconnected(hub, client)
        await client.finish()


async def _carry_out(hub: Hub, client: Client, out: object) -> None:
    if isinstance(out, Send):
        client.send(out)
    elif isinstance(out, Close):
        client.drop(out.code, out.reason)
    elif isinstance(out, HelloReceived):
        await _hello(hub, client, out)
    elif isinstance(out, CommandReceived):
        await dispatch(hub, client, out.command)


async def _hello(hub: Hub, client: Client, out: HelloReceived) -> None:
    session = client.session
    try:
        if hub.closing:
            raise ServiceError(ErrorCode.SHUTTING_DOWN, "the server is restarting; "
                               "connect again shortly")
        token, player, name = await hub.sessions.hello(client, out.hello)
    except AluetteError as exc:
        for refusal in session.refuse_hello(out.hello, exc):
            await _carry_out(hub, client, refusal)
        return
    client.name = name
    client.bot = out.hello.bot
    client.send(session.accept_hello(out.hello, session=token, player_id=player, name=name))


async def dispatch(hub: Hub, client: Client, cmd: protocol.Command) -> None:
    """Carry out one command; its reply (and any events) go out in the documented order."""
    session = client.session
    try:
        if hub.closing:
            raise ServiceError(ErrorCode.SHUTTING_DOWN, "the server is restarting; nothing was "
                               "applied: reconnect, resume and send it again")
        if client.retiring:
            client.retiring = False
            if not await hub.sessions.confirm(client):
                client.drop(CloseCode.SESSION_REPLACED, "session resumed elsewhere")
                return
        lobby = hub.lobby
        if isinstance(cmd, protocol.ListTables):
            client.send(session.ok(cmd.id, await lobby.page(client.player, cmd.cursor,
                                                           cmd.limit)))
        elif isinstance(cmd, protocol.CreateTable):
            await lobby.create(client, client.address, cmd)
            created = lobby.tables.get(table_id_for(client.player, cmd.id))
            if created is not None and client in created.viewers:
                client.tables.add(created.id)
        elif isinstance(cmd, protocol.GetRecord):
            client.send(session.ok(cmd.id, await lobby.record(client.player, cmd.table,
                                                              cmd.match)))
        else:
            table_id = getattr(cmd, "table", None)
            if not isinstance(table_id, str):
                raise CommandError(ErrorCode.UNKNOWN_TYPE,
                                   f"{type(cmd).__name__} is not a command this server takes")
            if isinstance(cmd, protocol.Resume) and cmd.token != client.token:
                raise CommandError(ErrorCode.BAD_TOKEN, "resume must carry this session's "
                                   "current token (the one in your latest welcome)")
            table = await lobby.find(table_id)
            if isinstance(cmd, protocol.Rematch):
                async with lobby.reopening(table):
                    await table.command(client, cmd)
            else:
                await table.command(client, cmd)
            if client in table.viewers:
                client.tables.add(table.id)
            else:
                client.tables.discard(table.id)
            await lobby.watching.after(client.player, cmd, table, client in table.viewers)
    except AluetteError as exc:
        client.send(session.error(cmd.id, exc))
    except Exception:
        log.exception("internal error on %s", type(cmd).__name__)
        client.send(session.error(cmd.id, ServiceError(
            ErrorCode.INTERNAL_ERROR, "internal error; nothing was changed")))


async def disconnected(hub: Hub, client: Client) -> None:
    """The connection is gone: its tables stop sending to it, its seats may go quiet."""
    hub.sessions.gone(client)
    if client.player_id is None:
        return
    for tid in list(client.tables):
        table = hub.lobby.tables.get(tid)
        if table is not None:
            try:
                await table.viewer_gone(client)
            except Exception:
                log.exception("table %s: could not record %s leaving", tid, client.player_id)
    client.tables.clear()
