"""Password hashing: Argon2id (``argon2-cffi``), always off the event loop.

Why a thread pool of its own: one hash takes tens of milliseconds of CPU and some tens of
MiB of memory (that is its point), so on the loop's thread a few logins would stall every
table. ``argon2-cffi`` releases the GIL while it hashes, so the pool's threads run in
parallel with the loop; the pool is as wide as ``workers`` (at most the cores), and the
hashes waiting for it wait in a bounded queue: past ``queue`` waiting hashes a login is
refused (``server_busy``) instead of holding memory and making every login slow.

Comparison is the library's (libargon2 compares in constant time). An unknown name is
checked against a dummy hash made with the same parameters at start, so a refusal takes
as long whether the name exists or not.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from argon2 import PasswordHasher, Type
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

#: OWASP's password storage cheat sheet's minimum for Argon2id: 19 MiB, 2 passes, 1 lane.
DEFAULT_MEMORY_KIB = 19 * 1024
DEFAULT_TIME_COST = 2

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class HashParams:
    memory_kib: int = DEFAULT_MEMORY_KIB
    time_cost: int = DEFAULT_TIME_COST
    parallelism: int = 1


class HasherBusy(Exception):
    """More hashes wait than the queue holds: try again shortly."""


@dataclass(frozen=True, slots=True)
class Checked:
    ok: bool
    #: The stored hash was made with other parameters: hash the password again.
    stale: bool = False


class Hasher:
    """Argon2id hashes and checks on a bounded pool of threads (an object with a
    lifecycle: :meth:`close` stops the threads)."""

    def __init__(self, params: HashParams | None = None, *, workers: int = 2,
                 queue: int = 256) -> None:
        self.params = params = params or HashParams()
        self._ph = PasswordHasher(time_cost=params.time_cost, memory_cost=params.memory_kib,
                                  parallelism=params.parallelism, type=Type.ID)
        self._pool = ThreadPoolExecutor(max_workers=max(1, workers),
                                        thread_name_prefix="argon2")
        self._slots = max(1, workers) + max(0, queue)
        self.in_flight = 0
        # Made once, with the same parameters: what an unknown name is checked against.
        self._dummy = self._ph.hash(secrets.token_urlsafe(16))


    async def _submit(self, fn: Callable[..., T], *args: str) -> T:
        if self.in_flight >= self._slots:
            raise HasherBusy
        self.in_flight += 1
        try:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(self._pool, fn, *args)
        finally:
            self.in_flight -= 1

    async def hash(self, password: str) -> str:
        """A new Argon2id hash (PHC string: algorithm, parameters, salt and digest)."""
        return await self._submit(self._ph.hash, password)

    def _check(self, stored: str, password: str) -> Checked:
        try:
            self._ph.verify(stored, password)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return Checked(False)
        return Checked(True, stale=self._ph.check_needs_rehash(stored))

    async def check(self, stored: str | None, password: str) -> Checked:
        """Whether ``password`` matches ``stored``; ``None`` (no such account) is checked
        against the dummy hash and always fails, in the same time."""
        result = await self._submit(self._check, self._dummy if stored is None else stored,
                                    password)
        return result if stored is not None else Checked(False)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
