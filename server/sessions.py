"""Sessions: who a connection speaks for, its token, and the limits on making new ones.

A session is a player id, a name and exactly one current token. The token is
``<player id>.<secret>`` and Redis keeps only its sha256 digest, in the session's own hash
(one key, one hash slot, so every change is one atomic script even on a cluster).

- ``hello`` without a token opens a new session (limited per address per minute, so a
  flood of hellos cannot fill the store) that expires after ``session_ttl_s`` idle;
- ``hello`` with a token rotates it: the new token is current at once, every other
  connection of that session is closed (4009), and the presented token dies at the first
  command on the new connection (or after ``token_grace_s`` if the welcome never arrived);
  a token stolen earlier is dead the moment its owner reconnects. The session takes the
  hello's name (protocol 1.5): a player renames by saying hello again, and the tables they
  join from then on (or ``join`` again where they sit) show the new name.

Accounts (issue 27, ``server/accounts``): a session may speak for an account (its hash's
``account`` field; ``Connected.account``). A guest who registers keeps the session, so
the account adopts its player id; a ``login`` opens a new session per device, whose id is
not the player's (its hash's ``player`` field says whose it is), so the token is
``<session id>.<secret>`` and a session id equals its player id only for the first one. An
account session's name is the account's; a guest may not go by an account's name (nor one
confusable with it): a rename to one keeps the old name, a new session gets ``Guest NNNN``.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import time
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Protocol

from protocol import CloseCode, CommandError, ErrorCode, Hello, ServiceError
from protocol.session import RateLimiter
from server.accounts import Accounts
from server.store import StorageUnavailable, Store
from server.store.accounts import Account
from server.store.keys import check_id

from .config import Settings
from .looplag import LoopLag

log = logging.getLogger(__name__)

#: Addresses whose new-session buckets are remembered (the oldest are forgotten past it).
ADDRESSES_KEPT = 10_000


def token_digest(token: str) -> str:
    """Tokens are secrets: Redis only ever holds their digest."""
    return hashlib.sha256(token.encode()).hexdigest()


def player_of(token: str) -> str | None:
    """The session id a token names (a guest's is its player id), or None if it is not a
    token of ours."""
    player, dot, secret = token.partition(".")
    if not dot or not secret:
        return None
    try:
        return check_id("player", player)
    except ValueError:
        return None


class Connected(Protocol):
    """What the session registry needs of a connection."""

    address: str
    player_id: str | None
    token: str | None
    #: The account the session speaks for (its canonical key), None for a guest.
    account: str | None
    name: str
    #: Set when the hello presented a token that dies at this connection's first command.
    retiring: bool
    #: The rotation of the session's token that this connection's hello made (0: none).
    generation: int

    def drop(self, code: CloseCode, reason: str) -> None: ...


class Sessions:
    def __init__(self, store: Store, settings: Settings, busy: LoopLag | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 accounts: Accounts | None = None) -> None:
        self.store = store
        self.accounts = accounts
        #: Told of every session this process rotates (its id, the rotation's generation),
        #: so other processes close their connections of it (server/session_news.py).
        self.on_replaced: Callable[[str, int], Awaitable[None]] | None = None
        self.settings = settings
        self.busy = busy or LoopLag(0)
        self.clock = clock
        #: Live connections by session id (a device's; a player may have several).
        self.online: dict[str, set[Connected]] = {}
        self._new_by_address: OrderedDict[str, RateLimiter] = OrderedDict()

    def _allow_new(self, address: str) -> bool:
        per_minute = self.settings.new_sessions_per_minute
        bucket = self._new_by_address.get(address)
        now = self.clock()
        if bucket is None:
            bucket = RateLimiter(per_minute / 60, max(1, per_minute // 2), 1_000_000, now)
            self._new_by_address[address] = bucket
            if len(self._new_by_address) > ADDRESSES_KEPT:
                self._new_by_address.popitem(last=False)
        else:
            self._new_by_address.move_to_end(address)
        return bucket.allow(now)

    async def hello(self, conn: Connected, hello: Hello) -> tuple[str, str, str]:
        """Open or resume the session; returns ``(token, player id, name)``."""
        ttl = self.settings.session_ttl_s
        account: str | None = None
        try:
            if hello.token is not None:
                sid = player_of(hello.token)
                if sid is None:
                    raise CommandError(ErrorCode.BAD_TOKEN, "unknown or expired session token; "
                                       "say hello without one")
                player, account = sid, None
                if self.accounts is not None:
                    player, account = await self.accounts.store.owner(sid)
                rename: str | None = None
                if account is None and await self._free(hello.name):
                    rename = hello.name
                token = f"{sid}.{secrets.token_urlsafe(24)}"
                rotated = await self.store.rotate_session(
                    sid, token_digest(hello.token), token_digest(token),
                    grace_s=self.settings.token_grace_s, ttl_s=ttl, now=time.time(),
                    name=rename)
                if rotated is None:
                    raise CommandError(ErrorCode.BAD_TOKEN, "unknown or expired session token; "
                                       "say hello without one")
                name = rotated.name
                conn.generation = rotated.generation
                if account is not None and self.accounts is not None:
                    await self.accounts.store.keep_sessions(account, ttl)
                others = [c for c in self.online.get(sid, ()) if c is not conn]
                if any(c.generation > conn.generation for c in others):
                    # Two hellos at once (issue 30): a later rotation already holds the
                    # session, whatever order the store's answers came back in.
                    conn.drop(CloseCode.SESSION_REPLACED, "session resumed elsewhere")
                    return token, player, name
                for other in others:
                    other.drop(CloseCode.SESSION_REPLACED, "session resumed elsewhere")
                conn.retiring = True
                if self.on_replaced is not None:
                    await self.on_replaced(sid, rotated.generation)
            else:
                if self.busy.busy():
                    # Admission control (issue 11): a returning player (a token) is let in,
                    # a new one waits until the games in progress are served on time.
                    raise ServiceError(ErrorCode.SERVER_BUSY, "the server is too busy for "
                                       "new players right now; try again shortly",
                                       details={"retry_after_ms": self.busy.retry_after_ms()})
                if not self._allow_new(conn.address):
                    raise ServiceError(ErrorCode.RATE_LIMITED, "too many new sessions from "
                                       "your address; try again in a minute")
                player = sid = uuid.uuid4().hex
                token = f"{player}.{secrets.token_urlsafe(24)}"
                name = hello.name if await self._free(hello.name) else self._guest_name()
                await self.store.new_session(player, name, token_digest(token), ttl)
        except StorageUnavailable:
            raise ServiceError(ErrorCode.STORAGE_UNAVAILABLE,
                               "storage is unavailable; try again shortly") from None
        conn.player_id, conn.token, conn.account = player, token, account
        self.online.setdefault(sid, set()).add(conn)
        return token, player, name

    async def _free(self, name: str) -> bool:
        """May a guest go by this name? Not an account's, nor one confusable with it."""
        return self.accounts is None or await self.accounts.guest_name_free(name)

    @staticmethod
    def _guest_name() -> str:
        return f"Guest {1000 + secrets.randbelow(9000)}"

    async def login(self, conn: Connected, account: Account) -> str:
        """The connection now speaks for ``account`` (its password was checked): a new
        session for this device; returns its token. The session the connection spoke for
        before stays as it was (a guest's seats stay the guest's)."""
        assert self.accounts is not None
        sid = uuid.uuid4().hex
        token = f"{sid}.{secrets.token_urlsafe(24)}"
        try:
            await self.accounts.store.open_session(
                sid, player=account.player, account=account.key, name=account.name,
                token_hash=token_digest(token), ttl_s=self.settings.session_ttl_s)
        except StorageUnavailable:
            raise ServiceError(ErrorCode.STORAGE_UNAVAILABLE,
                               "storage is unavailable; try again shortly") from None
        self.gone(conn)
        conn.player_id, conn.token, conn.account = account.player, token, account.key
        conn.name, conn.retiring = account.name, False
        self.online.setdefault(sid, set()).add(conn)
        return token

    def revoked(self, sessions: list[str], keep: Connected | None = None) -> int:
        """These sessions were revoked: their live connections here close (4002, their
        token is dead); ``keep`` is left to its caller. Returns how many were closed."""
        closed = 0
        for sid in sessions:
            for conn in list(self.online.get(sid, ())):
                if conn is not keep:
                    conn.drop(CloseCode.BAD_TOKEN, "logged out")
                    closed += 1
        return closed

    def replaced(self, session: str, generation: int) -> int:
        """Another process rotated ``session`` to ``generation``: this process's connections
        of an older rotation of it close (4009), as they would here. Returns how many."""
        closed = 0
        for conn in list(self.online.get(session, ())):
            if conn.generation < generation:
                conn.drop(CloseCode.SESSION_REPLACED, "session resumed elsewhere")
                closed += 1
        return closed

    async def check_revoked(self) -> int:
        """Account connections here whose session was ended by another process (a
        ``logout_all`` or a change of password there) close now (4002); returns how many.
        The process that ends a session closes its own connections at once."""
        if self.accounts is None:
            return 0
        sids = sorted(sid for sid, conns in self.online.items()
                      if any(c.account is not None for c in conns))
        if not sids:
            return 0
        try:
            alive = await self.accounts.store.sessions_alive(sids)
        except StorageUnavailable:
            return 0   # next time
        return self.revoked([sid for sid in sids if sid not in alive])

    @staticmethod
    def session_of(conn: Connected) -> str:
        """The id of the session a connection speaks through."""
        assert conn.token is not None
        sid = player_of(conn.token)
        assert sid is not None
        return sid

    async def confirm(self, conn: Connected) -> bool:
        """The first command on a resumed connection proves the welcome arrived: the token
        its hello presented dies now. False if the session has moved on (replaced)."""
        assert conn.player_id is not None and conn.token is not None
        try:
            return await self.store.confirm_session(self.session_of(conn),
                                                    token_digest(conn.token),
                                                    self.settings.session_ttl_s)
        except StorageUnavailable:
            return True   # retried at the next command

    async def touch(self, conn: Connected) -> None:
        """A long-lived connection keeps its session alive."""
        if conn.player_id is not None:
            try:
                await self.store.touch_session(self.session_of(conn),
                                               self.settings.session_ttl_s)
            except StorageUnavailable:
                log.warning("could not renew session %s; will try again", conn.player_id)

    def gone(self, conn: Connected) -> None:
        if conn.token is None:
            return
        sid = self.session_of(conn)
        conns = self.online.get(sid)
        if conns is not None:
            conns.discard(conn)
            if not conns:
                del self.online[sid]

    def connections(self) -> int:
        return sum(len(c) for c in self.online.values())
