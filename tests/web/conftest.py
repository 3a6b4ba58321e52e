"""Fixtures for the web client's tests: a real server (in-process, or a real process that can
be killed), plain HTTP requests, and a real headless Chromium driven by Playwright.

The browser is Debian's ``chromium`` (``.ci/run`` installs it with apt); Playwright is told
to use it (``executable_path``) and never downloads one. Without either, the browser tests
are skipped with the reason, never passed silently.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from server.app import Running, running
from tests.durability.conftest import ServerProcess, free_port
from tests.server.conftest import server_settings

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("ALUETTE_CHROMIUM", "/usr/bin/chromium")
#: The flags the issue asks for; Playwright's launch() adds a fresh temporary user-data-dir.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


async def raw_http(port: int, request_line: str, host: str | None = None,
                   extra: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 request, its first line as given, on a fresh connection to the server on
    127.0.0.1:``port`` (``host``: the ``Host`` header, none when None): status, headers
    (lower-cased), body."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    lines = [request_line]
    if host is not None:
        lines.append(f"Host: {host}")
    lines.append("Connection: close")
    lines += [f"{k}: {v}" for k, v in (extra or {}).items()]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
    await writer.drain()
    raw = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    parsed = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        parsed[name.strip().lower()] = value.strip()
    return int(status_line.split()[1]), parsed, body


async def http_get(port: int, path: str, headers: dict[str, str] | None = None,
                   host: str | None = None) -> tuple[int, dict[str, str], bytes]:
    """One GET of ``path`` (``Host`` the server's address unless ``host`` is given)."""
    return await raw_http(port, f"GET {path} HTTP/1.1", host or f"127.0.0.1:{port}", headers)


@pytest.fixture
async def web(redis_url: str, key_prefix: str, redis_client: Any) -> AsyncIterator[Running]:
    """The real server, in this process (HTTP and websocket on one port)."""
    async with running(server_settings(redis_url, key_prefix)) as srv:
        yield srv


@pytest.fixture
def running_with(redis_url: str, key_prefix: str, redis_client: Any
                 ) -> Callable[..., Any]:
    """Start the in-process server with other settings: ``async with running_with(x=1)``."""
    def make(**over: Any) -> Any:
        return running(server_settings(redis_url, key_prefix, **over))
    return make


def chromium_path() -> str | None:
    return CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")


def browser_missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    try:
        import playwright  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[test]')"
    if chromium_path() is None:
        return f"no Chromium at {CHROMIUM} (apt-get install -y chromium; .ci/run does it)"
    return None


@pytest.fixture
async def browser() -> AsyncIterator[Any]:
    """A headless Chromium (the system one); each test makes its own contexts (profiles)."""
    reason = browser_missing()
    if reason:
        pytest.skip(reason)
    exe = chromium_path()
    from playwright.async_api import async_playwright
    async with async_playwright() as pw:
        b = await pw.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            await b.close()


@pytest.fixture
async def server_proc(redis_url: str, key_prefix: str, redis_client: Any
                      ) -> AsyncIterator[Callable[..., Any]]:
    """``aluette-server`` as a real process on a fixed port and the test Redis, so a test
    can SIGKILL it and start another on the same port and data (same as
    tests/durability)."""
    started: list[ServerProcess] = []
    port = free_port()

    async def start(*extra: str) -> ServerProcess:
        proc = ServerProcess(["--port", str(port), "--redis-url", redis_url,
                              "--key-prefix", key_prefix, "--hello-timeout", "5", *extra])
        await proc.start()
        started.append(proc)
        return proc

    start.port = port  # type: ignore[attr-defined]
    yield start
    for p in started:
        if p.proc and p.proc.returncode is None:
            p.proc.kill()
            await p.proc.wait()


@pytest.fixture(autouse=True)
def _pages_of_this_test() -> None:
    """Forget the previous test's pages (see ``pytest_runtest_makereport``)."""
    from tests.web.test_browser import Player

    Player.live.clear()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Any:
    """A failed browser test reports what each of its pages logged (script errors,
    console errors, the last location), since a failure seen once in CI is not rerun."""
    outcome = yield
    report = outcome.get_result()
    if report.when != "call" or not report.failed:
        return
    from tests.web.test_browser import Player

    for p in Player.live:
        url = getattr(p.page, "url", "?")
        report.sections.append((f"page {p.name}", f"url: {url}\n" + "\n".join(
            p.errors[-30:] or ["(no script or console errors)"])))
