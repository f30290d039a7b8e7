"""Listening address checks (loopback only)."""

from __future__ import annotations

import pytest

from inspector.mcp.http import parse_listen
from inspector.session.errors import InspectorError


@pytest.mark.parametrize(("spec", "expected"), [
    ("127.0.0.1:8765", ("127.0.0.1", 8765)), ("localhost:0", ("localhost", 0)),
    ("[::1]:9000", ("::1", 9000))])
def test_loopback_accepted(spec: str, expected: tuple[str, int]) -> None:
    assert parse_listen(spec) == expected


@pytest.mark.parametrize("spec", ["0.0.0.0:8765", "192.168.1.2:80", "example.com:80"])
def test_other_hosts_refused(spec: str) -> None:
    with pytest.raises(InspectorError) as info:
        parse_listen(spec)
    assert info.value.code == "NOT_LOCALHOST"
    assert "SSH tunnel" in info.value.hint


@pytest.mark.parametrize("spec", ["8765", "127.0.0.1:x", "127.0.0.1:70000"])
def test_bad_specs(spec: str) -> None:
    with pytest.raises(InspectorError) as info:
        parse_listen(spec)
    assert info.value.code == "BAD_LISTEN"


def test_cli_refuses_a_public_address_before_connecting(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from inspector.cli.main import main

    monkeypatch.setenv("CETP_INSPECTOR_NO_ADB", "1")
    assert main(["mcp", "--http", "0.0.0.0:8765"]) == 2
    err = capsys.readouterr().err
    assert "NOT_LOCALHOST" in err and "127.0.0.1" in err
