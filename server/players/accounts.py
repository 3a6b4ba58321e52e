"""Which account a player id belongs to (issue 27).

The accounts module (``server/accounts``, issue 27 part A) keeps one account per player id
in ``p:{accounts}:players`` (player id -> account key; an account's sessions on every
device speak for the account's one player id), and marks each account session's hash
(``p:{pl:<sid>}:session``) with an ``account`` field. Both are read here, in one pipelined
round trip for a table's players: the players hash first, the session's field otherwise.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from server.store import Store
from server.store.base import _text
from server.store.client import unavailable_on_error

#: The session hash's field naming the account (the accounts module writes it).
FIELD = "account"


class SessionAccounts:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.players_key = f"{store.prefix}:{{accounts}}:players"

    async def of(self, players: Iterable[str]) -> dict[str, str | None]:
        ids = list(dict.fromkeys(players))
        if not ids:
            return {}
        keys, run = self.store.keys, self.store.run_command
        with unavailable_on_error("read accounts"):
            # On the commits' line, sent together (issue 32: redis-py's pipeline was 2% of
            # a process at the load bench's churn of a match a table).
            owned, *marked = await asyncio.gather(
                run("HMGET", self.players_key, *ids),
                *(run("HGET", keys.session(p), FIELD) for p in ids))
        return {p: _text(o) if o is not None else (_text(m) if m is not None else None)
                for p, o, m in zip(ids, owned, marked, strict=True)}

    async def set(self, player: str, account: str | None) -> None:
        """Link (or unlink, None) a player id to an account, as the accounts module's
        registration does; tests and tools call this."""
        key = self.store.keys.session(player)
        with unavailable_on_error("link account"):
            async with self.store.redis.pipeline(transaction=True) as pipe:
                if account is None:
                    pipe.hdel(self.players_key, player)
                    pipe.hdel(key, FIELD)
                else:
                    pipe.hset(self.players_key, player, account)
                    pipe.hset(key, FIELD, account)
                await pipe.execute()
