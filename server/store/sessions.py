"""``SessionStore``: who a connection speaks for (sessions and their rotating token
digests), and the tables each session watches without a seat."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import ClassVar, NamedTuple

from redis.commands.core import AsyncScript

from server.store import scripts
from server.store.base import StoreBase, _text
from server.store.client import unavailable_on_error
from server.store.keys import check_id, check_token_hash


class Rotated(NamedTuple):
    """A session's token rotated by a hello: its name, and the rotation's generation."""

    name: str
    generation: int

class SessionStore(StoreBase):
    """Sessions (only token digests are stored) and the tables a session watches."""

    SCRIPTS: ClassVar[Mapping[str, str]] = {
        "_session_hello": scripts.SESSION_HELLO,
        "_session_confirm": scripts.SESSION_CONFIRM,
    }
    _session_hello: AsyncScript
    _session_confirm: AsyncScript

    async def new_session(self, player_id: str, name: str, token_hash: str,
                          ttl_s: int) -> None:
        """A new session whose current token is ``token_hash`` (the raw token is never
        stored); it expires after ``ttl_s`` without a hello or a touch."""
        check_token_hash(token_hash)
        key = self.keys.session(player_id)
        with unavailable_on_error(f"create session {player_id}"):
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.hset(key, mapping={"name": name, "current": token_hash,
                                        "created": int(time.time())})
                pipe.expire(key, int(ttl_s))
                await pipe.execute()

    async def resume_session(self, player_id: str, presented: str, new: str, *,
                             grace_s: int, ttl_s: int, now: float | None = None,
                             name: str | None = None) -> str | None:
        """Rotate the session's token: ``new`` becomes current, ``presented`` stays usable
        for ``grace_s`` (until :meth:`confirm_session`), any older token dies. ``name``, if
        given, becomes the session's name (a hello renames its session, protocol 1.5).
        Returns the session's name, or None when ``presented`` is not this session's
        (unknown, replaced, expired)."""
        rotated = await self.rotate_session(player_id, presented, new, grace_s=grace_s,
                                            ttl_s=ttl_s, now=now, name=name)
        return None if rotated is None else rotated.name

    async def rotate_session(self, player_id: str, presented: str, new: str, *,
                             grace_s: int, ttl_s: int, now: float | None = None,
                             name: str | None = None) -> Rotated | None:
        """:meth:`resume_session`, with the rotation's generation (1, 2, ... per session):
        of two hellos with one token at once, the higher generation holds the token."""
        check_token_hash(presented)
        check_token_hash(new)
        now = time.time() if now is None else now
        with unavailable_on_error(f"resume session {player_id}"):
            reply = await self._session_hello(
                keys=[self.keys.session(player_id)],
                args=[presented, new, int(now), int(grace_s), int(ttl_s), name or ""])
        if not reply[0]:
            return None
        name = reply[1]
        return Rotated(name.decode() if isinstance(name, bytes) else str(name), int(reply[2]))

    async def confirm_session(self, player_id: str, token_hash: str, ttl_s: int) -> bool:
        """The connection holding ``token_hash`` sent a command: retire the token its hello
        presented. False if the session has moved on to another token since."""
        with unavailable_on_error(f"confirm session {player_id}"):
            return bool(await self._session_confirm(
                keys=[self.keys.session(player_id)], args=[token_hash, int(ttl_s)]))

    async def session_token(self, player_id: str) -> str | None:
        """The current token digest of a session, or None (expired)."""
        raw = await self._proven(f"read session {player_id}",
                                 lambda: self.redis.hget(self.keys.session(player_id), "current"))
        return None if raw is None else _text(raw)

    async def touch_session(self, player_id: str, ttl_s: int) -> None:
        """A long-lived connection keeps its session (and the tables it watches, which
        belong to it) from expiring."""
        with unavailable_on_error(f"touch session {player_id}"):
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.expire(self.keys.session(player_id), int(ttl_s))
                pipe.expire(self.keys.watching(player_id), int(ttl_s))
                await pipe.execute()

    # -- tables a player watches ----------------------------------------------------

    async def note_watching(self, player_id: str, table_id: str, *, now: float, kept: int,
                            ttl_s: int) -> None:
        """``player_id`` watches ``table_id`` without a seat: remember it (the latest
        ``kept`` tables only), for as long as the session lives."""
        check_id("table", table_id)
        key = self.keys.watching(player_id)
        with unavailable_on_error(f"note watching {player_id}"):
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.zadd(key, {table_id: now})
                pipe.zremrangebyrank(key, 0, -int(kept) - 1)
                pipe.expire(key, int(ttl_s))
                await pipe.execute()

    async def forget_watching(self, player_id: str, table_id: str) -> None:
        """``player_id`` stopped watching ``table_id``."""
        check_id("table", table_id)
        with unavailable_on_error(f"forget watching {player_id}"):
            await self.run_command("ZREM", self.keys.watching(player_id), table_id)

    async def watching(self, player_id: str) -> list[str]:
        """The tables ``player_id`` watches, the most recently noted first."""
        raw = await self._proven(
            f"read watching {player_id}",
            lambda: self.redis.zrevrange(self.keys.watching(player_id), 0, -1))
        # Without scores, ZREVRANGE answers members only.
        return [_text(m) for m in raw if isinstance(m, bytes | str)]
