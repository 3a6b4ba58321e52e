"""Play now: the matchmaking queue over every server process (issue 27).

- ``queue {rated, options}`` puts (or replaces) the player's request in the store's queue
  (:mod:`server.store.matchqueue`); ``unqueue`` takes it out. A rated request needs an
  account (``not_registered``), and a client that said ``bot`` may not ask for one.
- One process at a time runs the matchmaker: the one holding the queue's lease (taken
  or renewed every tick, lost when its holder stops renewing it). Each tick it reads the
  queue, asks :mod:`.matchmaker` which tables to make, takes each table's requests in one
  script that fails if any of them changed (so no player is seated twice, even by two
  matchmakers while the lease changes hands), makes the table, seats them and starts it.
- Each seat made is announced on the queue's channel; every process tells its own
  connections of that player (``matched``, then the table's head, as after a ``join``).
  A player matched while away finds the seat in ``list_tables``'s ``seats`` on resume.
- A player whose last connection closes while queued is marked offline; back within
  ``queue_grace_s`` (a hello), they keep their place; otherwise the matchmaker drops the
  request. A player seated at a match in play is never matched: the matchmaker drops
  their request (and a seat taken anywhere takes its player out of the queue).
- A seat taken by hand (``create_table``, ``join``, ``rematch``, on any process) and the
  matchmaker never both seat one player: each marks the player in the store first, in a
  script that looks at the other's mark (:mod:`server.store.matchqueue`). The command
  that comes second is refused with ``being_matched`` (its ``matched`` follows); a take
  that comes second leaves the four requests for the next tick.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import msgspec

import protocol
from protocol import CommandError, ErrorCode, ServiceError
from protocol.results import QueueResult
from protocol.session import Send
from server.store import StorageUnavailable, Store
from server.store.matchqueue import QueueStore
from server.store.news import listen

from ..config import Settings
from ..homes import tell_home
from ..lobby import Lobby
from ..lobby.listing import TABLE_ID_CHARS
from ..sessions import Sessions
from ..supervisor import Supervisor
from ..table import Table, mutations
from ..table.fanout import number_events
from ..table.mutations import Work
from ..table.state import SeatState, encode_lobby_entry, lobby_entry
from ..wire import Client
from . import Players, rating
from .matchmaker import Formed, Request, form

log = logging.getLogger(__name__)

#: How long a mark may outlive its work: the matchmaker seating four players, a command
#: taking a seat by hand (both take milliseconds; a mark outlives a process that died).
MARK_S = 10.0


class Seated(msgspec.Struct, array_like=True):
    player: str
    table: str
    seat: int
    rated: bool
    process: str = ""


class PlayNow:
    def __init__(self, store: Store, settings: Settings, supervisor: Supervisor, lobby: Lobby,
                 sessions: Sessions, players: Players, process: str) -> None:
        self.settings = settings
        self.supervisor = supervisor
        self.lobby = lobby
        self.sessions = sessions
        self.players = players
        self.process = process
        self.queue = QueueStore(store)
        self.leading = False
        self.formed = 0
        self._kick = asyncio.Event()
        #: The requests read at the last tick, by their stored bytes (decoded once).
        self._decoded: dict[bytes, Request] = {}
        #: Players whose requests this process dropped (away past the grace), and a way to
        #: wait for the queue's news (tests, tools).
        self.dropped: list[str] = []
        self.changed = asyncio.Condition()
        self._closed = False

    def start(self) -> None:
        self.supervisor.spawn("matchmaker", self._lead())
        self.supervisor.spawn("matchmaker news", self._listen())

    async def stop(self) -> None:
        self._closed = True
        self._kick.set()
        if self.leading:
            with contextlib.suppress(StorageUnavailable):
                await self.queue.release_lease(self.process)

    # ------------------------------------------------------------------ commands

    async def command(self, client: Client, cmd: protocol.Command) -> QueueResult:
        try:
            if isinstance(cmd, protocol.Unqueue):
                return QueueResult(queued=await self.queue.remove(client.player))
            assert isinstance(cmd, protocol.Queue)
            return await self._join(client, cmd)
        except StorageUnavailable:
            raise ServiceError(ErrorCode.STORAGE_UNAVAILABLE, "storage is unavailable; "
                               "nothing was changed") from None

    async def _join(self, client: Client, cmd: protocol.Queue) -> QueueResult:
        player = client.player
        account = (await self.players.accounts.of([player])).get(player)
        if cmd.rated and cmd.options.hints:
            raise CommandError(ErrorCode.INVALID_FIELD, "a table with hints is never rated",
                               details={"field": "$.options.hints"})
        if cmd.rated and (account is None or client.bot):
            raise CommandError(ErrorCode.NOT_REGISTERED, "rated games are for registered "
                               "players: log in first (or ask for a casual game)")
        await self.lobby.openings.room_for(player, client.address)
        mu, sigma = rating.default()
        if account is not None:
            mu, sigma = (await self.players.history.ratings([account])).get(account) \
                or (mu, sigma)
        request = Request(player=player, name=client.name, rated=cmd.rated,
                          options=cmd.options, mu=mu, sigma=sigma, since=time.time(),
                          account=account, bot=client.bot)
        waiting = await self.queue.put(player, msgspec.msgpack.encode(request))
        self._kick.set()
        return QueueResult(queued=True, rated=cmd.rated, waiting=waiting)

    @contextlib.asynccontextmanager
    async def seating(self, client: Client) -> AsyncIterator[Callable[[bool], None]]:
        """Around a command that may seat ``client`` by hand (``create_table``, ``join``,
        ``rematch``): refused with ``being_matched`` while the matchmaker seats them; the
        matchmaker leaves them alone meanwhile. Call the yielded function with whether the
        command seated them: if it did, their request leaves the queue."""
        player = client.player
        try:
            held = await self.queue.hold(player, MARK_S)
        except StorageUnavailable:
            raise ServiceError(ErrorCode.STORAGE_UNAVAILABLE, "storage is unavailable; "
                               "nothing was changed") from None
        if not held:
            raise CommandError(ErrorCode.BEING_MATCHED, "play now is seating you at a table "
                               "this moment (its matched follows); nothing was changed")
        outcome = {"seated": False}

        def note(seated: bool) -> None:
            outcome["seated"] = seated
        try:
            yield note
        finally:
            with contextlib.suppress(StorageUnavailable):
                await self.queue.release(player, outcome["seated"])

    async def seated(self, player: str) -> None:
        """The player took a seat (``create_table``, ``join``, ``rematch``, ``start``):
        out of the queue, so the matchmaker never seats someone already playing."""
        with contextlib.suppress(StorageUnavailable):
            await self.queue.remove(player)

    async def went_offline(self, player: str) -> None:
        """The player's last connection here closed: their request waits ``queue_grace_s``
        for them."""
        if player in self.sessions.online:
            return
        with contextlib.suppress(StorageUnavailable):
            await self.queue.went_offline(player, time.time())

    async def came_back(self, player: str) -> None:
        with contextlib.suppress(StorageUnavailable):
            await self.queue.came_back(player)

    # ------------------------------------------------------------------ the matchmaker

    async def _lead(self) -> None:
        s = self.settings
        while not self._closed:
            try:
                self.leading = await self.queue.hold_lease(self.process, s.lease_ttl_s)
                if self.leading:
                    await self.tick()
            except asyncio.CancelledError:
                raise
            except StorageUnavailable as exc:
                log.warning("matchmaker: %s", exc)
            except Exception:
                log.exception("matchmaker failed; trying again")
            self._kick.clear()
            with contextlib.suppress(TimeoutError):    # (no task made, unlike wait_for)
                async with asyncio.timeout(s.queue_tick_s):
                    await self._kick.wait()

    async def tick(self, now: float | None = None) -> int:
        """One look at the queue (the lease holder's): drop who has been away too long,
        make the tables that can be made. Returns the tables made."""
        now = time.time() if now is None else now
        for player, since in (await self.queue.offline_since()).items():
            if (since + self.settings.queue_grace_s <= now
                    and await self.queue.drop_offline(player, since)):
                log.info("matchmaker: %s away too long; left the queue", player)
                self.dropped = [*self.dropped[-99:], player]
                async with self.changed:
                    self.changed.notify_all()
        raw = await self.queue.all()
        requests = {}
        known, self._decoded = self._decoded, {}
        for player, blob in raw.items():
            request = known.get(blob)
            if request is None:
                try:
                    request = msgspec.msgpack.decode(blob, type=Request)
                except (msgspec.DecodeError, msgspec.ValidationError):
                    log.warning("matchmaker: an unreadable request of %s; dropped", player)
                    await self.queue.take([(player, blob)])
                    continue
            self._decoded[blob] = requests[player] = request
        made = 0
        tables = form(list(requests.values()), now, self.settings.queue_bots_after_s)
        # Its tables count against the server's limit like any: at the limit they wait.
        async with self.lobby.openings.matching(len(tables)) as room:
            busy = await self._playing() if tables else set()
            for formed in tables[:room]:
                playing = [(r.player, raw[r.player]) for r in formed.requests
                           if r.player in busy]
                if playing:     # they play a match elsewhere: out of the queue
                    await self.queue.take(playing)
                    continue
                taken = [(r.player, raw[r.player]) for r in formed.requests]
                if not await self.queue.take(taken, MARK_S):
                    continue      # changed, or seated by hand meanwhile: see next tick
                try:
                    await self._seat(formed)
                    made += 1
                except Exception:
                    log.exception("matchmaker: could not make a table; requests put back")
                    for player, blob in taken:
                        with contextlib.suppress(StorageUnavailable):
                            await self.queue.put(player, blob)
                finally:
                    with contextlib.suppress(StorageUnavailable):
                        await self.queue.taken([player for player, _ in taken])
        if made:
            self.formed += made
            async with self.changed:
                self.changed.notify_all()
        return made

    async def _playing(self) -> set[str]:
        """The players seated at a match in play (the lobby every process sees)."""
        entries = await self.lobby.listing.entries()
        return {p for e in entries.values() if e.status == "playing" for p in e.players}

    async def _seat(self, formed: Formed) -> Table:
        """Make the table, seat the players, start the match, tell everyone."""
        s = self.settings
        now = time.time()
        first = formed.requests[0]
        options = msgspec.structs.replace(first.options, rated=first.rated)
        if formed.bot_level is not None:
            options = msgspec.structs.replace(options, bot_level=formed.bot_level)
        tid = "t" + secrets.token_hex((TABLE_ID_CHARS - 1) // 2)
        cmd = protocol.CreateTable(id=0, options=options, name="Play now")
        state = mutations.new_table(tid, first.player, first.name, cmd, now, s.max_bot_budget,
                                    bot=first.bot)
        for seat, r in enumerate(formed.seats):
            state.seats[seat] = SeatState() if r is None else SeatState(
                kind="human", name=r.name, player=r.player, connected=True, bot=r.bot)
        work = Work(state, None, now=now)
        work.table_changed()
        events = number_events(state, work.events, work.watchers)
        version = await self.lobby.store.create_table(
            tid, state.to_bytes(), [(e.gseq, e.pack()) for e in events],
            ttl_s=s.table_key_ttl_s, info=encode_lobby_entry(lobby_entry(state, 0)))
        table = self.lobby.registry.hold(state, version, None, made_here=True)
        with contextlib.suppress(StorageUnavailable):
            if await self.lobby.cluster.acquire(tid):
                table.set_owned(True)
        # Everyone hears of the seat before the match starts: this process's connections
        # follow the table from its first event (as after a join); another process's
        # from a head, whenever its news arrive.
        for seat, r in enumerate(formed.seats):
            if r is not None:
                news = Seated(r.player, tid, seat, first.rated, self.process)
                await self.deliver(news)
                await self.queue.announce(msgspec.msgpack.encode(news))
        async with table.lock:
            await table.execute(lambda w: mutations.start(w, first.player))
        self.supervisor.spawn(f"presence {tid}", self._check_presence(table))
        log.info("matchmaker: table %s for %d players (%s)", tid, len(formed.requests),
                 "rated" if first.rated else "casual")
        return table

    async def _check_presence(self, table: Table) -> None:
        """The seats were made connected; once every process has had time to hear the news
        and count its connections (two beats), a player connected nowhere (matched while
        away) is marked disconnected: their grace period starts, as after a drop."""
        await asyncio.sleep(2 * self.settings.lease_renew_s)
        if table.closed or not table.owned:
            return
        with contextlib.suppress(StorageUnavailable):
            await table.refresh_presence()
        for seat, s in enumerate(table.state.seats):
            if s.kind == "human" and s.player and not table.presence.connected(s.player):
                await table.seat_presence(seat)

    # ------------------------------------------------------------------ the news

    async def _listen(self) -> None:
        """Tell this process's connections where the matchmaker seated them."""
        async def heard(data: bytes) -> None:
            news = msgspec.msgpack.decode(data, type=Seated)
            if news.process != self.process:     # ours were delivered already
                await self.deliver(news)
        await listen(self.lobby.store.redis, self.queue.channel, heard, "matchmaker news",
                     stop=lambda: self._closed)

    async def deliver(self, news: Seated) -> None:
        conns: Any = self.sessions.online.get(news.player, ())
        if not conns:
            return
        try:
            table = await self.lobby.registry.find(news.table)
        except protocol.AluetteError:
            return
        live = [c for c in conns if isinstance(c, Client) and c.open]
        if live and table.state.creator == news.player:
            # Its creator's address counts it, as if they had made it by hand (once).
            self.lobby.openings.made_from(news.table, live[0].address)
        for conn in live:
            conn.send(Send(protocol.encode(protocol.Matched(table=news.table, seat=news.seat,
                                                            rated=news.rated))))
            if conn not in table.viewers:
                table.subscribe(conn)
            conn.tables.add(news.table)
            await tell_home(self.lobby.cluster, conn, news.table,     # issue 32
                            owned=table.owned)
