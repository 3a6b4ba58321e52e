"""Limits every peer can rely on; documented in docs/PROTOCOL.md ("Limits").

They live in the protocol package, not the server, because clients need them too (the CLI
truncates a name before sending it rather than getting ``invalid_field`` back).
"""

from __future__ import annotations

#: Largest client frame the server decodes; checked on the raw length before any decoding,
#: so a huge frame costs nothing to reject (error ``frame_too_large``).
MAX_FRAME_BYTES = 16 * 1024
#: Largest frame the transport accepts at all (websockets ``max_size``); above it the
#: connection is closed with 1009 instead of answered.
TRANSPORT_MAX_BYTES = 64 * 1024
#: Largest server frame a client must accept (a snapshot or a 50-deal match record).
MAX_SERVER_FRAME_BYTES = 1024 * 1024

#: Player and table names, in code points, after :func:`protocol.clean_text`.
MAX_NAME_LEN = 32
#: Table ids are chosen by the server; this bounds what a client may send back.
MAX_TABLE_ID_LEN = 64
#: Session tokens (opaque, server-chosen).
MAX_TOKEN_LEN = 128
#: Account passwords (1.5, issue 27), in code points: a new one has at least
#: ``MIN_PASSWORD_LEN``; the longest keeps a hash's input (and a frame) bounded.
MIN_PASSWORD_LEN = 8
MAX_PASSWORD_LEN = 256
#: Join codes of private tables.
MAX_CODE_LEN = 16
#: How many versions a ``hello`` may offer.
MAX_VERSIONS = 16
#: Most tables in one ``list_tables`` page (and the default page size).
MAX_PAGE_TABLES = 50
#: Malformed frames (frames that are not messages: no map, no string ``type`` or no valid
#: ``id``; see ProtocolError.well_formed) a connection may send within
#: ``BAD_FRAME_WINDOW_S`` before it is closed with 4000 (each is still answered).
MAX_BAD_FRAMES = 10
BAD_FRAME_WINDOW_S = 60
#: Tables a player watches without a seat that ``list_tables`` names (``watching``, added
#: in 1.5): the most recent ones.
MAX_WATCHING = 20
#: Human-readable ``message`` of an error.
MAX_MESSAGE_LEN = 512
#: The longest ``url`` of a ``home`` message (1.6): a server process's public address.
MAX_URL_LEN = 512

#: Chat messages (``chat``), in code points after :func:`protocol.clean_text`; what is
#: sent may be longer before cleaning, up to ``MAX_CHAT_RAW_LEN``.
MAX_CHAT_LEN = 200
MAX_CHAT_RAW_LEN = 1000
#: Chat has its own token bucket per player at each table, apart from the command rate
#: (which still counts every frame): sustained messages per second, and burst.
CHAT_PER_SECOND = 0.5
CHAT_BURST = 5
#: Senders one player may keep muted at one table.
MAX_MUTES = 64
#: Chat lines a table keeps for its heads (``chat_history``): a reloaded page or a late
#: spectator sees the conversation so far. Small, because they live in the table's
#: document, written at every move: at most about 25 KiB even with the longest texts.
CHAT_HISTORY = 30
#: A player's contribution to a match's seed (R8a): 1 to 64 lowercase hex digits.
MAX_CONTRIBUTION_LEN = 64

#: Command ids are ints in 0..2**53 so that JavaScript clients can use plain numbers.
MAX_COMMAND_ID = 2**53

#: Token bucket per connection: sustained commands per second and burst size. Over it the
#: command is answered with ``rate_limited``; far over it (HARD) the connection is closed.
RATE_PER_SECOND = 20
RATE_BURST = 40
RATE_HARD_MULTIPLIER = 3

#: Protocol limits on game values (docs/RULES.md).
SEATS = 4  # R4
MAX_DEALS = 50  # option ``deals``
MAX_TARGET_POINTS = 50  # R14a
MAX_BOT_DELAY_MS = 10_000
MAX_TURN_TIMER_S = 3600
MAX_GRACE_S = 3600

#: The cap, in seconds, on a search bot's thinking over one move unless told otherwise: a
#: server's bots (``aluette-server --bot-think``) and a network bot (``aluette --bot
#: --think-ms``) both keep a table's pace with it, a decision never much over 100 ms on a
#: slow machine (docs/BOTS.md). Here, at the bottom, because both sides use it.
BOT_THINK_S = 0.08

#: A connection that sends no ``hello`` within this many seconds is closed with 4004.
HELLO_TIMEOUT_S = 10
#: Clients send ``ping`` when idle this long, so proxies do not drop the connection.
PING_INTERVAL_S = 20
