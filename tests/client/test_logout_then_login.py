"""A login typed right after a logout is answered (the terminal client's ``logout``).

The server answers ``logout`` with ``ok`` and then closes the socket (4002). A command the
client sends in between goes out on a closing socket and gets no answer; a ``login`` is
never resent (it carries a password), so it failed with "connection lost before the
reply". The browser had the same race (fixed in its ``Connection.reconnectNow``); the
terminal client now says hello on a new socket before ``end_session`` returns.
"""

from __future__ import annotations

from typing import Any

import protocol
from client_cli.connection import Connection
from server.app import running

from .test_connection import settings

PASSWORD = "correct horse battery"


async def test_a_login_sent_right_after_a_logout_is_answered(redis_url: str, key_prefix: str,
                                                            redis_client: Any) -> None:
    statuses: list[str] = []
    async with running(settings(redis_url, key_prefix)) as srv:
        conn = Connection(f"ws://127.0.0.1:{srv.port}", "Ana",
                          on_status=lambda kind, text: statuses.append(kind))
        await conn.start()
        try:
            await conn.call(protocol.Register, resend=False, name="Ana", password=PASSWORD)
            for everywhere in (False, True, False):
                assert await conn.end_session(everywhere=everywhere) >= 1
                assert conn.token is not None and conn.online    # a guest's new session
                guest = conn.player_id
                back = await conn.call(protocol.Login, resend=False, name="Ana",
                                       password=PASSWORD)
                assert back["account"] == "ana" and back["player_id"] != guest
                conn.session.token = str(back["session"])
        finally:
            await conn.close()
    # The new socket is no news to the person at the terminal.
    assert "lost" not in statuses and "reconnected" not in statuses, statuses
