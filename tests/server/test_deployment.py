"""docker-compose.yml and the Dockerfile, checked by parsing (no Docker engine here)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_redis_service_persists_append_only_on_a_volume_with_a_healthcheck():
    redis = compose()["services"]["redis"]
    assert redis["image"].startswith("redis:")
    command = " ".join(redis["command"])
    assert "--appendonly yes" in command
    volume = redis["volumes"][0].split(":")
    assert volume[1] == "/data" and volume[0] in compose()["volumes"]
    assert "redis-cli" in redis["healthcheck"]["test"] and "ping" in redis["healthcheck"]["test"]


def servers() -> dict[str, dict]:
    return {k: v for k, v in compose()["services"].items() if k.startswith("server")}


def test_three_server_replicas_share_redis_and_check_healthz():
    """Issue 11: three replicas on one Redis; only the proxy publishes the port."""
    assert sorted(servers()) == ["server1", "server2", "server3"]
    for server in servers().values():
        assert server["build"]["dockerfile"] == "Dockerfile"
        assert (ROOT / server["build"]["dockerfile"]).exists()
        assert server["environment"]["REDIS_URL"].startswith("redis://redis:6379")
        assert server["environment"]["ALUETTE_HOST"] == "0.0.0.0"
        assert "ports" not in server
        assert server["depends_on"]["redis"]["condition"] == "service_healthy"
        assert "/healthz" in " ".join(server["healthcheck"]["test"])
        assert server["stop_signal"] == "SIGTERM"


def haproxy() -> dict[str, list[str]]:
    """deploy/haproxy.cfg as sections of lines (a plain parse: no HAProxy here)."""
    sections: dict[str, list[str]] = {}
    current = ""
    for raw in (ROOT / "deploy" / "haproxy.cfg").read_text().splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        if not line.startswith((" ", "\t")):
            current = line.strip()
            sections[current] = []
        else:
            sections[current].append(" ".join(line.split()))
    return sections


def test_the_proxy_passes_websockets_to_every_replica_and_checks_healthz():
    proxy = compose()["services"]["proxy"]
    assert proxy["image"].startswith("haproxy:")
    mount = proxy["volumes"][0].split(":")
    assert mount[0] == "./deploy/haproxy.cfg" and (ROOT / mount[0]).exists()
    assert "8765:8765" in proxy["ports"]
    cfg = haproxy()
    assert "mode http" in cfg["defaults"]          # websockets are HTTP upgrades
    assert any(line.startswith("timeout tunnel") for line in cfg["defaults"])
    assert "option forwardfor" in cfg["defaults"]
    backend = cfg["backend servers"]
    assert "option httpchk GET /healthz" in backend
    assert "http-check expect status 200" in backend
    named = {line.split()[1]: line for line in backend if line.startswith("server ")}
    assert set(named) == set(servers())
    assert all(line.endswith("check") and ":8765" in line for line in named.values())
    assert cfg["frontend aluette"] == ["bind :8765", "default_backend servers"]
    # Issue 32: each server's advertised URL names it, and the proxy sends that name to
    # that server (a table's home), and to no other.
    routes = {line.split()[1]: line for line in backend if line.startswith("use-server ")}
    assert set(routes) == set(servers())
    for name, server in servers().items():
        url = server["environment"]["ALUETTE_ADVERTISE_URL"]
        assert url.startswith(("ws://", "wss://")) and url.endswith(f"?home={name}")
        assert routes[name] == f"use-server {name} if {{ urlp(home) -m str {name} }}"
    # The servers trust exactly the proxy's address for X-Forwarded-For.
    address = proxy["networks"]["aluette"]["ipv4_address"]
    for server in servers().values():
        assert server["environment"]["ALUETTE_TRUSTED_PROXIES"] == address


def test_dockerfile_installs_like_ci_and_runs_the_server():
    text = (ROOT / "Dockerfile").read_text()
    assert re.search(r"pip install .*\.\s*$", text, re.M), "installs the project like CI"
    assert "EXPOSE 8765" in text and "/healthz" in text
    assert 'CMD ["aluette-server"]' in text
    # Everything the image needs is copied in.
    for package in ("protocol", "server", "client_cli", "pyproject.toml"):
        assert f"COPY {package}" in text or package in text


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "bash scripts/test.sh" in readme and "bash scripts/test.sh" in ci
