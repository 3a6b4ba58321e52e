"""Server settings: every one has a command-line flag and an environment variable.

Flags win over the environment, the environment over the defaults, so a container can be
configured with variables alone (docker-compose.yml) and a developer with flags alone.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path

from protocol import RATE_BURST, RATE_PER_SECOND


@dataclass(frozen=True, slots=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8765
    #: A Redis URL; empty means "start the embedded Valkey server in ``data_dir``".
    redis_url: str = ""
    data_dir: Path = Path("data")
    #: Every Redis key starts with this, so several deployments (or test runs) share a Redis.
    key_prefix: str = "aluette"
    max_tables: int = 500
    max_spectators: int = 50
    max_connections: int = 2000
    #: Finished or abandoned tables leave memory (and their live keys) after this long;
    #: their match records stay retrievable.
    table_ttl_s: int = 3600
    #: Events kept per table for resume; an older gap gets a fresh snapshot instead.
    event_log_max: int = 2000
    #: A connection must say hello within this many seconds.
    hello_timeout_s: float = 10.0
    #: Bytes a connection may have waiting to be sent before it is dropped as a slow reader
    #: (it reconnects and resumes from its last sequence number).
    max_send_buffer: int = 1 << 20
    #: WebSocket ping interval and timeout (keepalive), seconds.
    ping_interval_s: float = 20.0
    ping_timeout_s: float = 20.0
    #: Seconds between sweeps for finished or abandoned tables.
    sweep_interval_s: float = 60.0
    #: Per-connection command rate (token bucket): sustained per second, and burst.
    rate_per_second: float = float(RATE_PER_SECOND)
    rate_burst: int = RATE_BURST


ENV = {
    "host": "ALUETTE_HOST",
    "port": "ALUETTE_PORT",
    "redis_url": "REDIS_URL",
    "data_dir": "ALUETTE_DATA_DIR",
    "key_prefix": "ALUETTE_KEY_PREFIX",
    "max_tables": "ALUETTE_MAX_TABLES",
    "max_spectators": "ALUETTE_MAX_SPECTATORS",
    "max_connections": "ALUETTE_MAX_CONNECTIONS",
    "table_ttl_s": "ALUETTE_TABLE_TTL",
    "event_log_max": "ALUETTE_EVENT_LOG_MAX",
    "hello_timeout_s": "ALUETTE_HELLO_TIMEOUT",
    "max_send_buffer": "ALUETTE_MAX_SEND_BUFFER",
    "ping_interval_s": "ALUETTE_PING_INTERVAL",
    "ping_timeout_s": "ALUETTE_PING_TIMEOUT",
    "sweep_interval_s": "ALUETTE_SWEEP_INTERVAL",
    "rate_per_second": "ALUETTE_RATE_PER_SECOND",
    "rate_burst": "ALUETTE_RATE_BURST",
}

HELP = {
    "host": "address to listen on",
    "port": "port for websocket connections and GET /healthz (0: pick a free one)",
    "redis_url": "Redis URL (redis://host:port/db); empty: run the embedded Valkey server",
    "data_dir": "directory of the embedded store's append-only files",
    "key_prefix": "prefix of every Redis key",
    "max_tables": "most tables open at once",
    "max_spectators": "most spectators per table",
    "max_connections": "most websocket connections at once",
    "table_ttl_s": "seconds before a finished or abandoned table is cleaned up",
    "event_log_max": "events kept per table for resuming clients",
    "hello_timeout_s": "seconds a new connection has to send hello",
    "max_send_buffer": "bytes queued for a slow reader before it is dropped",
    "ping_interval_s": "websocket keepalive ping interval, seconds",
    "ping_timeout_s": "websocket keepalive timeout, seconds",
    "sweep_interval_s": "seconds between clean-up sweeps",
    "rate_per_second": "commands per second a connection may send, sustained",
    "rate_burst": "commands a connection may send in a burst",
}


def parse_settings(argv: Sequence[str] | None = None,
                   environ: dict[str, str] | None = None) -> Settings:
    """Settings from flags, then environment variables, then defaults."""
    env = os.environ if environ is None else environ
    if "ALUETTE_REDIS_URL" in env and "REDIS_URL" not in env:
        env = {**env, "REDIS_URL": env["ALUETTE_REDIS_URL"]}
    parser = argparse.ArgumentParser(
        prog="aluette-server",
        description="The Aluette Online websocket server.",
        epilog="Each flag can also be set with the environment variable shown.",
    )
    defaults = Settings()
    for f in fields(Settings):
        default = getattr(defaults, f.name)
        kind = type(default)
        raw = env.get(ENV[f.name])
        value = kind(raw) if raw not in (None, "") else default
        flag = f.name.replace("_", "-").removesuffix("-s")
        parser.add_argument(
            "--" + flag, dest=f.name, type=kind, default=value,
            metavar=flag.upper().replace("-", "_"),
            help=f"{HELP[f.name]} (env {ENV[f.name]}; default {default!s:.40})",
        )
    args = parser.parse_args(argv)
    return Settings(**vars(args))
