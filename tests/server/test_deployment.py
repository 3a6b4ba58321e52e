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


def test_server_service_uses_redis_publishes_its_port_and_checks_healthz():
    server = compose()["services"]["server"]
    assert server["build"]["dockerfile"] == "Dockerfile"
    assert (ROOT / server["build"]["dockerfile"]).exists()
    assert server["environment"]["REDIS_URL"].startswith("redis://redis:6379")
    assert server["environment"]["ALUETTE_HOST"] == "0.0.0.0"
    assert "8765:8765" in server["ports"]
    assert server["depends_on"]["redis"]["condition"] == "service_healthy"
    assert "/healthz" in " ".join(server["healthcheck"]["test"])


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
