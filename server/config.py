"""Server settings: every one has a command-line flag and an environment variable.

Flags win over the environment, the environment over the defaults, so a container can be
configured with variables alone (docker-compose.yml) and a developer with flags alone.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path

from protocol import CHAT_BURST, CHAT_PER_SECOND, RATE_BURST, RATE_PER_SECOND
from protocol.limits import BOT_THINK_S, MAX_URL_LEN

from .loops import EVENT_LOOPS


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
    #: Open (waiting or playing) tables one player, and one address, may have created.
    max_tables_per_player: int = 3
    max_tables_per_address: int = 20
    max_spectators: int = 50
    max_connections: int = 2000
    #: Connections from one address at once (counted from the TCP accept, hello or not).
    max_connections_per_address: int = 64
    #: New sessions (hellos without a token) one address may open per minute.
    new_sessions_per_minute: int = 60
    #: Behind a proxy, the addresses whose ``X-Forwarded-For`` header names the client
    #: (comma-separated); empty trusts nobody's header.
    trusted_proxies: str = ""
    #: Origins (``scheme://host[:port]``, comma-separated) whose web pages may open a
    #: websocket; empty: only the server's own pages (the Origin must match the Host header).
    allowed_origins: str = ""
    #: Host names the page and the websocket answer to (comma-separated; ``*``: any), on
    #: top of the address the server listens on (any address when it listens on all),
    #: ``localhost`` and the hosts of ``allowed_origins``: another ``Host`` is refused (403),
    #: so a name re-pointed at the server (DNS rebinding) gets nothing.
    allowed_hosts: str = ""
    #: A session (its token and its replies) expires after this long without a hello.
    session_ttl_s: int = 7 * 24 * 3600
    #: How long the token a hello presented stays usable if the welcome is lost
    #: (the first command on the new connection retires it at once).
    token_grace_s: int = 30
    #: A finished match's record is kept this long.
    record_ttl_s: int = 30 * 24 * 3600
    #: A table's keys expire this long after its last change (the sweep removes them sooner).
    table_key_ttl_s: int = 7 * 24 * 3600
    #: A waiting table with no change for this long is closed, even with people at it.
    waiting_ttl_s: int = 1800
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
    #: Seconds a close handshake, or any write the websocket library waits on, may take
    #: before the connection is aborted (a peer that does not read is never waited on).
    close_timeout_s: float = 2.0
    drain_timeout_s: float = 10.0
    #: WebSocket pings a client may send per second (control frames bypass the command
    #: rate limit); far over it the connection is aborted.
    max_pings_per_second: float = 5.0
    #: The most a table's ``bot_budget`` may ask for (bots' thinking is the server's cost).
    max_bot_budget: float = 1.0
    #: Processes that compute bot moves (0: threads of this process, for tests that
    #: patch a bot); a decision that takes longer than ``bot_timeout_s``, its wait for a
    #: worker included, is replaced by the ``greedy`` yardstick's move.
    bot_workers: int = 2
    bot_timeout_s: float = 5.0
    #: The longest a search bot thinks over one decision before it plays the best card it
    #: has found (``Budget.seconds``): the budget's steps decide on a machine fast enough,
    #: this keeps a slow or crowded one's bots from keeping players waiting. 0: no cap.
    bot_think_s: float = BOT_THINK_S
    #: A table's owner holds its lease this long unless renewed every ``lease_renew_s``:
    #: when a process dies, another runs its tables' bots and timers within the TTL.
    lease_ttl_s: float = 3.0
    lease_renew_s: float = 1.0
    #: Server processes on this port (SO_REUSEPORT), sharing one store.
    workers: int = 1
    #: WebSocket ping interval and timeout (keepalive), seconds.
    ping_interval_s: float = 20.0
    ping_timeout_s: float = 20.0
    #: Seconds between sweeps for finished or abandoned tables.
    sweep_interval_s: float = 60.0
    #: After a sweep (server/memory.py): seconds between full garbage collections (what
    #: was swept sits in reference cycles), and between returns of the C heap's free
    #: pages to the system (glibc ``malloc_trim``); 0: never.
    full_gc_s: float = 60.0
    malloc_trim_s: float = 60.0
    #: Admission control: while the event loop's recent lag averages more than this many
    #: ms, new tables and new sessions are refused with ``server_busy`` (0: never).
    busy_lag_ms: float = 250.0
    #: Events resumes may replay per second to one address, and to the whole process (each
    #: a token bucket holding twice that): a resume they cannot pay for, or one further
    #: behind than an address's burst, gets a snapshot instead (issue 30: resume
    #: amplification); the process's running out makes admission control busy.
    replay_per_address: float = 100.0
    replay_per_process: float = 1000.0
    #: Resumes one address may send per second (four times that at once); past it they
    #: wait their turn (0: no pacing).
    resumes_per_address: float = 5.0
    #: Per-connection command rate (token bucket): sustained per second, and burst.
    rate_per_second: float = float(RATE_PER_SECOND)
    rate_burst: int = RATE_BURST
    #: Chat messages per player at a table (its own token bucket): sustained, and burst.
    chat_per_second: float = CHAT_PER_SECOND
    chat_burst: int = CHAT_BURST
    #: Match history (issue 27): a finished match is kept this long, and at most this many.
    history_ttl_s: int = 30 * 24 * 3600
    history_max: int = 100_000
    #: Play now (issue 27): a casual request waiting this long is filled with bots; a
    #: player who disconnects while queued is removed after ``queue_grace_s``; the
    #: matchmaker looks at the queue every ``queue_tick_s`` while it holds the lease.
    queue_bots_after_s: float = 60.0
    queue_grace_s: float = 30.0
    queue_tick_s: float = 0.25
    #: ``text`` (for people) or ``json`` (one event per line, for log collectors).
    log_format: str = "text"
    #: The event loop: ``asyncio`` (the standard library's) or ``uvloop`` (libuv's, from
    #: the ``uvloop`` extra; about 4% less CPU per play at human pace, 0-5% at full pace:
    #: BENCHMARKS.md, issue 32). Where uvloop is not installed the server runs
    #: on asyncio's and says so (``server/loops.py``): a missing extra never stops it.
    event_loop: str = "asyncio"
    #: Where clients reach this process (``ws://`` or ``wss://``), when several processes
    #: share the store and each can be reached by itself (behind the proxy: a URL the
    #: proxy routes to this process, deploy/haproxy.cfg). A player at a table another
    #: process runs is told that process's address (``home``, protocol 1.6), so one
    #: process serves the table instead of two (issue 32). Empty: nobody is told.
    advertise_url: str = ""
    #: Accounts (issue 27): Argon2id's memory (KiB) and passes (OWASP's minimum: 19 MiB,
    #: 2 passes), threads hashing at once (off the event loop) and hashes let wait. One
    #: thread by default: on two cores the loop keeps the other (BENCHMARKS.md, Logins).
    argon2_memory_kib: int = 19 * 1024
    argon2_time_cost: int = 2
    hash_workers: int = 1
    hash_queue: int = 256
    #: Login attempts: free ones per account and per address, then a wait that doubles
    #: from ``login_backoff_ms`` up to ``login_backoff_max_ms``; forgotten after
    #: ``login_window_s`` without an attempt.
    login_free_per_account: int = 5
    login_free_per_address: int = 20
    login_backoff_ms: int = 1000
    login_backoff_max_ms: int = 15 * 60 * 1000
    login_window_s: int = 3600
    #: How often a process looks for its account connections whose session another
    #: process ended (``logout_all``, a change of password): they close within this.
    revoke_check_s: float = 5.0


ENV = {
    "host": "ALUETTE_HOST",
    "port": "ALUETTE_PORT",
    "redis_url": "REDIS_URL",
    "data_dir": "ALUETTE_DATA_DIR",
    "key_prefix": "ALUETTE_KEY_PREFIX",
    "max_tables": "ALUETTE_MAX_TABLES",
    "max_tables_per_player": "ALUETTE_MAX_TABLES_PER_PLAYER",
    "max_tables_per_address": "ALUETTE_MAX_TABLES_PER_ADDRESS",
    "max_spectators": "ALUETTE_MAX_SPECTATORS",
    "max_connections": "ALUETTE_MAX_CONNECTIONS",
    "max_connections_per_address": "ALUETTE_MAX_CONNECTIONS_PER_ADDRESS",
    "new_sessions_per_minute": "ALUETTE_NEW_SESSIONS_PER_MINUTE",
    "trusted_proxies": "ALUETTE_TRUSTED_PROXIES",
    "allowed_origins": "ALUETTE_ALLOWED_ORIGINS",
    "allowed_hosts": "ALUETTE_ALLOWED_HOSTS",
    "session_ttl_s": "ALUETTE_SESSION_TTL",
    "token_grace_s": "ALUETTE_TOKEN_GRACE",
    "record_ttl_s": "ALUETTE_RECORD_TTL",
    "table_key_ttl_s": "ALUETTE_TABLE_KEY_TTL",
    "waiting_ttl_s": "ALUETTE_WAITING_TTL",
    "table_ttl_s": "ALUETTE_TABLE_TTL",
    "event_log_max": "ALUETTE_EVENT_LOG_MAX",
    "hello_timeout_s": "ALUETTE_HELLO_TIMEOUT",
    "max_send_buffer": "ALUETTE_MAX_SEND_BUFFER",
    "close_timeout_s": "ALUETTE_CLOSE_TIMEOUT",
    "drain_timeout_s": "ALUETTE_DRAIN_TIMEOUT",
    "max_pings_per_second": "ALUETTE_MAX_PINGS_PER_SECOND",
    "max_bot_budget": "ALUETTE_MAX_BOT_BUDGET",
    "bot_workers": "ALUETTE_BOT_WORKERS",
    "bot_timeout_s": "ALUETTE_BOT_TIMEOUT",
    "bot_think_s": "ALUETTE_BOT_THINK",
    "lease_ttl_s": "ALUETTE_LEASE_TTL",
    "lease_renew_s": "ALUETTE_LEASE_RENEW",
    "workers": "ALUETTE_WORKERS",
    "ping_interval_s": "ALUETTE_PING_INTERVAL",
    "ping_timeout_s": "ALUETTE_PING_TIMEOUT",
    "sweep_interval_s": "ALUETTE_SWEEP_INTERVAL",
    "full_gc_s": "ALUETTE_FULL_GC",
    "malloc_trim_s": "ALUETTE_MALLOC_TRIM",
    "busy_lag_ms": "ALUETTE_BUSY_LAG_MS",
    "replay_per_address": "ALUETTE_REPLAY_PER_ADDRESS",
    "replay_per_process": "ALUETTE_REPLAY_PER_PROCESS",
    "resumes_per_address": "ALUETTE_RESUMES_PER_ADDRESS",
    "rate_per_second": "ALUETTE_RATE_PER_SECOND",
    "rate_burst": "ALUETTE_RATE_BURST",
    "chat_per_second": "ALUETTE_CHAT_PER_SECOND",
    "chat_burst": "ALUETTE_CHAT_BURST",
    "history_ttl_s": "ALUETTE_HISTORY_TTL",
    "history_max": "ALUETTE_HISTORY_MAX",
    "queue_bots_after_s": "ALUETTE_QUEUE_BOTS_AFTER",
    "queue_grace_s": "ALUETTE_QUEUE_GRACE",
    "queue_tick_s": "ALUETTE_QUEUE_TICK",
    "log_format": "ALUETTE_LOG_FORMAT",
    "event_loop": "ALUETTE_EVENT_LOOP",
    "advertise_url": "ALUETTE_ADVERTISE_URL",
    "argon2_memory_kib": "ALUETTE_ARGON2_MEMORY_KIB",
    "argon2_time_cost": "ALUETTE_ARGON2_TIME_COST",
    "hash_workers": "ALUETTE_HASH_WORKERS",
    "hash_queue": "ALUETTE_HASH_QUEUE",
    "login_free_per_account": "ALUETTE_LOGIN_FREE_PER_ACCOUNT",
    "login_free_per_address": "ALUETTE_LOGIN_FREE_PER_ADDRESS",
    "login_backoff_ms": "ALUETTE_LOGIN_BACKOFF_MS",
    "login_backoff_max_ms": "ALUETTE_LOGIN_BACKOFF_MAX_MS",
    "login_window_s": "ALUETTE_LOGIN_WINDOW",
    "revoke_check_s": "ALUETTE_REVOKE_CHECK",
}

HELP = {
    "host": "address to listen on",
    "port": "port for websocket connections and GET /healthz (0: pick a free one)",
    "redis_url": "Redis URL (redis://host:port/db); empty: run the embedded Valkey server",
    "data_dir": "directory of the embedded store's append-only files",
    "key_prefix": "prefix of every Redis key",
    "max_tables": "most tables open at once",
    "max_tables_per_player": "most open tables one player may have created",
    "max_tables_per_address": "most open tables created from one address",
    "max_spectators": "most spectators per table",
    "max_connections": "most websocket connections at once",
    "max_connections_per_address": "most connections from one address at once",
    "new_sessions_per_minute": "new sessions one address may open per minute",
    "trusted_proxies": "comma-separated proxy addresses whose X-Forwarded-For is believed",
    "allowed_origins": "comma-separated origins (https://host[:port]) whose web pages may "
                       "connect; empty: the server's own pages only",
    "allowed_hosts": "comma-separated host names the page and websocket answer to (* any), "
                     "besides the listening address, localhost and the allowed origins' hosts",
    "session_ttl_s": "seconds an idle session (token, replies) is kept",
    "token_grace_s": "seconds the token a hello presented stays usable if the welcome is lost",
    "record_ttl_s": "seconds a finished match's record is kept",
    "table_key_ttl_s": "seconds a table's keys live after its last change",
    "waiting_ttl_s": "seconds a waiting table may go unchanged before it is closed",
    "table_ttl_s": "seconds before a finished or abandoned table is cleaned up",
    "event_log_max": "events kept per table for resuming clients",
    "hello_timeout_s": "seconds a new connection has to send hello",
    "max_send_buffer": "bytes queued for a slow reader before it is dropped",
    "close_timeout_s": "seconds a closing handshake may take before the connection is aborted",
    "drain_timeout_s": "seconds any write may wait on a peer before the connection is aborted",
    "max_pings_per_second": "websocket pings a client may send per second",
    "max_bot_budget": "the most bot_budget a table may ask for",
    "bot_workers": "processes computing bot moves (0: threads)",
    "bot_timeout_s": "seconds a bot's move may take, its wait for a worker included, before "
                     "the greedy move is played instead",
    "bot_think_s": "seconds a search bot thinks at most before playing its best card so far "
                   "(0: no cap)",
    "lease_ttl_s": "seconds a table's owner holds its lease unless renewed",
    "lease_renew_s": "seconds between lease renewals",
    "workers": "server processes sharing this port and the store",
    "ping_interval_s": "websocket keepalive ping interval, seconds",
    "ping_timeout_s": "websocket keepalive timeout, seconds",
    "sweep_interval_s": "seconds between clean-up sweeps",
    "full_gc_s": "seconds between full garbage collections, after a sweep (swept tables "
                 "and closed connections sit in reference cycles; 0: never)",
    "malloc_trim_s": "seconds between returns of the C heap's free pages to the system, "
                     "after a sweep (glibc malloc_trim; 0: never)",
    "busy_lag_ms": "refuse new tables and sessions (server_busy) while the event loop's "
                   "recent lag averages more than this many ms (0: never)",
    "replay_per_address": "events resumes may replay to one address per second (twice that "
                          "at once); beyond, a snapshot",
    "replay_per_process": "events resumes may replay per second in this process (twice that "
                          "at once); beyond, a snapshot and admission control says busy",
    "resumes_per_address": "resumes one address may send per second (four times that at "
                           "once); past it they wait their turn (0: no pacing)",
    "rate_per_second": "commands per second a connection may send, sustained",
    "rate_burst": "commands a connection may send in a burst",
    "chat_per_second": "chat messages per second a player may send at a table, sustained",
    "chat_burst": "chat messages a player may send at a table in a burst",
    "history_ttl_s": "seconds a finished match stays in the players' history",
    "history_max": "most finished matches kept in the players' history",
    "queue_bots_after_s": "seconds a casual play-now request waits before bots fill its table",
    "queue_grace_s": "seconds a queued player may be disconnected before leaving the queue",
    "queue_tick_s": "seconds between the matchmaker's looks at the queue",
    "log_format": "text (for people) or json (one event per line with table and player "
                  "ids, for log collectors)",
    "event_loop": "asyncio (the standard library's) or uvloop (needs the uvloop extra; "
                  "without it the server says so and runs on asyncio)",
    "advertise_url": "ws:// or wss:// URL clients reach this very process at, told to "
                     "players of the tables it runs who are connected elsewhere "
                     "(several processes); empty: none",
    "argon2_memory_kib": "Argon2id memory per password hash, KiB (OWASP minimum 19456)",
    "argon2_time_cost": "Argon2id passes per password hash (OWASP minimum 2 at 19 MiB)",
    "hash_workers": "threads hashing passwords at once, off the event loop",
    "hash_queue": "password hashes that may wait for a thread before server_busy",
    "login_free_per_account": "login attempts on one account before the waits start",
    "login_free_per_address": "login attempts from one address before the waits start",
    "login_backoff_ms": "first wait after the free login attempts, ms (then doubled)",
    "login_backoff_max_ms": "longest wait between login attempts, ms",
    "login_window_s": "seconds without an attempt after which login attempts are forgotten",
    "revoke_check_s": "seconds between checks for account sessions ended by another process",
}


#: Numeric settings for which 0 means something ("pick a free port", "no spectators",
#: "threads", "no cap", "never"); every other number must be above 0: a count of 0, a
#: period of 0 or a key lifetime of 0 (Redis deletes such a key at once) would break the
#: server quietly instead of refusing to start.
MAY_BE_ZERO = frozenset({"port", "max_spectators", "token_grace_s", "bot_workers",
                         "bot_think_s", "busy_lag_ms", "hash_queue", "resumes_per_address",
                         "full_gc_s", "malloc_trim_s"})


def flag_of(name: str) -> str:
    """The command-line flag of a setting (``bot_think_s`` -> ``--bot-think``)."""
    return "--" + name.replace("_", "-").removesuffix("-s")


def problems(settings: Settings) -> list[str]:
    """What is wrong with these settings, one sentence each (empty: nothing)."""
    out: list[str] = []
    for f in fields(Settings):
        value = getattr(settings, f.name)
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if not math.isfinite(value):
            out.append(f"{flag_of(f.name)} must be a finite number, not {value}")
        elif f.name in MAY_BE_ZERO and value < 0:
            out.append(f"{flag_of(f.name)} must be 0 or more, not {value}")
        elif f.name not in MAY_BE_ZERO and value <= 0:
            out.append(f"{flag_of(f.name)} must be more than 0, not {value}")
    if not 0 <= settings.port <= 65535:
        out.append(f"--port must be from 0 to 65535, not {settings.port}")
    if settings.log_format not in ("text", "json"):
        out.append(f"--log-format must be text or json, not {settings.log_format!r}")
    if settings.event_loop not in EVENT_LOOPS:
        out.append(f"--event-loop must be {' or '.join(EVENT_LOOPS)}, "
                   f"not {settings.event_loop!r}")
    url = settings.advertise_url
    if url and (not url.startswith(("ws://", "wss://")) or len(url) > MAX_URL_LEN
                or not url.isprintable() or " " in url):
        out.append(f"--advertise-url must be a ws:// or wss:// URL of at most {MAX_URL_LEN} "
                   f"characters, not {url[:80]!r}")
    if url and settings.workers > 1:
        out.append("--advertise-url names one process: with --workers, start each process "
                   "by itself, each with its own port and URL")
    if settings.lease_renew_s >= settings.lease_ttl_s:
        out.append(f"--lease-renew ({settings.lease_renew_s}) must be shorter than --lease-ttl "
                   f"({settings.lease_ttl_s}), or a table's lease lapses between renewals")
    return out


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
        try:
            value = kind(raw) if raw not in (None, "") else default
        except ValueError:
            parser.error(f"{ENV[f.name]}={raw!r} is not a valid {kind.__name__}")
        flag = flag_of(f.name)
        parser.add_argument(
            flag, dest=f.name, type=kind, default=value,
            metavar=flag.removeprefix("--").upper().replace("-", "_"),
            help=f"{HELP[f.name]} (env {ENV[f.name]}; default {default!s:.40})",
        )
    args = parser.parse_args(argv)
    settings = Settings(**vars(args))
    wrong = problems(settings)
    if wrong:
        parser.error("; ".join(wrong))
    return settings
