"""Key layout: every key starts with the prefix; every per-table key has a hash tag.

The hash tag ``{t:<table_id>}`` makes Redis Cluster hash only the text between the braces,
so a table's document, event log and record land in one slot and a Lua script may touch
them together (scripts may not span slots). Keys, with prefix ``p``:

=================================  ======  =============================================
``p:{t:<tid>}:doc``                hash    ``version``, ``doc`` (snapshot), ``nonce``
``p:{t:<tid>}:log``                list    event log, 8-byte big-endian seq + payload
``p:{t:<tid>}:record``             string  latest finished match's record (outlives the table)
``p:{t:<tid>}:record:<n>``         string  the record of the table's match number n
``p:{t:<tid>}:review:<n>:<s>``     string  the expert's review of seat s in match n
                                           (JSON), expiring with the records
``p:{t:<tid>}:replies:<pid>``      list    a player's last replies at this table, so a
                                           resent command id gets its first answer
``p:{t:<tid>}:ev``                 channel the table's committed events, for the other
                                           server processes (sharded on a cluster)
``p:{t:<tid>}:lease``              string  the process that runs the table's bots and
                                           timers (expires unless renewed)
``p:{t:<tid>}:present``            hash    ``<process>|<player>`` -> live connections
``p:procs``                        zset    server processes, scored by last heartbeat
``p:proc:<process>:url``           string  the address clients reach that process at
                                           (``--advertise-url``); expires unless beaten
``p:{pl:<pid>}:session``           hash    name, current token digest, the presented
                                           one for a short grace; expires when idle
``p:{pl:<pid>}:watching``          zset    tables the player watches without a seat,
                                           scored by when; the latest few, expires with
                                           the session (``list_tables``'s ``watching``)
``p:tables``                       set     ids of live tables
``p:{lobby}:changes``              zset    table ids, scored by the number of their last
                                           lobby change, the newest ``LOBBY_CHANGES_KEPT``
``p:{lobby}:clock``                hash    ``seq`` (the last change's number),
                                           ``trimmed`` (the newest number dropped)
``p:records``                      zset    record ids, score = expiry (unix s) or +inf
=================================  ======  =============================================

Ids are validated because a ``{`` or ``}`` inside an id would silently change which part
of the key Cluster hashes, and an empty id would collide with the index keys.
"""

from __future__ import annotations

import hashlib
import re

_ID_RE = re.compile(r"[A-Za-z0-9_.:\-]{1,128}")
_PREFIX_RE = re.compile(r"[A-Za-z0-9_.:\-]{1,64}")
_SHA256_HEX_RE = re.compile(r"[0-9a-f]{64}")


def check_id(kind: str, value: str) -> str:
    """Return ``value`` if it is a safe id (letters, digits, ``_.:-``, 1-128 chars)."""
    if not isinstance(value, str) or not _ID_RE.fullmatch(value):
        raise ValueError(f"invalid {kind} id {value!r}: use 1-128 of [A-Za-z0-9_.:-]")
    return value


def check_prefix(prefix: str) -> str:
    """Return ``prefix`` if it cannot break the hash-tag layout."""
    if not isinstance(prefix, str) or not _PREFIX_RE.fullmatch(prefix):
        raise ValueError(f"invalid key prefix {prefix!r}: use 1-64 of [A-Za-z0-9_.:-]")
    return prefix


def check_token_hash(token_hash: str) -> str:
    """Refuse anything that is not a lowercase sha256 hex digest.

    Tokens are secrets; only their digest may be stored. Checking the shape here means a
    caller that passes the raw token by mistake gets an error instead of a leak.
    """
    if not isinstance(token_hash, str) or not _SHA256_HEX_RE.fullmatch(token_hash):
        raise ValueError("token_hash must be sha256(token) as 64 lowercase hex digits")
    return token_hash


class Keys:
    """Builds every key the store uses, so the layout lives in one place."""

    def __init__(self, prefix: str) -> None:
        self.prefix = check_prefix(prefix)
        self.tables = f"{prefix}:tables"
        self.records = f"{prefix}:records"
        #: What changed in the lobby, so that each process reads only that (issue 32).
        self.lobby_changes = f"{prefix}:{{lobby}}:changes"
        self.lobby_clock = f"{prefix}:{{lobby}}:clock"

    def table_tag(self, table_id: str) -> str:
        """The hash tag shared by all keys of one table."""
        return "{t:" + check_id("table", table_id) + "}"

    def doc(self, table_id: str) -> str:
        return f"{self.prefix}:{self.table_tag(table_id)}:doc"

    def log(self, table_id: str) -> str:
        return f"{self.prefix}:{self.table_tag(table_id)}:log"

    def deltas(self, table_id: str) -> str:
        """The changes committed since the document was last written whole, in order."""
        return f"{self.prefix}:{self.table_tag(table_id)}:deltas"

    def review(self, table_id: str, match: int, seat: int) -> str:
        """The expert's review of seat ``seat`` in match number ``match`` (issue 28)."""
        return f"{self.prefix}:{self.table_tag(table_id)}:review:{int(match)}:{int(seat)}"

    def record(self, table_id: str, match: int | None = None) -> str:
        """The latest finished match's record, or (``match``) that of match number n."""
        key = f"{self.prefix}:{self.table_tag(table_id)}:record"
        if match is None:
            return key
        if type(match) is not int or match < 1:
            raise ValueError(f"invalid match number {match!r}")
        return f"{key}:{match}"

    def replies(self, table_id: str, player_id: str) -> str:
        return f"{self.prefix}:{self.table_tag(table_id)}:replies:{check_id('player', player_id)}"

    def events(self, table_id: str) -> str:
        return f"{self.prefix}:{self.table_tag(table_id)}:ev"

    def lease(self, table_id: str) -> str:
        return f"{self.prefix}:{self.table_tag(table_id)}:lease"

    def present(self, table_id: str) -> str:
        return f"{self.prefix}:{self.table_tag(table_id)}:present"

    @property
    def procs(self) -> str:
        return f"{self.prefix}:procs"

    def proc_url(self, process: str) -> str:
        return f"{self.prefix}:proc:{check_id('process', process)}:url"

    def session(self, player_id: str) -> str:
        return f"{self.prefix}:{{pl:{check_id('player', player_id)}}}:session"

    def watching(self, player_id: str) -> str:
        return f"{self.prefix}:{{pl:{check_id('player', player_id)}}}:watching"


def hash_token(token: str) -> str:
    """``sha256(token)`` as lowercase hex: the only form of a token the store keeps."""
    return hashlib.sha256(token.encode()).hexdigest()
