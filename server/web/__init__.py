"""The browser client's HTTP side: the page, its static files, and the websocket's Origin check.

``aluette-server`` answers plain ``GET`` requests on its websocket port (issue 13), so a
link is all four friends need:

- ``GET /`` is the lobby, ``GET /u/<name>`` a registered player's profile (issue 27) and
  ``GET /t/<table-id>`` a table (a link to share; a private
  table's link carries its join code in the fragment, ``#code=K7Q2``, which browsers never
  send to a server or put in a ``Referer``), and ``GET /r/<table-id>[/<match>]`` a finished
  match's replay (``GET /r/`` replays a downloaded record file); all are the same single
  page;
- ``GET /static/<version>/<file>`` are its CSS, ES modules and icon. ``<version>`` is a
  hash of every static file, so an asset URL names exactly one content: it is cached for a
  year (``immutable``) and a new release changes every URL at once, while the page itself
  is ``no-cache`` (revalidated by its ETag).

Every answer carries a Content-Security-Policy that allows scripts only from this origin (no
inline script, no ``eval``), ``X-Content-Type-Options: nosniff``, no referrer and no
framing. Files are read once from the package (``package-data``) and kept in memory: the
whole client is a few dozen KiB.

The websocket upgrade is checked here too (:func:`origin_allowed`). A browser always sends
``Origin`` and lets any site's script open a websocket anywhere, so without the check a
page of another site could play from a visitor's browser (cross-site websocket hijacking),
for instance against a server on the visitor's own machine or network. By default only the
server's own pages may connect (the ``Origin`` must name the host of the ``Host`` header);
``--allowed-origins`` replaces that with an explicit list, which is also handed to the
websocket library's own check. Clients that are not browsers send no ``Origin`` and are
accepted, as before.
"""

from __future__ import annotations

import hashlib
import http
import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from urllib.parse import urlsplit

from websockets.datastructures import Headers
from websockets.http11 import Request, Response
from websockets.typing import Origin

#: Content types of the files the client is made of (nothing else is served).
TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
    ".txt": "text/plain; charset=utf-8",
    ".json": "application/json; charset=utf-8",
}

#: Scripts and styles from this origin only (no inline script, no eval); the websocket to
#: this origin only; nothing may frame the page; forms and <base> are not used.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
       "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
_HOST = re.compile(r"[A-Za-z0-9.-]{1,253}(:[0-9]{1,5})?|\[[0-9A-Fa-f:.]{2,45}\](:[0-9]{1,5})?")


def csp_for(host: str | None) -> str:
    """:data:`CSP`, with the page's own websocket named as well: CSP 3 lets 'self' cover
    ws:/wss: to the same host, older browsers need it spelt out. The Host header is used
    only if it is a plain host[:port]."""
    if host is None or not _HOST.fullmatch(host):
        return CSP
    return CSP.replace("connect-src 'self'", f"connect-src 'self' ws://{host} wss://{host}")

_TABLE_PATH = re.compile(r"/t/[A-Za-z0-9_-]{1,64}")
#: A finished match's replay (issue 28): the same page, which js/replay.mjs draws.
_REPLAY_PATH = re.compile(r"/r/?|/r/[A-Za-z0-9_-]{1,64}(/[1-9][0-9]{0,5})?")
#: A registered player's profile (issue 27): the same page, which js/players.mjs draws.
_PROFILE_PATH = re.compile(r"/u/[^/?#]{1,200}")
_STATIC_PREFIX = "/static/"


@dataclass(frozen=True, slots=True)
class Asset:
    body: bytes
    content_type: str
    etag: str


