"""Accounts as a service: register, log in, change a password, and the name rules that
guests meet too (issue 27).

What it promises:

- a name is registered once, by its key and by its skeleton (``names.py``); a guest may
  not go by a registered name either (:meth:`Accounts.guest_name_free`);
- a password is checked by Argon2id off the event loop (``passwords.py``); an unknown name
  is checked against a dummy hash, so it is refused in the same time and with the same
  answer (``bad_credentials``) as a wrong password;
- attempts are counted per account and per address before the check (``login_throttled``
  with ``details.retry_after_ms`` past the free ones, the wait doubling each time), and
  every refusal is logged with the address and, if it exists, the account: never the
  password, nor the name as typed (a password typed in the name field is a classic leak);
- nothing here returns or logs a hash or a token.

The shell (``server/sessions.py``, ``server/logins.py``) owns connections and tokens.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from protocol import CommandError, ErrorCode, ServiceError
from server.store.accounts import Account, AccountStore, Limit

from .names import AccountName, NameRefused, check_account_name, name_key, skeleton
from .passwords import Hasher, HasherBusy

log = logging.getLogger(__name__)


_PER_ACCOUNT = Limit(5, 1000, 15 * 60 * 1000)
_PER_ADDRESS = Limit(20, 1000, 15 * 60 * 1000)


@dataclass(frozen=True, slots=True)
class LoginPolicy:
    """How many login attempts are free, and the waits after them."""

    per_account: Limit = _PER_ACCOUNT
    per_address: Limit = _PER_ADDRESS
    window_s: int = 3600


def _busy() -> ServiceError:
    return ServiceError(ErrorCode.SERVER_BUSY, "too many logins at once; try again shortly",
                        details={"retry_after_ms": 1000})


def _bad_credentials() -> CommandError:
    return CommandError(ErrorCode.BAD_CREDENTIALS, "wrong name or password")


class Accounts:
    def __init__(self, store: AccountStore, hasher: Hasher,
                 policy: LoginPolicy = LoginPolicy()) -> None:
        self.store = store
        self.hasher = hasher
        self.policy = policy

    # -- names -----------------------------------------------------------------------

    def check_name(self, name: str) -> AccountName:
        try:
            return check_account_name(name)
        except NameRefused as exc:
            raise CommandError(ErrorCode.NAME_REFUSED, str(exc),
                               details={"reason": exc.reason}) from None

    async def guest_name_free(self, name: str) -> bool:
        """May a guest go by ``name``? Not if an account has it, or one confusable."""
        return await self.store.name_owner(name_key(name), skeleton(name)) is None

    # -- register ----------------------------------------------------------------------

    async def register(self, player: str, name: str, password: str) -> AccountName:
        """Make ``player`` an account named ``name``; raises ``name_refused``,
        ``name_taken`` (details.reason ``taken`` or ``confusable``) or
        ``already_registered``."""
        checked = self.check_name(name)
        if await self.store.name_owner(checked.key, checked.skeleton) is not None:
            raise self._taken(checked, await self._why_taken(checked))
        try:
            hashed = await self.hasher.hash(password)
        except HasherBusy:
            raise _busy() from None
        outcome = await self.store.register(key=checked.key, name=checked.display,
                                            skeleton=checked.skeleton, password_hash=hashed,
                                            player=player)
        if outcome == "player":
            raise CommandError(ErrorCode.ALREADY_REGISTERED,
                               "this player already has an account: log in to it")
        if outcome != "ok":
            raise self._taken(checked, outcome)
        log.info("account %r registered (player %s)", checked.key, player)
        return checked

    async def _why_taken(self, checked: AccountName) -> str:
        return "taken" if await self.store.account(checked.key) is not None else "confusable"

    @staticmethod
    def _taken(checked: AccountName, reason: str) -> CommandError:
        message = ("this name is taken" if reason == "taken"
                   else "this name looks like a name that is taken")
        return CommandError(ErrorCode.NAME_TAKEN, message, details={"reason": reason})

    # -- log in ------------------------------------------------------------------------

    async def authenticate(self, name: str, password: str, address: str) -> Account:
        """The account ``name`` names if ``password`` is its password; else
        ``bad_credentials`` (whether or not the name exists) or ``login_throttled``."""
        key = name_key(name)
        await self._attempt(key, address)
        account = await self.store.account(key)
        try:
            checked = await self.hasher.check(account.hash if account else None, password)
        except HasherBusy:
            raise _busy() from None
        if account is None or not checked.ok:
            # The account's key only if it exists: what was typed may be a password.
            log.warning("login refused from %s: %s", address,
                        f"wrong password for account {key!r}" if account else "no such name")
            raise _bad_credentials()
        await self.store.succeeded(key, address)
        if checked.stale:
            await self._rehash(account, password)
        return account

    async def _attempt(self, key: str, address: str) -> None:
        p = self.policy
        wait = await self.store.attempt(key, address, p.per_account, p.per_address,
                                        p.window_s)
        if wait > 0:
            log.warning("login throttled from %s (%d ms to wait)", address, wait)
            raise CommandError(ErrorCode.LOGIN_THROTTLED,
                               "too many login attempts; wait before trying again",
                               details={"retry_after_ms": wait})

    async def _rehash(self, account: Account, password: str) -> None:
        """The hash was made with older parameters: store one with today's."""
        try:
            fresh = await self.hasher.hash(password)
        except HasherBusy:
            return   # next time
        await self.store.set_hash(account.key, account.hash, fresh)

    async def change_password(self, account: str, old: str, new: str, address: str) -> None:
        """Check ``old`` (counted as a login attempt), then store ``new``'s hash."""
        await self._attempt(account, address)
        stored = await self.store.account(account)
        try:
            checked = await self.hasher.check(stored.hash if stored else None, old)
            if stored is None or not checked.ok:
                log.warning("password change refused from %s for account %r", address,
                            account)
                raise _bad_credentials()
            fresh = await self.hasher.hash(new)
        except HasherBusy:
            raise _busy() from None
        await self.store.succeeded(account, address)
        if not await self.store.set_hash(account, stored.hash, fresh):
            raise ServiceError(ErrorCode.CONFLICT, "the password changed meanwhile; "
                               "nothing was changed")
        log.info("account %r changed its password", account)
