"""The hello reports which permissions the relay holds (Java relay core on the host JVM).

On a phone the relay fills it from checkSelfPermission for each permission its manifest
requests; HostMain takes the held set from --held-permissions. The desktop turns a missing
ACCESS_TOOLS into advice: every real CETP provider demands it, and Android may not grant a
custom permission defined by a provider installed after the relay.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.cli.main import main
from inspector.relay.client import RelayClient
from inspector.relay.hello import ACCESS_TOOLS, permission_problems
from tests.relay_apk.host_jvm import HostRelayProcess as HostRelay

pytestmark = pytest.mark.java

QUERY_ALL = "android.permission.QUERY_ALL_PACKAGES"


@pytest.fixture
def host_relay_args(request: pytest.FixtureRequest) -> list[str]:
    held = getattr(request, "param", None)
    return [] if held is None else ["--held-permissions", held]


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CETP_INSPECTOR_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CETP_INSPECTOR_NO_ADB", "1")


async def test_a_relay_holding_everything_reports_no_missing_permission(
    host_relay: HostRelay,
) -> None:
    client = await RelayClient.open_tcp(host_relay.host, host_relay.port, host_relay.token)
    try:
        info = client.hello_info
        assert info.requested_permissions is not None and ACCESS_TOOLS in info.requested_permissions
        assert info.held_permissions == info.requested_permissions
        assert info.missing_permissions == ()
        assert permission_problems(info) == []
    finally:
        await client.close()


@pytest.mark.parametrize("host_relay_args", [QUERY_ALL], indirect=True)
async def test_missing_access_tools_is_reported_with_the_reinstall_advice(
    host_relay: HostRelay,
) -> None:
    client = await RelayClient.open_tcp(host_relay.host, host_relay.port, host_relay.token)
    try:
        info = client.hello_info
        assert info.held_permissions == (QUERY_ALL,)
        assert ACCESS_TOOLS in info.missing_permissions
        assert QUERY_ALL not in info.missing_permissions
        advice = permission_problems(info)
        tools = [a for a in advice if a.startswith(ACCESS_TOOLS)]
        assert len(tools) == 1 and "installed after the relay" in tools[0]
        assert "adb uninstall org.cetp.inspector.relay" in tools[0]
    finally:
        await client.close()


@pytest.mark.parametrize("host_relay_args", [QUERY_ALL], indirect=True)
def test_cli_providers_shows_the_missing_permission(
    host_relay: HostRelay, capsys: pytest.CaptureFixture[str],
) -> None:
    at = ["--relay-socket", f"tcp:{host_relay.host}:{host_relay.port}", "--token", host_relay.token]
    assert main(["providers", *at]) == 0
    out = capsys.readouterr().out
    assert f"! relay: {ACCESS_TOOLS} not granted to the relay" in out
    assert main(["providers", *at, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    perms = doc["relay_permissions"]
    assert perms["held"] == [QUERY_ALL] and ACCESS_TOOLS in perms["missing"]
    assert any("Reinstall the relay" in p for p in perms["problems"])


async def test_the_host_relay_requests_what_the_real_manifest_requests(
    host_relay: HostRelay,
) -> None:
    """FakePlatform's list must follow relay_apk/AndroidManifest.xml (no silent drift)."""
    import re

    from tests.relay_apk.host_jvm import RELAY_DIR

    manifest = (RELAY_DIR / "AndroidManifest.xml").read_text("utf-8")
    wanted = re.findall(r'<uses-permission\s+android:name="([^"]+)"', manifest)
    client = await RelayClient.open_tcp(host_relay.host, host_relay.port, host_relay.token)
    try:
        assert client.hello_info.requested_permissions == tuple(wanted)
    finally:
        await client.close()