class Site:
    """The client's files, loaded once; :meth:`respond` answers one HTTP request."""

    def __init__(self, files: dict[str, bytes]) -> None:
        digest = hashlib.sha256()
        for name in sorted(files):
            digest.update(name.encode() + b"\0" + files[name] + b"\0")
        #: Part of every asset URL: a new release changes every URL at once.
        self.version = digest.hexdigest()[:12]
        self.assets: dict[str, Asset] = {}
        for name, body in files.items():
            if name == "index.html":
                continue
            self.assets[name] = _asset(name, body)
        page = files["index.html"].replace(b"{{STATIC}}", f"/static/{self.version}".encode())
        self.page = _asset("index.html", page)

    @classmethod
    def from_package(cls) -> Site:
        root = resources.files(__name__) / "static"
        files: dict[str, bytes] = {}

        def walk(node: resources.abc.Traversable, prefix: str) -> None:
            for child in node.iterdir():
                name = prefix + child.name
                if child.is_dir():
                    walk(child, name + "/")
                elif any(name.endswith(ext) for ext in TYPES):
                    files[name] = child.read_bytes()

        walk(root, "")
        # The message catalogues (the locales package, shared with the terminal client),
        # and their list: adding a language is adding its file there.
        import json

        import locales
        names = locales.languages()
        shelf = resources.files("locales")
        for code in names:
            # The terminal's own words ("cli." keys) stay out of the page's download.
            words = json.loads((shelf / f"{code}.json").read_bytes())
            files[f"locales/{code}.json"] = json.dumps(
                {k: v for k, v in words.items() if not k.startswith("cli.")},
                ensure_ascii=False, separators=(",", ":")).encode()
        files["locales/index.json"] = json.dumps(names, ensure_ascii=False).encode()
        return cls(files)

    def respond(self, request: Request) -> Response | None:
        """The answer to a plain GET for the page or an asset; None for any other path."""
        path = request.path.split("?", 1)[0].split("#", 1)[0]
        if (path == "/" or path == "/index.html" or _TABLE_PATH.fullmatch(path)
                or _REPLAY_PATH.fullmatch(path) or _PROFILE_PATH.fullmatch(path)):
            return _send(request, self.page, "no-cache")
        if path.startswith(_STATIC_PREFIX):
            version, _, name = path[len(_STATIC_PREFIX):].partition("/")
            asset = self.assets.get(name)
            if asset is None:
                return _plain(http.HTTPStatus.NOT_FOUND)
            # An old page asking for an old version gets today's file, uncached.
            cache = ("public, max-age=31536000, immutable" if version == self.version
                     else "no-cache")
            return _send(request, asset, cache)
        if path in ("/favicon.ico", "/robots.txt"):
            return _plain(http.HTTPStatus.NOT_FOUND)
        return None

    def size(self) -> int:
        """Bytes of everything the page loads: the page and its assets, with one language's
        catalogue and the list of them (issue 31 target: 300 KiB)."""
        return len(self.page.body) + sum(len(a.body) for name, a in self.assets.items()
                                         if not name.startswith("locales/")
                                         or name in ("locales/index.json", "locales/en.json"))


def _asset(name: str, body: bytes) -> Asset:
    ext = name[name.rfind("."):]
    return Asset(body, TYPES[ext], '"' + hashlib.sha256(body).hexdigest()[:16] + '"')


def security_headers(host: str | None = None) -> list[tuple[str, str]]:
    return [("Content-Security-Policy", csp_for(host)),
            ("X-Content-Type-Options", "nosniff"),
            ("Referrer-Policy", "no-referrer"),
            ("X-Frame-Options", "DENY"),
            ("Cross-Origin-Opener-Policy", "same-origin")]


def _send(request: Request, asset: Asset, cache: str) -> Response:
    headers = [("Cache-Control", cache), ("ETag", asset.etag),
               *security_headers(request.headers.get("Host"))]
    if asset.etag in request.headers.get("If-None-Match", ""):
        status = http.HTTPStatus.NOT_MODIFIED
        return Response(status.value, status.phrase, Headers(headers), b"")
    status = http.HTTPStatus.OK
    return Response(status.value, status.phrase, Headers([
        ("Content-Type", asset.content_type), ("Content-Length", str(len(asset.body))),
        *headers]), asset.body)


def _plain(status: http.HTTPStatus) -> Response:
    body = f"{status.value} {status.phrase}\n".encode()
    return Response(status.value, status.phrase, Headers([
        ("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body))),
        ("Cache-Control", "no-store"), *security_headers()]), body)


# --------------------------------------------------------------------------- Origin


def parse_origins(setting: str) -> list[str]:
    """``--allowed-origins``: comma-separated ``scheme://host[:port]`` (lower-cased)."""
    return [o.strip().rstrip("/").lower() for o in setting.split(",") if o.strip()]


def _host_port(netloc: str, default_port: int | None) -> tuple[str, int | None]:
    try:
        parts = urlsplit("//" + netloc)
        return (parts.hostname or "").lower(), parts.port or default_port
    except ValueError:
        return "", None


def origin_allowed(request: Request, allowed: list[str]) -> bool:
    """Whether this websocket upgrade may go on.

    No ``Origin``: not a browser (the terminal client, a bot), accepted. With an explicit
    list, the origin must be in it. Otherwise (the default) it must be the server's own
    origin: the host and port of the ``Host`` header the browser connected to, over http or
    https (behind a TLS proxy that keeps ``Host``, the page is ``https``).
    """
    origin = request.headers.get("Origin")
    if origin is None:
        return True
    origin = origin.strip().lower()
    if allowed:
        return origin in allowed
    scheme, sep, netloc = origin.partition("://")
    if not sep or scheme not in ("http", "https") or "/" in netloc:
        return False          # "null" (sandboxed frames, file://) and anything odd
    default = 443 if scheme == "https" else 80
    o_host, o_port = _host_port(netloc, default)
    h_host, h_port = _host_port(request.headers.get("Host", ""), default)
    return bool(o_host) and (o_host, o_port) == (h_host, h_port)


# --------------------------------------------------------------------------- methods, hosts

#: The methods the server answers (issue 30, item 5): any other gets 405.
METHODS = ("GET", "HEAD")


def method_refused(request: Request) -> Response | None:
    """405 with ``Allow`` for a method other than GET and HEAD (it used to get the page)."""
    if request.method in METHODS:
        return None
    response = _plain(http.HTTPStatus.METHOD_NOT_ALLOWED)
    response.headers["Allow"] = ", ".join(METHODS)
    return response


def for_method(request: Request, response: Response) -> Response:
    """A HEAD is answered as the GET would be, without the body."""
    if request.method != "HEAD" or not response.body:
        return response
    return Response(response.status_code, response.reason_phrase, response.headers, b"")


#: Names every server answers to, whatever it listens on.
LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})
_WILDCARDS = frozenset({"", "0.0.0.0", "::"})


