"""The web client as the server serves it (issue 13, items 1, 2 and 4), over real HTTP and
real websockets on 127.0.0.1: the page and its assets with their headers, the asset budget,
no inline script and no HTML sinks in the client's code, and the websocket Origin check."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

import protocol
from server.web import CSP, Site, csp_for
from tests.server.netclient import NetClient

from .conftest import ROOT, http_get

STATIC = ROOT / "server" / "web" / "static"
OWN_JS = sorted(p for p in (STATIC / "js").glob("*.mjs"))


class _Refs(HTMLParser):
    """Every URL the page loads, and anything inline that a CSP would have to allow."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.inline: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        for name, value in attrs:
            if name.startswith("on") or name == "style":
                self.inline.append(f"<{tag} {name}={value!r}>")
        if tag == "script":
            if not a.get("src"):
                self.inline.append("<script> without src")
            self.urls.append(a.get("src") or "")
            self._in_script = True
        if tag == "link" and a.get("href"):
            self.urls.append(a["href"] or "")
        if tag == "style":
            self.inline.append("<style>")

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False if tag == "script" else self._in_script

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.inline.append("inline script text")


async def test_lobby_page_has_a_csp_without_inline_scripts(web):
    status, headers, body = await http_get(web.port, "/")
    assert status == 200
    assert headers["content-type"] == "text/html; charset=utf-8"
    port = web.port
    assert headers["content-security-policy"] == CSP.replace(
        "connect-src 'self'", f"connect-src 'self' ws://127.0.0.1:{port} wss://127.0.0.1:{port}")
    assert "script-src 'self'" in CSP and "unsafe" not in CSP
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "no-referrer"     # a link may carry a join code
    assert headers["cache-control"] == "no-cache"
    refs = _Refs()
    refs.feed(body.decode())
    assert refs.inline == []
    assert any(u.endswith("/js/main.mjs") for u in refs.urls)
    assert all(u.startswith(f"/static/{Site.from_package().version}/") for u in refs.urls)


async def test_a_table_link_is_the_same_page(web):
    _, _, lobby = await http_get(web.port, "/")
    status, headers, body = await http_get(web.port, "/t/t0123456789ab")
    assert status == 200 and body == lobby
    assert "script-src 'self';" in headers["content-security-policy"]
    # Not a table path: left to the websocket library as before (426 Upgrade Required).
    for path in ("/t/" + "x" * 65, "/t/a/b", "/t/%2e%2e", "/anything"):
        status, _, _ = await http_get(web.port, path)
        assert status == 426, path


async def test_every_asset_is_served_with_its_type_and_a_long_cache(web):
    _, _, page = await http_get(web.port, "/")
    refs = _Refs()
    refs.feed(page.decode())
    version = Site.from_package().version
    # The page's own references plus every module the modules import.
    urls = set(refs.urls)
    for js in OWN_JS:
        for target in re.findall(r'from "\./([\w/.-]+)"', js.read_text()):
            urls.add(f"/static/{version}/js/{target}")
    assert len(urls) >= 10
    types = {".mjs": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
             ".svg": "image/svg+xml"}
    for url in sorted(urls):
        status, headers, body = await http_get(web.port, url)
        assert status == 200, url
        assert headers["content-type"] == types[url[url.rfind("."):]], url
        assert headers["cache-control"] == "public, max-age=31536000, immutable"
        assert headers["x-content-type-options"] == "nosniff"
        assert int(headers["content-length"]) == len(body) > 0
        again, headers2, body2 = await http_get(web.port, url,
                                                {"If-None-Match": headers["etag"]})
        assert again == 304 and body2 == b"" and headers2["etag"] == headers["etag"]


async def test_unknown_assets_and_paths_out_of_the_directory_are_404(web):
    version = Site.from_package().version
    for path in (f"/static/{version}/nothing.mjs", f"/static/{version}/../__init__.py",
                 f"/static/{version}/js/../../__init__.py", "/static/__init__.py",
                 f"/static/{version}/js/vendor/README.md", "/favicon.ico"):
        status, headers, _ = await http_get(web.port, path)
        assert status == 404, path
        assert headers["x-content-type-options"] == "nosniff"


