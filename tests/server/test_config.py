"""Every server setting has a flag and an environment variable; flags win (issue 5)."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

from server.config import ENV, Settings, parse_settings

ROOT = Path(__file__).resolve().parents[2]


def test_defaults_need_nothing():
    s = parse_settings([], environ={})
    assert s == Settings()
    assert s.redis_url == ""            # embedded store by default


def test_environment_then_flags():
    env = {"REDIS_URL": "redis://r:6379/2", "ALUETTE_PORT": "9000", "ALUETTE_TABLE_TTL": "5"}
    s = parse_settings([], environ=env)
    assert (s.redis_url, s.port, s.table_ttl_s) == ("redis://r:6379/2", 9000, 5)
    s = parse_settings(["--port", "9100", "--data-dir", "/tmp/x"], environ=env)
    assert s.port == 9100 and s.data_dir == Path("/tmp/x") and s.table_ttl_s == 5


def test_every_setting_is_documented_in_the_readme():
    readme = (ROOT / "README.md").read_text()
    for f in fields(Settings):
        assert ENV[f.name] in readme, f"README does not document {ENV[f.name]}"
