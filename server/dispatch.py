"""One connection's life, and where each command goes.

Frames go through the connection's :class:`~protocol.session.ServerSession`, which answers
what the protocol answers by itself (malformed frames, hello first, ping, the rate limit)
and hands over valid hellos and commands. A connection's commands are carried out one at a
time, in the order they came (frames wait in the library's bounded queue meanwhile, and
TCP pushes back on a client that sends faster).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

import protocol
from protocol import AluetteError, CloseCode, CommandError, ErrorCode, ServiceError
from protocol.session import Close, CommandReceived, HelloReceived, Send, ServerSession

from . import logs
from .homes import tell_home
from .hub import Hub
from .logins import account_command
from .table import Table
from .wire import Client, GuardedConnection

log = logging.getLogger(__name__)

#: A connection renews its session's lifetime at most this often (seconds).
TOUCH_EVERY_S = 3600


async def serve_connection(hub: Hub, ws: ServerConnection) -> None:
    """Hello within the timeout, then every frame in order, until the connection ends; a
    connection the handshake refused (a limit) is closed at once."""
    assert isinstance(ws, GuardedConnection)
    if ws.refusal is not None:
        code, reason = ws.refusal
        with contextlib.suppress(Exception):
            async with asyncio.timeout(hub.settings.close_timeout_s):
                await ws.close(int(code), reason)
        ws.transport.abort()
        return
    s = hub.settings
    session = ServerSession(now=time.monotonic(), rate_per_second=s.rate_per_second,
                            rate_burst=s.rate_burst)
    client = Client(ws, session, lambda name, coro: hub.supervisor.spawn(name, coro),
                    replays=hub.replays)
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
        if exc.code in (ErrorCode.SERVER_BUSY, ErrorCode.RATE_LIMITED):
            hub.count.refusals[f"{exc.code}_hello"] += 1
        for refusal in session.refuse_hello(out.hello, exc):
            await _carry_out(hub, client, refusal)
        return
    client.name = name
    client.bot = out.hello.bot
    await hub.queue.came_back(player)     # issue 27: a queued player keeps their place
    client.send(session.accept_hello(out.hello, session=token, player_id=player, name=name))


async def dispatch(hub: Hub, client: Client, cmd: protocol.Command) -> None:
    """Carry out one command; its reply (and any events) go out in the documented order.
    Its type, outcome and time to the reply are counted for ``/metrics``."""
    start = time.perf_counter()
    outcome = "ok"
    kind = str(type(cmd).__struct_config__.tag)
    context = logs.bind(player=client.player_id, table=getattr(cmd, "table", None))
    try:
        outcome = await _dispatch(hub, client, cmd, kind)
    finally:
        logs.unbind(context)
        hub.metrics.observe_command(kind, outcome, time.perf_counter() - start)


async def _dispatch(hub: Hub, client: Client, cmd: protocol.Command, kind: str) -> str:
    try:
        if hub.closing:
            raise ServiceError(ErrorCode.SHUTTING_DOWN, "the server is restarting; nothing was "
                               "applied: reconnect, resume and send it again")
        if client.retiring:
            client.retiring = False
            if not await hub.sessions.confirm(client):
                client.drop(CloseCode.SESSION_REPLACED, "session resumed elsewhere")
                return "session_replaced"
        await _route(hub, client, cmd)
    except AluetteError as exc:
        client.refuse(cmd.id, exc)
        if exc.code is ErrorCode.SERVER_BUSY:
            hub.count.refusals[f"{exc.code}_{kind}"] += 1
        return str(exc.code)
    except Exception:
        log.exception("internal error on %s", type(cmd).__name__)
        client.refuse(cmd.id, ServiceError(ErrorCode.INTERNAL_ERROR,
                                           "internal error; nothing was changed"))
        return str(ErrorCode.INTERNAL_ERROR)
    return "ok"


#: Commands that may seat their sender by hand, which the play-now matchmaker must not do
#: at the same moment on any process (issue 27: nobody seated twice).
SEATING = (protocol.CreateTable, protocol.Join, protocol.Rematch)
#: Commands after whose head a player at a table another process runs is told its home
#: (protocol 1.6, ``home``; server/homes.py).
HOMED = (protocol.Join, protocol.Spectate, protocol.Resume)


async def _route(hub: Hub, client: Client, cmd: protocol.Command) -> None:
    """The lobby's commands go to the lobby; every other names its table."""
    if isinstance(cmd, SEATING):
        async with hub.queue.seating(client) as seated:
            table = await _command(hub, client, cmd)
            seated(table is not None and table.state.seat_of(client.player) is not None)
    else:
        table = await _command(hub, client, cmd)
        if isinstance(cmd, protocol.Start) and table is not None \
                and table.state.seat_of(client.player) is not None:
            await hub.queue.seated(client.player)       # issue 27: a seat leaves the queue
    if table is None:
        return
    watching = client in table.viewers
    known = table.id in client.tables
    if watching:
        client.tables.add(table.id)
    else:
        client.tables.discard(table.id)
    if watching and isinstance(cmd, HOMED):
        # Issue 32: after the head.
        await tell_home(hub.cluster, client, table.id, owned=table.owned)
    if not watching and not table.viewers:
        hub.lobby.registry.rest(table)          # issue 32: nobody here watches it now
    if known and watching and isinstance(cmd, protocol.Resume):
        return      # noted when this connection began watching: no store write per resume
    await hub.lobby.watching.after(client.player, cmd, table, watching)