async def test_an_old_version_gets_todays_file_uncached(web):
    status, headers, body = await http_get(web.port, "/static/0ld0ld0ld0ld/js/cards.mjs")
    assert status == 200 and headers["cache-control"] == "no-cache"
    assert body == (STATIC / "js" / "cards.mjs").read_bytes()


def test_the_csp_names_the_websocket_only_for_a_plain_host():
    assert "ws://cards.example:8765 wss://cards.example:8765" in csp_for("cards.example:8765")
    assert "ws://[::1]:80 " in csp_for("[::1]:80")
    for hostile in ("evil.example; script-src *", "a b", "x'", "", None, "h:99999999"):
        assert csp_for(hostile) == CSP


def test_page_assets_fit_the_budget():
    """Issue 31 target: the page's own assets, the 48 card faces, one language's catalogue
    and the replay page (issue 28) included, <= 300 KiB uncompressed (no screenshots)."""
    size = Site.from_package().size()
    print(f"\nweb client assets: {size} bytes ({size / 1024:.1f} KiB) of 300 KiB")
    assert size <= 300 * 1024


def test_no_network_text_is_ever_inserted_as_html():
    """Item 4: names are text. The client builds its DOM with text nodes only."""
    sinks = re.compile(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|"
                       r"new Function|srcdoc|createContextualFragment|DOMParser")
    for js in OWN_JS:
        found = sinks.findall(js.read_text())
        assert found == [], f"{js.name}: {found}"


def test_the_vendored_codec_is_noted_with_its_license_and_version():
    vendor = STATIC / "js" / "vendor"
    head = (vendor / "msgpack.mjs").read_text()[:400]
    assert "@msgpack/msgpack 3.1.3" in head and "ISC" in head
    assert "Permission to use, copy, modify" in (vendor / "msgpack.LICENSE.txt").read_text()
    assert "3.1.3" in (vendor / "README.md").read_text()


# --------------------------------------------------------------------------- Origin


async def _hello(url: str, origin: str | None) -> dict:
    headers = {"Origin": origin} if origin else None
    async with connect(url, origin=None, additional_headers=headers, compression=None,
                       max_size=protocol.MAX_SERVER_FRAME_BYTES) as ws:
        import msgpack
        await ws.send(msgpack.packb({"type": "hello", "id": 1, "versions": [1], "name": "O"}))
        return msgpack.unpackb(await ws.recv())


async def test_websocket_accepts_the_servers_own_pages_and_non_browsers(web):
    url = f"ws://127.0.0.1:{web.port}/ws"
    assert (await _hello(url, f"http://127.0.0.1:{web.port}"))["type"] == "welcome"
    assert (await _hello(url, None))["type"] == "welcome"      # terminal client, bots
    client = await NetClient.open(f"ws://127.0.0.1:{web.port}", "cli")   # as before
    await client.close()


@pytest.mark.parametrize("origin", [
    "http://evil.example", "http://127.0.0.1:1", "https://127.0.0.1.evil.example",
    "null", "file://", "http://127.0.0.1:{port}/path"])
async def test_websocket_refuses_other_origins(web, origin):
    url = f"ws://127.0.0.1:{web.port}/ws"
    with pytest.raises(InvalidStatus) as err:
        await _hello(url, origin.format(port=web.port))
    assert err.value.response.status_code == 403


async def test_an_allow_list_replaces_the_same_origin_default(running_with):
    async with running_with(allowed_origins="https://Cards.Example, http://lan:8765/") as srv:
        url = f"ws://127.0.0.1:{srv.port}/"
        # Browsers send origins lower-cased and without a path; the setting is forgiving.
        assert (await _hello(url, "https://cards.example"))["type"] == "welcome"
        assert (await _hello(url, "http://lan:8765"))["type"] == "welcome"
        assert (await _hello(url, None))["type"] == "welcome"
        for origin in (f"http://127.0.0.1:{srv.port}", "https://evil.example"):
            with pytest.raises(InvalidStatus) as err:
                await _hello(url, origin)
            assert err.value.response.status_code == 403
