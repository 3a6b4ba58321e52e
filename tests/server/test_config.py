"""Every server setting has a flag and an environment variable; flags win (issue 5)."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from server.config import ENV, MAY_BE_ZERO, Settings, flag_of, parse_settings

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


NUMBERS = [f.name for f in fields(Settings)
           if isinstance(getattr(Settings(), f.name), int | float)]


@pytest.mark.parametrize("name", NUMBERS)
def test_a_negative_number_is_refused_naming_its_flag(
        name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A setting out of range stops the server at once with the flag and the value, instead
    of a server that expires its keys at once or never renews its leases."""
    with pytest.raises(SystemExit):
        parse_settings([flag_of(name), "-1"], environ={})
    err = capsys.readouterr().err
    assert flag_of(name) in err and "-1" in err


@pytest.mark.parametrize("name", NUMBERS)
def test_zero_is_refused_unless_it_means_something(
        name: str, capsys: pytest.CaptureFixture[str]) -> None:
    if name in MAY_BE_ZERO:
        assert getattr(parse_settings([flag_of(name), "0"], environ={}), name) == 0
        return
    with pytest.raises(SystemExit):
        parse_settings([flag_of(name), "0"], environ={})
    assert f"{flag_of(name)} must be more than 0" in capsys.readouterr().err


def test_bad_environment_values_and_leases_are_refused(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse_settings([], environ={"ALUETTE_PORT": "eighty"})
    assert "ALUETTE_PORT='eighty' is not a valid int" in capsys.readouterr().err
    for argv in (["--port", "70000"], ["--bot-think", "nan"],
                 ["--lease-ttl", "2", "--lease-renew", "2"]):
        with pytest.raises(SystemExit):
            parse_settings(argv, environ={})
        assert "must be" in capsys.readouterr().err
    assert parse_settings(["--lease-ttl", "2", "--lease-renew", "1.5"], environ={}).lease_ttl_s == 2


def test_an_advertised_url_must_be_a_websockets_and_name_one_process(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 32 (a table's home, protocol 1.6): the URL told to players must be one they
    can reconnect to, and must name this very process, which ``--workers`` (one port for
    all) cannot."""
    for argv in (["--advertise-url", "http://cards.example/"],
                 ["--advertise-url", "wss://cards.example/" + "x" * 600],
                 ["--advertise-url", "wss://cards example/"]):
        with pytest.raises(SystemExit):
            parse_settings(argv, environ={})
        assert "--advertise-url must be a ws:// or wss:// URL" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parse_settings(["--advertise-url", "wss://cards.example/?home=s1", "--workers", "2"],
                       environ={})
    assert "--advertise-url names one process" in capsys.readouterr().err
    ok = parse_settings([], environ={"ALUETTE_ADVERTISE_URL": "wss://cards.example/?home=s1"})
    assert ok.advertise_url == "wss://cards.example/?home=s1"
