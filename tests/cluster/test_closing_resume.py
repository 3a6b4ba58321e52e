"""A command that reaches a stopping process after its checks (a resume waiting its turn,
issue 30's pacing, while SIGTERM closes the process) and names a table this process does
not hold is refused ``shutting_down`` (reconnect elsewhere and send it again,
docs/PROTOCOL.md), not an internal error: the 100-table rolling upgrade (bench/rolling.py)
logged 67 tracebacks ``supervisor closed; cannot start table`` on resumes."""

from __future__ import annotations

from typing import Any

import pytest

from protocol import ErrorCode, ServiceError
from server.app import running
from tests.server.conftest import server_settings
from tests.server.netclient import NetClient


async def test_a_table_asked_for_while_the_process_stops_is_shutting_down(
        redis_url: str, key_prefix: str, redis_client: Any) -> None:
    settings = server_settings(redis_url, key_prefix)
    async with running(settings) as one, running(settings) as two:
        a = await NetClient.open(f"ws://127.0.0.1:{one.port}", "Ana")
        table = (await a.call("create_table", options={"deals": 1}))["table"]
        assert table not in two.hub.tables
        await two.hub.close()                        # SIGTERM's work, after the checks
        with pytest.raises(ServiceError) as refused:
            await two.hub.lobby.registry.find(table)
        assert refused.value.code is ErrorCode.SHUTTING_DOWN
        assert table not in two.hub.tables           # nothing half-held
        await a.close()
