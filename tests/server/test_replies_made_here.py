"""A table this process made reads no stored answers (issue 32), and still answers a resent
command id once (docs/PROTOCOL.md, "Resending").

Every answer stored at such a table was stored by this process, and is kept in memory,
until another process answers at it (its message teaches the answer, or the copy is
cleared) or a write's outcome is unknown (that player's answers are read again). Before,
each player's first command at each new table read the store for answers it could not
have.
"""

from __future__ import annotations

from typing import Any

import msgpack

from server.store import Store
from server.table.replies import Replies

from .players import four_humans


def _entry(cid: int, result: bytes) -> bytes:
    return msgpack.packb([cid, result])  # type: ignore[no-any-return]


async def test_a_table_made_here_reads_no_answers_and_still_answers_a_resend(connect, server):
    store: Store = server.hub.store
    calls: list[str] = []
    observed = store.observe

    def observe(name: str, seconds: float, ok: bool) -> None:
        calls.append(name)
        if observed is not None:
            observed(name, seconds, ok)

    store.observe = observe
    clients = [await connect(f"P{i}") for i in range(4)]
    table = await four_humans(clients, start=False)
    chat = await clients[1].request("chat", cid=900, table=table, text="hello")  # R16's chat
    again = await clients[1].request("chat", cid=900, table=table, text="hello")
    assert chat["type"] == again["type"] == "ok"
    assert again["result"] == chat["result"]
    await clients[0].call("start", table=table)
    # Events come in order: once the start's deal is seen, a second chat would be too.
    await clients[2].wait_event(lambda e: e["type"] == "hand_dealt")
    said = [e for e in clients[2].events
            if e["table"] == table and e["event"]["type"] == "chat"]
    assert len(said) == 1                    # the resend changed nothing
    assert "load_replies" not in calls, calls
    assert "commit" in calls                 # the observer saw the table's store calls


async def test_answers_are_read_once_another_process_may_have_answered(server,
                                                                       redis_client: Any):
    store: Store = server.hub.store
    table, player = "replies-made-here", "someone"
    # An answer the store holds that this process did not make (another process's).
    await redis_client.lpush(store.keys.replies(table, player), _entry(7, b"theirs"))
    replies = Replies(store, table, complete=True)
    assert await replies.prior(player, 7) is None          # made here: nothing is read
    replies.clear()                                         # another process's commit
    assert await replies.prior(player, 7) == b"theirs"

    replies = Replies(store, table, complete=True)
    replies.forget("anyone")                                # a write's outcome unknown
    assert await replies.prior(player, 7) == b"theirs"

    replies = Replies(store, table, complete=True)
    replies.learn(player, _entry(8, b"heard"))              # another process's message
    assert await replies.prior(player, 8) == b"heard"
    assert await replies.prior(player, 7) is None


async def test_a_loaded_table_reads_its_answers(server, redis_client: Any):
    store: Store = server.hub.store
    table, player = "replies-loaded", "someone"
    await redis_client.lpush(store.keys.replies(table, player), _entry(3, b"stored"))
    replies = Replies(store, table)
    assert await replies.prior(player, 3) == b"stored"
    replies.learn("other", _entry(4, b"heard"))             # not loaded: left to the store
    await redis_client.lpush(store.keys.replies(table, "other"), _entry(5, b"kept"))
    assert await replies.prior("other", 5) == b"kept"
