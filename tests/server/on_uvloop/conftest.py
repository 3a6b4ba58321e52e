"""Every test in this folder runs on uvloop's event loop (the server's ``--event-loop
uvloop``, server/loops.py), the server in it included.

pytest-asyncio (1.4+) asks ``pytest_asyncio_loop_factories`` for every asyncio test under
the conftest that implements it, and refuses an answer of None: so the hook lives here,
where the answer is always uvloop, and not in tests/server/conftest.py."""

from __future__ import annotations

from typing import Any

import pytest


def pytest_asyncio_loop_factories(config: pytest.Config, item: pytest.Item) -> Any:
    import uvloop

    return {"uvloop": uvloop.new_event_loop}
