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
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol

from protocol import CloseCode, CommandError, ErrorCode, Hello, ServiceError
from protocol.session import RateLimiter
from server.store import StorageUnavailable, Store
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
    """The player id a token names, or None if it is not a token of ours."""
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
    #: Set when the hello presented a token that dies at this connection's first command.
    retiring: bool
    #: The rotation of the session's token that this connection's hello made (0: none).
    generation: int

    def drop(self, code: CloseCode, reason: str) -> None: ...


class Sessions:
    def __init__(self, store: Store, settings: Settings, busy: LoopLag | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.store = store
        self.settings = settings
        self.busy = busy or LoopLag(0)
        self.clock = clock
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
        try:
            if hello.token is not None:
                player = player_of(hello.token)
                if player is None:
                    raise CommandError(ErrorCode.BAD_TOKEN, "unknown or expired session token; "
                                       "say hello without one")
                token = f"{player}.{secrets.token_urlsafe(24)}"
                rotated = await self.store.rotate_session(
                    player, token_digest(hello.token), token_digest(token),
                    grace_s=self.settings.token_grace_s, ttl_s=ttl, now=time.time(),
                    name=hello.name)
                if rotated is None:
                    raise CommandError(ErrorCode.BAD_TOKEN, "unknown or expired session token; "
                                       "say hello without one")
                name = rotated.name
                conn.generation = rotated.generation
                others = [c for c in self.online.get(player, ()) if c is not conn]
                if any(c.generation > conn.generation for c in others):
                    # Two hellos at once (issue 30): a later rotation already holds the
                    # session, whatever order the store's answers came back in.
                    conn.drop(CloseCode.SESSION_REPLACED, "session resumed elsewhere")
                    return token, player, name
                for other in others:
                    other.drop(CloseCode.SESSION_REPLACED, "session resumed elsewhere")
                conn.retiring = True
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
                player = uuid.uuid4().hex
                token = f"{player}.{secrets.token_urlsafe(24)}"
                name = hello.name
                await self.store.new_session(player, name, token_digest(token), ttl)
        except StorageUnavailable:
            raise ServiceError(ErrorCode.STORAGE_UNAVAILABLE,
                               "storage is unavailable; try again shortly") from None
        conn.player_id, conn.token = player, token
        self.online.setdefault(player, set()).add(conn)
        return token, player, name

    async def confirm(self, conn: Connected) -> bool:
        """The first command on a resumed connection proves the welcome arrived: the token
        its hello presented dies now. False if the session has moved on (replaced)."""
        assert conn.player_id is not None and conn.token is not None
        try:
            return await self.store.confirm_session(conn.player_id, token_digest(conn.token),
                                                    self.settings.session_ttl_s)
        except StorageUnavailable:
            return True   # retried at the next command

    async def touch(self, conn: Connected) -> None:
        """A long-lived connection keeps its session alive."""
        if conn.player_id is not None:
            try:
                await self.store.touch_session(conn.player_id, self.settings.session_ttl_s)
            except StorageUnavailable:
                log.warning("could not renew session %s; will try again", conn.player_id)

    def gone(self, conn: Connected) -> None:
        if conn.player_id is None:
            return
        conns = self.online.get(conn.player_id)
        if conns is not None:
            conns.discard(conn)
            if not conns:
                del self.online[conn.player_id]

    def connections(self) -> int:
        return sum(len(c) for c in self.online.values())
