"""The event bus between processes (issue 11): a process drops its own commits unread.

Every commit publishes the document and the events on the table's channel for the other
processes; the process that made it has delivered them already. At full speed a lone
process spent 15% of its loop taking its own messages back through the table's queue and
lock; it now reads only the sender, the message's first element.
"""

from __future__ import annotations

import msgpack

from server.store.bus import sender_of


def test_the_sender_is_read_without_the_rest_of_the_message() -> None:
    doc = b"\x00" * 5000
    message = msgpack.packb(["a1b2c3d4e5f6", 7, doc, [[1, None, b"event"]], 1.5])
    assert sender_of(message) == "a1b2c3d4e5f6"
    closed = msgpack.packb(["a1b2c3d4e5f6", -1, b"", [], 2.0])      # a table swept
    assert sender_of(closed) == "a1b2c3d4e5f6"


def test_a_message_that_is_not_ours_to_read_is_passed_on() -> None:
    assert sender_of(b"") is None
    assert sender_of(b"\xc1") is None                  # never valid msgpack
    assert sender_of(msgpack.packb({"not": "a list"})) is None
    assert sender_of(msgpack.packb([42, 1])) is None   # a sender that is not a process id
