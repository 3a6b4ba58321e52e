"""``LeaseStore``: this process among others on one store (issue 11): who holds each
table's lease, who is present at a table over every process, which processes are alive,
and the messages a table sends outside a commit."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import ClassVar

from redis.commands.core import AsyncScript
from redis.exceptions import NoScriptError

from server.store import scripts
from server.store.base import StoreBase, _text
from server.store.bus import CLOSED, TableCommit
from server.store.client import unavailable_on_error


class LeaseStore(StoreBase):
    """Leases, presence counts, heartbeats and the table channel's beacons."""

    SCRIPTS: ClassVar[Mapping[str, str]] = {
        "_take_lease": scripts.TAKE_LEASE,
        "_release_lease": scripts.RELEASE_LEASE,
        "_presence": scripts.PRESENCE,
        "_presence_many": scripts.PRESENCE_MANY,
        "_presents": scripts.PRESENTS,
    }
    _take_lease: AsyncScript
    _release_lease: AsyncScript
    _presence: AsyncScript
    _presence_many: AsyncScript
    _presents: AsyncScript

    async def take_lease(self, table_id: str, process: str, seen: str | None,
                         ttl_s: int) -> bool:
        """Make ``process`` the table's owner if the holder is still ``seen`` (None: no
        holder). A lease has no expiry of its own: it is worth what its holder's
        heartbeat is (``ttl_s`` only lets the key of a forgotten table go)."""
        with unavailable_on_error(f"lease {table_id}"):
            return bool(await self.run_script(self._take_lease, [self.keys.lease(table_id)],
                                              [process, seen or "", int(ttl_s)]))

    async def lease_holders(self, table_ids: Sequence[str], refresh_ttl_s: int = 0
                            ) -> list[str | None]:
        """Who holds each table's lease (one pipelined round trip)."""
        if not table_ids:
            return []
        with unavailable_on_error("read leases"):
            async with self.redis.pipeline(transaction=False) as pipe:
                for tid in table_ids:
                    pipe.get(self.keys.lease(tid))
                    if refresh_ttl_s:
                        pipe.expire(self.keys.lease(tid), refresh_ttl_s)
                raw = await pipe.execute()
        step = 2 if refresh_ttl_s else 1
        return [None if r is None else r.decode() for r in raw[::step]]

    async def release_lease(self, table_id: str, process: str) -> None:
        with unavailable_on_error(f"release {table_id}"):
            await self.run_script(self._release_lease, [self.keys.lease(table_id)], [process])

    async def presence(self, table_id: str, field: str, delta: int, ttl_s: int) -> int:
        """Count one of this process's connections of a player in or out of a table."""
        with unavailable_on_error(f"presence at {table_id}"):
            return int(await self._presence(keys=[self.keys.present(table_id)],
                                            args=[field, int(delta), int(ttl_s)]))

    async def presence_many(self, changes: Sequence[tuple[str, str, int]], ttl_s: int) -> None:
        """Several presence counts, ``(table, field, delta)``, in one round trip."""
        if not changes:
            return
        with unavailable_on_error("presence"):
            if self.one_node:       # one script on the commits' line
                args: list[str | int] = [int(ttl_s)]
                for _, field, delta in changes:
                    args += [field, int(delta)]
                await self.run_script(self._presence_many,
                                      [self.keys.present(t) for t, _, _ in changes], args)
                return
            # A Cluster's pipeline does not load a script its node lacks (a new or failed
            # over master): load it on every master, then send the batch again.
            for attempt in range(2):
                try:
                    async with self.redis.pipeline(transaction=False) as pipe:
                        for table_id, field, delta in changes:
                            await self._presence(keys=[self.keys.present(table_id)],
                                                 args=[field, int(delta), int(ttl_s)],
                                                 client=pipe)
                        await pipe.execute()
                    return
                except NoScriptError:
                    if attempt:
                        raise
                    await self.redis.script_load(self._presence.script)

    async def presents(self, table_ids: Sequence[str]) -> dict[str, dict[str, int]]:
        """:meth:`present` of several tables in one round trip."""
        if not table_ids:
            return {}

        async def read() -> list[dict[bytes | str, bytes | str]]:
            if self.one_node:       # one script on the commits' line
                flat = await self.run_script(
                    self._presents, [self.keys.present(t) for t in table_ids], [])
                return [dict(zip(f[::2], f[1::2], strict=True)) for f in flat]
            async with self.redis.pipeline(transaction=False) as pipe:
                for table_id in table_ids:
                    pipe.hgetall(self.keys.present(table_id))
                return await pipe.execute()
        raw = await self._proven("presence of tables", read)
        return {tid: {_text(k): int(v) for k, v in counts.items()}
                for tid, counts in zip(table_ids, raw, strict=True)}

    async def present(self, table_id: str) -> dict[str, int]:
        """``{"<process>|<player>": connections}`` at a table, over every process."""
        raw = await self._proven(f"presence at {table_id}",
                                 lambda: self.redis.hgetall(self.keys.present(table_id)))
        return {_text(k): int(v) for k, v in raw.items()}

    async def publish_table(self, table_id: str, message: bytes) -> None:
        """Publish a message on the table's channel, outside a commit (a beacon)."""
        with unavailable_on_error(f"publish {table_id}"):
            await self.redis.spublish(self.keys.events(table_id), message)

    async def publish_closed(self, table_id: str, process: str) -> None:
        """Tell the other processes a table is gone (its keys were just deleted)."""
        closed = TableCommit(process, CLOSED, b"", [], time.time())
        with unavailable_on_error(f"publish {table_id}"):
            await self.redis.spublish(self.keys.events(table_id), closed.encode())

    async def heartbeat(self, process: str, now: float) -> None:
        with unavailable_on_error("heartbeat"):
            await self.redis.zadd(self.keys.procs, {process: now})

    async def advertise(self, process: str, url: str, ttl_s: int) -> None:
        """Where clients reach ``process`` (issue 32, a table's home), for ``ttl_s``: it
        is written at each beat, so a stopped process's address goes with its beat."""
        with unavailable_on_error("advertise"):
            await self.redis.set(self.keys.proc_url(process), url, ex=max(1, ttl_s))

    async def leave(self, process: str) -> None:
        with unavailable_on_error("leave"):
            await self.redis.zrem(self.keys.procs, process)
            await self.redis.delete(self.keys.proc_url(process))

    async def home_of(self, table_id: str) -> tuple[str, str] | None:
        """The process holding the table's lease and the address it advertises, or None
        (no holder, or a holder that advertises none, or has stopped beating)."""
        with unavailable_on_error(f"home {table_id}"):
            holder = await self.redis.get(self.keys.lease(table_id))
            if holder is None:
                return None
            process = _text(holder)
            url = await self.redis.get(self.keys.proc_url(process))
        return None if url is None else (process, _text(url))

    async def live_processes(self, since: float) -> list[str]:
        """Processes that beat since ``since`` (a dead one's presence is ignored)."""
        with unavailable_on_error("processes"):
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.zremrangebyscore(self.keys.procs, "-inf", f"({since - 3600}")
                pipe.zrangebyscore(self.keys.procs, since, "+inf")
                _, raw = await pipe.execute()
        return [_text(p) for p in raw]
