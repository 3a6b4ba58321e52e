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

import msgpack
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

import protocol
from server.web import host_allowed, parse_hosts

from .conftest import raw_http


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


# --------------------------------------------------------------------------- hosts


@pytest.mark.parametrize("host", ["evil.example:{port}", "evil.example", "127.0.0.1.evil.example",
                                  "localhost.evil.example:{port}"])
async def test_a_rebound_host_gets_neither_the_page_nor_the_websocket(web, host):
    port = web.port
    host = host.format(port=port)
    status, _, body = await raw_http(port, "GET / HTTP/1.1", host=host)
    assert status == 403 and b"<html" not in body.lower()
    # The attacker's page sets Origin and Host alike: the same-origin rule passed it.
    with pytest.raises(InvalidStatus) as err:
        await _hello(port, host, f"http://{host}")
    assert err.value.response.status_code == 403
    with pytest.raises(InvalidStatus) as err:         # no Origin (not a browser) either
        await _hello(port, host, None)
    assert err.value.response.status_code == 403


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "127.0.0.1", "localhost:{port}",
                                  "LocalHost", "[::1]:{port}"])
async def test_the_servers_own_addresses_and_localhost_are_served(web, host):
    port = web.port
    host = host.format(port=port)
    status, _, _ = await raw_http(port, "GET / HTTP/1.1", host=host)
    assert status == 200, host
    assert (await _hello(port, host, f"http://{host}"))["type"] == "welcome"


async def test_allowed_hosts_and_allowed_origins_name_the_public_hosts(running_with):
    async with running_with(allowed_hosts="Cards.Example, lan",
                            allowed_origins="https://play.example") as srv:
        port = srv.port
        for host in ("cards.example", f"cards.example:{port}", f"lan:{port}", "play.example",
                     f"127.0.0.1:{port}", "localhost"):
            status, _, _ = await raw_http(port, "GET / HTTP/1.1", host=host)
            assert status == 200, host
        status, _, _ = await raw_http(port, "GET / HTTP/1.1", host="evil.example")
        assert status == 403
        assert (await _hello(port, "play.example",
                             "https://play.example"))["type"] == "welcome"


async def test_a_star_allows_any_host(running_with):
    async with running_with(allowed_hosts="*") as srv:
        status, _, _ = await raw_http(srv.port, "GET / HTTP/1.1", host="anything.example")
        assert status == 200


async def test_health_checks_are_answered_whatever_the_host(web):
    """A proxy's health check may name the backend by any name (HAProxy sends none)."""
    status, _, _ = await raw_http(web.port, "GET /healthz HTTP/1.1", host="server1:8765")
    assert status == 200
    status, _, _ = await raw_http(web.port, "GET /healthz HTTP/1.1")
    assert status == 200


def test_host_rule_on_its_own():
    hosts = parse_hosts("", listen="0.0.0.0", origins=["https://cards.example"])
    # Listening on every address: any address of the machine, as a literal, is one of ours
    # (a literal cannot be rebound); names only when listed.
    for ok in ("10.1.2.3:8765", "[fe80::1]", "localhost", "cards.example:443", None):
        assert host_allowed(ok, hosts), ok
    for bad in ("evil.example", "cards.example.evil", "", "a b", "10.1.2.3.nip.io"):
        assert not host_allowed(bad, hosts), bad
    only = parse_hosts("", listen="127.0.0.1", origins=[])
    assert host_allowed("127.0.0.1:1", only) and not host_allowed("10.1.2.3", only)


async def test_two_host_headers_are_a_bad_request_not_a_crash(web):
    status, _, _ = await raw_http(web.port, "GET / HTTP/1.1", host=f"127.0.0.1:{web.port}",
                                  extra={"Host": "evil.example"})
    assert status == 400
