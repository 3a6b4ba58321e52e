"""Chat's last two red-team findings (issue 30, item 5).

- **Text made mostly of combining marks** ("Zalgo": one letter under 199 marks, which
  draws over the lines around it) is refused with ``too_many_marks`` and nothing is sent
  or stored; ordinary text in scripts that use marks (Devanagari, Thai, Vietnamese) passes.
- **Mute follows the player**: it is kept by player id, not by connection or session
  token, so a muted player who comes back on a new connection, after a server restart or
  after leaving and watching again is still muted (with accounts, every device of an
  account speaks as the account's player id, so the mute follows the account).

Real server on 127.0.0.1, real store.
"""

from __future__ import annotations

from typing import Any

from protocol import mostly_marks
from server.app import running

from .conftest import server_settings
from .netclient import NetClient

QUIET = {"deals": 1, "bot_delay_ms": 10000, "first_dealer": 3}
ZALGO = "a" + "\u0301" * 199


def chats(client: NetClient, table: str) -> list[dict[str, Any]]:
    return [e["event"] for e in client.events
            if e["table"] == table and e["event"]["type"] == "chat"]


def test_what_counts_as_mostly_marks() -> None:
    assert mostly_marks(ZALGO)
    assert mostly_marks("h\u0336\u0337\u0338e\u0336\u0337\u0338y\u0336\u0337")   # zalgo "hey"
    assert mostly_marks("\u0301\u0301")
    for ordinary in ("hello", "नमस्ते दोस्तो", "สวัสดีครับ", "Tiếng Việt có dấu", "ça va ?",
                     "e\u0301te\u0301", "x\u0301\u0301 y z", ""):
        assert not mostly_marks(ordinary), ordinary


async def test_chat_made_mostly_of_combining_marks_is_refused(connect) -> None:
    ana, sam = await connect("Ana"), await connect("Sam")
    table = (await ana.call("create_table", options=QUIET))["table"]
    await sam.call("spectate", table=table)
    reply = await ana.request("chat", table=table, text=ZALGO)
    assert reply["type"] == "error" and reply["code"] == "too_many_marks", reply
    # Nothing was sent or stored: the next line is the first anyone sees.
    await ana.call("chat", table=table, text="नमस्ते, ça va ?")
    await sam.wait_until(lambda: bool(chats(sam, table)))
    assert [m["text"] for m in chats(sam, table)] == ["नमस्ते, ça va ?"]
    assert [m["text"] for m in chats(ana, table)] == ["नमस्ते, ça va ?"]


async def test_a_mute_follows_the_player_to_a_new_connection_and_a_restart(
        redis_url: str, key_prefix: str, redis_client: Any) -> None:
    settings = server_settings(redis_url, key_prefix)
    async with running(settings) as srv:
        url = f"ws://127.0.0.1:{srv.port}"
        ana, bo = await NetClient.open(url, "Ana"), await NetClient.open(url, "Bo")
        table = (await ana.call("create_table", options=QUIET))["table"]
        await bo.call("spectate", table=table)
        await ana.call("chat", table=table, text="hi Bo")
        await bo.wait_until(lambda: bool(chats(bo, table)))
        await ana.close()
        # Bo mutes Ana, then she comes back on a new connection (her token) and speaks.
        ana_sender = chats(bo, table)[0]["sender"]
        await bo.call("mute", table=table, sender=ana_sender)
        ana = await NetClient.open(url, "Ana", token=ana.welcome["session"], ids=ana.ids)
        await ana.call("resume", token=ana.welcome["session"], table=table, last_seq=2**53 - 1)
        await ana.call("chat", table=table, text="new connection")
        bo_token, bo_ids = bo.welcome["session"], bo.ids
        ana_token, ana_ids = ana.welcome["session"], ana.ids
        await bo.call("chat", table=table, text="marker 1")     # the spectators' line
        await bo.wait_until(lambda: any(m["text"] == "marker 1" for m in chats(bo, table)))
        assert [m["text"] for m in chats(bo, table)] == ["hi Bo", "marker 1"]
        await ana.close()
        await bo.close()
    async with running(settings) as srv:              # a restart, the same store
        url = f"ws://127.0.0.1:{srv.port}"
        bo = await NetClient.open(url, "Bo", token=bo_token, ids=bo_ids)
        await bo.call("resume", token=bo.welcome["session"], table=table, last_seq=2**53 - 1)
        ana = await NetClient.open(url, "Ana", token=ana_token, ids=ana_ids)
        await ana.call("resume", token=ana.welcome["session"], table=table, last_seq=2**53 - 1)
        await ana.call("chat", table=table, text="after a restart")
        # Bo leaves and watches again: the mute stays too.
        await bo.call("leave", table=table)
        await bo.call("spectate", table=table)
        await ana.call("chat", table=table, text="after leaving")
        await bo.call("chat", table=table, text="marker 2")
        await bo.wait_until(lambda: any(m["text"] == "marker 2" for m in chats(bo, table)))
        assert [m["text"] for m in chats(bo, table)] == ["marker 2"]
        assert not any(b"after" in f for f in bo.frames)
        await ana.close()
        await bo.close()
