"""Which account a player id is logged in to: the ``account`` field of the session's hash
(``p:{pl:<pid>}:session``), written at login by the accounts module (issue 27 part A); a
guest's session has none. Read here in one pipelined round trip for a table's players."""

from __future__ import annotations

from collections.abc import Iterable

from server.store import Store
from server.store.client import unavailable_on_error

#: The session hash's field naming the account (the accounts module writes it).
FIELD = "account"


class SessionAccounts:
    def __init__(self, store: Store) -> None:
        self.store = store

    async def of(self, players: Iterable[str]) -> dict[str, str | None]:
        ids = list(dict.fromkeys(players))
        if not ids:
            return {}
        keys = self.store.keys
        with unavailable_on_error("read accounts"):
            async with self.store.redis.pipeline(transaction=False) as pipe:
                for p in ids:
                    pipe.hget(keys.session(p), FIELD)
                raw = await pipe.execute()
        return {p: None if r is None else (r.decode() if isinstance(r, bytes) else str(r))
                for p, r in zip(ids, raw, strict=True)}

    async def set(self, player: str, account: str | None) -> None:
        """Link (or unlink, None) a session to an account: the accounts module's login
        does it; tests and tools call this."""
        key = self.store.keys.session(player)
        with unavailable_on_error("link account"):
            if account is None:
                await self.store.redis.hdel(key, FIELD)
            else:
                await self.store.redis.hset(key, FIELD, account)
