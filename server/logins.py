"""A connection's account commands (protocol 1.5, issue 27): ``register``, ``login``,
``change_password``, ``logout``, ``logout_all``.

The accounts service (``server/accounts``) checks names and passwords; the sessions
(``server/sessions.py``) own tokens and connections; this module says what each command
does to the connection. Nothing here logs or answers a password, a hash or a token other
than the connection's own new one (``login``'s result, to its own client).
"""

from __future__ import annotations

import protocol
from protocol import CommandError, ErrorCode, ServiceError
from protocol.results import AccountResult, LoginResult, Result, RevokedResult

from .hub import Hub
from .wire import Client

AccountCommand = (protocol.Register | protocol.Login | protocol.ChangePassword
                  | protocol.Logout | protocol.LogoutAll)


def _registered(client: Client) -> str:
    if client.account is None:
        raise CommandError(ErrorCode.NOT_REGISTERED, "this session is a guest's: "
                           "register or log in first")
    return client.account


async def account_command(hub: Hub, client: Client, cmd: AccountCommand) -> None:
    """Carry out one account command and answer it (the connection may close after)."""
    accounts, sessions = hub.accounts, hub.sessions
    sid = sessions.session_of(client)
    result: Result
    close_after = False
    match cmd:
        case protocol.Register(name=name, password=password):
            if client.account is not None:
                raise CommandError(ErrorCode.ALREADY_REGISTERED,
                                   "this session is already an account's")
            made = await accounts.register(client.player, name, password)
            await accounts.store.adopt(sid, made.key, made.display,
                                       hub.settings.session_ttl_s)
            client.account, client.name = made.key, made.display
            await hub.players.registered(client.player, made.key)   # the guest's matches
            result = AccountResult(player_id=client.player, name=made.display,
                                   account=made.key)
        case protocol.Login(name=name, password=password):
            if client.tables:
                raise CommandError(ErrorCode.WRONG_PHASE, "leave your tables before you log "
                                   "in (or log in on a new connection)")
            account = await accounts.authenticate(name, password, client.address)
            token = await sessions.login(client, account)
            result = LoginResult(player_id=account.player, name=account.name,
                                 account=account.key, session=token)
        case protocol.ChangePassword(old_password=old, new_password=new):
            key = _registered(client)
            await accounts.change_password(key, old, new, client.address)
            revoked = await accounts.store.revoke(key, keep=sid)
            sessions.revoked(revoked)
            await hub.session_news.revoked(revoked)
            result = RevokedResult(revoked=len(revoked))
        case protocol.Logout():
            key = _registered(client)
            one = await accounts.store.revoke_one(key, sid)
            await hub.session_news.revoked([sid])
            result, close_after = RevokedResult(revoked=one), True
        case protocol.LogoutAll():
            key = _registered(client)
            ids = await accounts.store.revoke(key)
            sessions.revoked(ids, keep=client)
            await hub.session_news.revoked(ids)
            result, close_after = RevokedResult(revoked=len(ids)), True
        case _:   # pragma: no cover  (the router sends only these)
            raise ServiceError(ErrorCode.INTERNAL_ERROR, "not an account command")
    client.reply(cmd.id, result)
    if close_after:
        # This connection's token is dead too: the client says hello again, without it.
        client.drop(protocol.CloseCode.BAD_TOKEN, "logged out")