async def _command(hub: Hub, client: Client, cmd: protocol.Command) -> Table | None:
    """Carry ``cmd`` out; the table it was about, None for the lobby's own commands."""
    lobby, tables = hub.lobby, hub.lobby.registry
    if isinstance(cmd, protocol.Resume):
        await hub.replays.pace(client.address)      # issue 30: resume amplification
    match cmd:
        case protocol.ListTables(cursor=cursor, limit=limit, filter=only):
            client.reply(cmd.id, await lobby.page(client.player, cursor, limit, only))
            return None
        case protocol.History(name=name, cursor=cursor, limit=limit):     # issue 27
            client.reply(cmd.id, await hub.players.history_page(client.player, name, cursor,
                                                                limit))
            return None
        case protocol.Profile(name=name):
            client.reply(cmd.id, await hub.players.profile(client.player, name))
            return None
        case protocol.Queue() | protocol.Unqueue():
            client.reply(cmd.id, await hub.queue.command(client, cmd))
            return None
        case protocol.CreateTable():
            table = await lobby.create(client, client.address, cmd)
        case protocol.GetRecord(table=table_id, match=match, code=code):
            client.reply(cmd.id, await lobby.record(client.player, table_id, match, code))
            return None
        case protocol.RequestReview():          # issue 28: server/reviews.py
            client.reply(cmd.id, await hub.reviews.request(client.player, client.address, cmd))
            return None
        case protocol.RequestHint():
            client.reply(cmd.id, await hub.reviews.hint(client.player, cmd))
            return None
        case protocol.Register() | protocol.Login() | protocol.ChangePassword() \
                | protocol.Logout() | protocol.LogoutAll():     # issue 27: server/logins.py
            await account_command(hub, client, cmd)
            return None
        case protocol.Resume(token=token) if token != client.token:
            raise CommandError(ErrorCode.BAD_TOKEN, "resume must carry this session's "
                               "current token (the one in your latest welcome)")
        case protocol.Rematch(table=table_id):
            table = await tables.find(table_id)
            async with lobby.reopening(table):
                await table.command(client, cmd)
        case protocol.Join(table=ref, code=code) | protocol.Spectate(table=ref, code=code):
            # 1.5: a unique start of the id (a private table's only with its code).
            table = await tables.find(await lobby.listing.resolve(ref, code))
            await table.command(client, cmd)
        case protocol.Leave() | protocol.AddBot() | protocol.RemoveBot() | protocol.Start() \
                | protocol.Play() | protocol.ChanterVote() | protocol.Discard() \
                | protocol.Signal() | protocol.Chat() | protocol.Mute() | protocol.Resume() \
                | protocol.LetBotPlay():
            table = await tables.find(cmd.table)
            await table.command(client, cmd)
        case _:
            raise CommandError(ErrorCode.UNKNOWN_TYPE,
                               f"{type(cmd).__name__} is not a command this server takes")
    return table


async def disconnected(hub: Hub, client: Client) -> None:
    """The connection is gone: its tables stop sending to it, its seats may go quiet."""
    hub.sessions.gone(client)
    if client.player_id is None:
        return
    await hub.queue.went_offline(client.player_id)
    for tid in list(client.tables):
        table = hub.lobby.tables.get(tid)
        if table is not None:
            try:
                await table.viewer_gone(client)
            except Exception:
                log.exception("table %s: could not record %s leaving", tid, client.player_id)
            if not table.viewers:
                hub.lobby.registry.rest(table)      # issue 32: nobody here watches it now
    client.tables.clear()
