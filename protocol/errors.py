"""The closed list of error codes and close codes, and the one exception the decoder raises.

Why a closed list: a client written from docs/PROTOCOL.md must be able to switch on every
code it can receive (docs/ARCHITECTURE.md convention 6, "one error tree"). Adding a code is a minor
protocol change (clients treat an unknown code like ``internal_error``); renaming or
removing one is a major change.
"""

from __future__ import annotations

import enum

from .fields import ErrorDetails


class ErrorCode(enum.StrEnum):
    """Every ``code`` an ``error`` message may carry. Values are the wire strings."""

    # Framing and decoding (protocol errors: the client is malformed).
    BAD_FRAME = "bad_frame"
    FRAME_TOO_LARGE = "frame_too_large"
    UNSUPPORTED_VERSION = "unsupported_version"
    UNKNOWN_TYPE = "unknown_type"
    INVALID_FIELD = "invalid_field"
    UNKNOWN_CARD = "unknown_card"
    HELLO_REQUIRED = "hello_required"
    # Session, lobby and table management.
    BAD_TOKEN = "bad_token"
    NO_SUCH_TABLE = "no_such_table"
    BAD_CODE = "bad_code"
    SEAT_TAKEN = "seat_taken"
    TABLE_FULL = "table_full"
    NOT_SEATED = "not_seated"
    NOT_AT_TABLE = "not_at_table"
    NOT_CREATOR = "not_creator"
    NOT_READY = "not_ready"
    TOO_MANY_TABLES = "too_many_tables"
    TOO_MANY_SPECTATORS = "too_many_spectators"
    TOO_MANY_REVIEWS = "too_many_reviews"
    HINTS_OFF = "hints_off"
    #: 1.5: a chat text made mostly of combining marks (issue 30).
    TOO_MANY_MARKS = "too_many_marks"
    NO_SUCH_PLAYER = "no_such_player"
    # Rule errors (the player's fault; the connection stays open).
    NOT_YOUR_TURN = "not_your_turn"
    CARD_NOT_IN_HAND = "card_not_in_hand"
    WRONG_PHASE = "wrong_phase"
    MATCH_OVER = "match_over"
    SIGNALS_OFF = "signals_off"
    BAD_DISCARD = "bad_discard"
    # Server conditions.
    RATE_LIMITED = "rate_limited"
    STORAGE_UNAVAILABLE = "storage_unavailable"
    INTERNAL_ERROR = "internal_error"
    SHUTTING_DOWN = "shutting_down"
    CONFLICT = "conflict"
    SERVER_BUSY = "server_busy"
    # Accounts (added in 1.5, issue 27).
    NAME_TAKEN = "name_taken"
    NAME_REFUSED = "name_refused"
    BAD_CREDENTIALS = "bad_credentials"
    LOGIN_THROTTLED = "login_throttled"
    ALREADY_REGISTERED = "already_registered"
    NOT_REGISTERED = "not_registered"
    BEING_MATCHED = "being_matched"


class CloseCode(enum.IntEnum):
    """WebSocket close codes the server uses (RFC 6455 §7.4; 4000-4999 are ours)."""

    NORMAL = 1000
    GOING_AWAY = 1001  # server shutting down (SIGTERM); reconnect later and resume
    MESSAGE_TOO_BIG = 1009  # frame over the transport hard limit (see limits.py)
    INTERNAL_ERROR = 1011
    SERVICE_RESTART = 1012  # reserved; this server sends 1001 when it stops
    TRY_AGAIN_LATER = 1013  # server or address at its connection limit, storage down
    PROTOCOL_ERROR = 4000  # no hello first, a refused hello, or repeated malformed frames
    UNSUPPORTED_VERSION = 4001  # after error unsupported_version
    BAD_TOKEN = 4002  # after error bad_token in hello
    RATE_LIMITED = 4003  # hard rate limit exceeded
    HELLO_TIMEOUT = 4004  # no hello within the hello timeout
    SLOW_READER = 4008  # outgoing queue overflowed; reconnect and resume
    SESSION_REPLACED = 4009  # the same session connected again elsewhere


class AluetteError(Exception):
    """Root of every error that reaches a client: each class carries its wire ``code``.

    The tree (docs/PROTOCOL.md, "Error codes")::

        AluetteError               code, message, details; never closes by itself
        ├── ProtocolError          a frame that cannot become a command (code per frame)
        ├── CommandError           a session, lobby or table refusal (code per refusal)
        ├── RuleError              the engine refused an action (R9-R16); subclasses in
        │                          server/game/errors.py, one code per class
        └── ServiceError           the server cannot serve now: rate_limited, conflict,
                                   storage_unavailable, shutting_down, internal_error

    A refused command changes nothing, whatever branch refused it.
    """

    code: ErrorCode = ErrorCode.INTERNAL_ERROR

    def __init__(
        self,
        message: str,
        *,
        code: ErrorCode | None = None,
        id: int | None = None,
        details: ErrorDetails | None = None,
    ) -> None:
        if code is not None:
            self.code = code
        super().__init__(message)
        self.message = message
        self.id = id
        self.details = details


class ProtocolError(AluetteError):
    """A client frame that cannot become a command.

    The only exception :func:`protocol.decode_client` raises. ``id`` is the command id when
    it could be recovered from the frame, so the server can echo it in its ``error`` reply
    and the client can match the failure to the command it sent.

    ``well_formed`` is True when the frame was a message (a msgpack map with a string
    ``type`` and a valid ``id``) refused for what it says, not for its form: an
    ``unknown_type`` (perhaps a command of a newer minor version), ``invalid_field`` or
    ``unknown_card``. Such a refusal is matched to its command by its id and does not count
    towards the malformed-frame limit (docs/PROTOCOL.md, "Limits"); every other one does.
    """

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        *,
        id: int | None = None,
        details: ErrorDetails | None = None,
        well_formed: bool = False,
    ) -> None:
        super().__init__(message, code=code, id=id, details=details)
        self.well_formed = well_formed


class CommandError(AluetteError):
    """A well-formed command that cannot be carried out (session, lobby, table); nothing
    was changed."""

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        *,
        details: ErrorDetails | None = None,
    ) -> None:
        super().__init__(message, code=code, details=details)


class RuleError(AluetteError):
    """An action the rules do not allow right now; the engine's subclasses name the rule."""

    code = ErrorCode.WRONG_PHASE


class ServiceError(AluetteError):
    """The server cannot serve the command now; it was not applied, resending is safe."""

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        *,
        details: ErrorDetails | None = None,
    ) -> None:
        super().__init__(message, code=code, details=details)


class EventError(ValueError):
    """A plain map that does not fit the protocol struct it should become.

    Raised by :func:`protocol.options_from_dict`. It is the caller's mistake, never a
    client's frame, so it is deliberately not a :class:`ProtocolError`.
    """
