"""Store identity: a random id held by the store and by its data directory.

Why: a server that reaches *a* Redis is not necessarily talking to *its* Redis. A restart
that dialled a port another process had taken "loaded 0 tables", said it was healthy and
wrote into someone else's database. With an identity on both sides the server checks, at
start and on every new connection (``client.IdentityGuard``), that the store it reached is
the one its data belongs to.

Where it lives:

* in the store, the string key ``<prefix>:store-identity`` (32 hex digits);
* in embedded mode, also the file ``store-identity`` (0600) in the data directory, so that
  an empty store (its append-only files lost) is told apart from a first start.

What a start decides (``establish_identity``), embedded mode:

=================  ======================  ===============================================
data dir file      store key               outcome
=================  ======================  ===============================================
absent             absent, store empty     first start: write the key, then the file
absent             absent, store has data  data from before identities: adopted once
absent             present                 file lost: restored from the key
present            equal                   normal start
present            different               ``IdentityMismatch``
present            absent, store empty     ``StoreEmpty``
present            absent, store has data  ``IdentityMismatch`` (no identity)
=================  ======================  ===============================================

The key is written before the file, so a crash in between leaves "key, no file" (restored
next time), never "file, no key" (which would read as an empty store).

``--redis-url`` mode has no data directory: the first start writes the key if it is
absent (``SET NX``, so concurrent first starts agree on one), and the process keeps the
identity it read for its whole life.
"""

from __future__ import annotations

import logging
import re
import secrets
from pathlib import Path

import redis.asyncio as aioredis

from server.store.datadir import write_private
from server.store.errors import IdentityMismatch, StorageStartupError, StoreEmpty
from server.store.keys import check_prefix

log = logging.getLogger(__name__)

IDENTITY_FILE = "store-identity"
_IDENTITY_RE = re.compile(r"[0-9a-f]{32}")


def identity_key(prefix: str) -> str:
    """The store key holding the identity (outside any hash tag: one key, one slot)."""
    return f"{check_prefix(prefix)}:store-identity"


def new_identity() -> str:
    return secrets.token_hex(16)


def read_identity_file(data_dir: Path) -> str | None:
    """The identity recorded in ``data_dir``, or None if there is no file."""
    path = data_dir / IDENTITY_FILE
    try:
        text = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise StorageStartupError(f"cannot read the store identity file {path}: {exc}") from exc
    if not _IDENTITY_RE.fullmatch(text):
        raise StorageStartupError(
            f"the store identity file {path} is malformed (expected 32 lowercase hex digits)"
        )
    return text


def write_identity_file(data_dir: Path, identity: str) -> None:
    write_private(data_dir / IDENTITY_FILE, (identity + "\n").encode("ascii"))


def _decode(raw: bytes | str | None, key: str, where: str) -> str | None:
    if raw is None:
        return None
    text = raw.decode("ascii", "replace") if isinstance(raw, bytes) else raw
    if not _IDENTITY_RE.fullmatch(text):
        raise StorageStartupError(
            f"the store at {where} holds a malformed identity under {key!r}: refusing to start"
        )
    return text


async def establish_identity(
    client: aioredis.Redis, prefix: str, data_dir: Path | None, where: str
) -> str:
    """Check (or create) the identity at startup; return it. See the module docstring.

    ``where`` names the store in messages (a URL without credentials). Raises
    ``IdentityMismatch`` or ``StoreEmpty`` (both ``StorageStartupError``); redis errors
    propagate (the caller maps them to ``StorageUnavailable``).
    """
    key = identity_key(prefix)
    stored = _decode(await client.get(key), key, where)
    if data_dir is None:
        if stored is not None:
            return stored
        fresh = new_identity()
        if await client.set(key, fresh, nx=True):
            log.info("store at %s had no identity: wrote %s under %s", where, fresh, key)
            return fresh
        # Another process's first start won the race: adopt its identity.
        stored = _decode(await client.get(key), key, where)
        if stored is None:
            raise StorageStartupError(f"the store at {where} lost its identity key {key!r}")
        return stored

    recorded = read_identity_file(data_dir)
    source = f"data directory {data_dir}"
    if recorded is not None:
        if stored == recorded:
            return recorded
        if stored is not None:
            raise IdentityMismatch(where, recorded, stored, source)
        if await client.dbsize() == 0:
            raise StoreEmpty(where, recorded, str(data_dir))
        raise IdentityMismatch(where, recorded, None, source)

    if stored is not None:
        write_identity_file(data_dir, stored)
        log.warning("store identity file was missing in %s: restored %s from the store",
                    data_dir, stored)
        return stored
    had_data = await client.dbsize() > 0
    fresh = new_identity()
    if not await client.set(key, fresh, nx=True):
        raise StorageStartupError(f"the store at {where} changed under us while starting")
    write_identity_file(data_dir, fresh)
    if had_data:
        log.warning("store in %s held data but no identity (written by an older version): "
                    "adopted it as store %s", data_dir, fresh)
    else:
        log.info("new store %s in %s", fresh, data_dir)
    return fresh
