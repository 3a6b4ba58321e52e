"""GET /healthz on the websocket port (issue 5): 200 with a small JSON body, 503 without storage."""

from __future__ import annotations

import asyncio
import json


async def http_get(port: int, path: str) -> tuple[int, dict]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
    await writer.drain()
    raw = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    status = int(head.split()[1])
    return status, json.loads(body) if body else {}


async def test_healthz_reports_tables_connections_and_storage(server, connect):
    ana = await connect("Ana")
    await ana.call("create_table", options={"deals": 1})
    status, body = await http_get(server.port, "/healthz")
    assert status == 200
    assert body["storage"] is True and body["status"] == "ok"
    assert body["tables"] == 1 and body["connections"] == 1