@dataclass(frozen=True, slots=True)
class Hosts:
    """The ``Host`` headers the server answers (DNS rebinding, issue 30 item 5)."""

    #: Host names and addresses (lower-case, IPv6 without brackets).
    names: frozenset[str]
    #: Listening on every address: any IP address is one of ours (an address cannot be
    #: rebound; only a name can be made to point at us).
    any_address: bool = False
    #: ``--allowed-hosts '*'``: the check is off.
    any_host: bool = False


def parse_hosts(setting: str, *, listen: str, origins: list[str]) -> Hosts:
    """``--allowed-hosts`` (comma-separated names, ``*`` for any), plus the address the
    server listens on, the loopback names and the hosts of ``--allowed-origins`` (a public
    name the operator configured already)."""
    listed = [h.strip().lower() for h in setting.split(",") if h.strip()]
    names = set(LOOPBACK)
    for entry in listed:
        host, _ = _host_port(entry, None)
        names.add(host or entry)
    for origin in origins:
        host, _ = _host_port(origin.partition("://")[2], None)
        if host:
            names.add(host)
    listen = listen.strip().lower()
    if listen not in _WILDCARDS:
        names.add(listen.strip("[]"))
    return Hosts(frozenset(names), any_address=listen in _WILDCARDS, any_host="*" in listed)


def host_allowed(host: str | None, hosts: Hosts) -> bool:
    """Whether a request with this ``Host`` header is for us. None (no header: not a
    browser, which always sends one) is; an ill-formed one is not."""
    if host is None or hosts.any_host:
        return True
    if not _HOST.fullmatch(host):
        return False
    name, _ = _host_port(host, None)
    if not name:
        return False
    if name in hosts.names:
        return True
    if hosts.any_address:
        try:
            ipaddress.ip_address(name)
        except ValueError:
            return False
        return True
    return False


def host_refused(request: Request, hosts: Hosts) -> Response | None:
    """403 for a ``Host`` the server does not answer to, 400 for several of them."""
    found = request.headers.get_all("Host")
    if len(found) > 1:
        return _plain(http.HTTPStatus.BAD_REQUEST)
    if host_allowed(found[0] if found else None, hosts):
        return None
    return _plain(http.HTTPStatus.FORBIDDEN)


def is_upgrade(request: Request) -> bool:
    return "websocket" in request.headers.get("Upgrade", "").lower()


def ws_origins(allowed: list[str]) -> list[Origin | None] | None:
    """The ``origins`` argument of websockets' ``serve``: the explicit list (plus None, for
    clients that send no ``Origin``), or None when the default same-origin rule applies
    (it needs the ``Host`` header, so :func:`handler` checks it)."""
    return [None, *(Origin(o) for o in allowed)] if allowed else None


def handler(allowed_origins: str, allowed_hosts: str = "",
            listen: str = "127.0.0.1") -> Callable[[Request], Response | None]:
    """The server shell's hook, called for every request before the websocket handshake.

    A request for a ``Host`` the server does not answer to (:func:`host_allowed`: DNS
    rebinding) is answered 403, the page and the websocket alike. A websocket upgrade from
    a foreign ``Origin`` is answered 403; any other upgrade goes on (None). A plain GET (or
    HEAD) gets the page or an asset; None leaves other paths to the websocket library as
    before (it answers 426 Upgrade Required).
    """
    allowed = parse_origins(allowed_origins)
    hosts = parse_hosts(allowed_hosts, listen=listen, origins=allowed)
    site = Site.from_package()

    def process_request(request: Request) -> Response | None:
        refused = host_refused(request, hosts)
        if refused is not None:
            return refused
        if is_upgrade(request):
            return None if origin_allowed(request, allowed) else _plain(
                http.HTTPStatus.FORBIDDEN)
        page = site.respond(request)
        return None if page is None else for_method(request, page)

    return process_request


__all__ = ["CSP", "METHODS", "Hosts", "Site", "csp_for", "for_method", "handler", "host_allowed",
           "host_refused", "is_upgrade", "method_refused", "origin_allowed", "parse_hosts",
           "parse_origins", "ws_origins"]
