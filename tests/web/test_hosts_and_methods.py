"""The HTTP side refuses what it does not serve (issue 30, item 5; red-team findings):

- DNS rebinding: a page of ``evil.example`` whose name is re-pointed at the server's address
  sends ``Host: evil.example:PORT`` and ``Origin: http://evil.example:PORT``; the same-origin
  rule compared one with the other and let it in. Now only the hosts the server answers to
  (the addresses it listens on, ``localhost``, the hosts of ``--allowed-origins`` and those
  of ``--allowed-hosts``) are served, the page and the websocket alike;
- every HTTP method was answered 200 with the page: now only GET and HEAD are served, any
  other method is answered 405 with ``Allow: GET, HEAD``.

Real server on 127.0.0.1, raw HTTP on a socket (no mock of either).
"""

from __future__ import annotations

import asyncio

import msgpack
import pytest
from websockets.asyncio.client import connect

import protocol


async def raw_http(port: int, request_line: str, host: str | None = None,
                   extra: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
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
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(status_line.split()[1]), headers, body


async def _hello(port: int, host: str, origin: str | None) -> dict:
    """A websocket hello to the server on 127.0.0.1:``port``, its ``Host`` header ``host``
    (the URL names the host; the socket goes to the server's address, as after rebinding)."""
    headers = {"Origin": origin} if origin is not None else None
    async with connect(f"ws://{host}/", host="127.0.0.1", port=port, origin=None,
                       additional_headers=headers, compression=None,
                       max_size=protocol.MAX_SERVER_FRAME_BYTES) as ws:
        await ws.send(msgpack.packb({"type": "hello", "id": 1, "versions": [1], "name": "O"}))
        return msgpack.unpackb(await ws.recv())

# --------------------------------------------------------------------------- methods


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "TRACE", "OPTIONS", "PATCH",
                                    "FOO"])
@pytest.mark.parametrize("path", ["/", "/t/t0123456789ab", "/healthz", "/static/x/app.css"])
async def test_methods_other_than_get_and_head_are_405(web, method, path):
    status, headers, body = await raw_http(web.port, f"{method} {path} HTTP/1.1",
                                           host=f"127.0.0.1:{web.port}")
    assert status == 405, (method, path)
    assert headers["allow"] == "GET, HEAD"
    assert b"<html" not in body.lower()


async def test_head_is_answered_like_get_without_a_body(web):
    status, headers, body = await raw_http(web.port, "HEAD / HTTP/1.1",
                                           host=f"127.0.0.1:{web.port}")
    assert status == 200 and body == b""
    assert headers["content-type"] == "text/html; charset=utf-8"
    assert int(headers["content-length"]) > 0
    status, _, body = await raw_http(web.port, "GET / HTTP/1.1", host=f"127.0.0.1:{web.port}")
    assert status == 200 and b"<html" in body.lower()
