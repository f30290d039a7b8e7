"""Parsing, configuration and shipped-relay checks (no adb server needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.device.adb_server import AdbEndpoint, ensure_server, find_adb
from inspector.device.devices import info_from_props, parse_device_lines, parse_getprop
from inspector.device.errors import ADB_MISSING, ADB_SERVER, RELAY_NOT_SHIPPED, DeviceError
from inspector.device.models import DeviceState, parse_state, transport_of
from inspector.device.relay_lifecycle import (
    EXTRA_SOCKET,
    EXTRA_TOKEN,
    RELAY_ACTIVITY_CLASS,
    RELAY_SERVICE_CLASS,
    _failure_code,
    relay_start_command,
)
from inspector.device.shipped_relay import RELAY_PACKAGE, load_shipped_relay, resources_dir
from tests.device.tiny_relay import stand_in_relay


def test_no_permissions_state_keeps_its_spaces_and_gets_udev_advice() -> None:
    text = (
        "0123456789ABCDEF\tno permissions (user in plugdev group; are your udev rules wrong?); "
        "see [http://developer.android.com/tools/device.html]\n"
        "emulator-5554\tdevice\n"
        "R58M\tunauthorized\n"
    )
    pairs = parse_device_lines(text)
    assert [s for s, _ in pairs] == ["0123456789ABCDEF", "emulator-5554", "R58M"]
    states = [parse_state(st) for _, st in pairs]
    assert states == [DeviceState.NO_PERMISSIONS, DeviceState.DEVICE, DeviceState.UNAUTHORIZED]
    info = info_from_props(*pairs[0], {})
    assert "udev" in info.hint and "plugdev" in info.hint and info.transport == "usb"
    assert transport_of("emulator-5554") == "emulator"
    assert parse_state("sideways") is DeviceState.UNKNOWN


def test_getprop_parsing_ignores_malformed_lines() -> None:
    props = parse_getprop(
        "[ro.build.version.sdk]: [30]\n[ro.product.model]: [Pixel [5]]\ngarbage\n[x]: [\n"
    )
    assert props == {"ro.build.version.sdk": "30", "ro.product.model": "Pixel [5]"}
    info = info_from_props("s", "device", {**props, "ro.build.version.release": "11"})
    assert info.sdk_int == 30 and info.title == "Pixel [5] (Android 11, API 30)"
    assert info_from_props("s", "device", {"ro.build.version.sdk": "S"}).sdk_int is None


def test_endpoint_honours_android_adb_server_port(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", "6123")
    assert AdbEndpoint.from_env().port == 6123
    monkeypatch.delenv("ANDROID_ADB_SERVER_PORT")
    assert AdbEndpoint.from_env().port == 5037
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", "fifty")
    with pytest.raises(DeviceError) as err:
        AdbEndpoint.from_env()
    assert err.value.code == ADB_SERVER and "ANDROID_ADB_SERVER_PORT" in err.value.message


def test_adb_binary_choice(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake = tmp_path / "my-adb"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("ADBUTILS_ADB_PATH", str(fake))
    assert find_adb().source == "env" and find_adb().path == str(fake)
    monkeypatch.delenv("ADBUTILS_ADB_PATH")
    monkeypatch.setenv("PATH", str(tmp_path))  # no adb on PATH: the wheel's adb is used
    chosen = find_adb()
    assert chosen.source == "bundled" and chosen.path.endswith("adbutils/binaries/adb")


def test_missing_adb_binary_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import adbutils

    monkeypatch.delenv("ADBUTILS_ADB_PATH", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(adbutils, "__file__", str(tmp_path / "adbutils" / "__init__.py"))
    with pytest.raises(DeviceError) as err:
        find_adb()
    assert err.value.code == ADB_MISSING and "apt install adb" in err.value.hint


@pytest.mark.adb
async def test_ensure_server_leaves_a_running_server_alone(adb_endpoint: AdbEndpoint) -> None:
    assert await ensure_server(adb_endpoint) is False


def test_start_command_is_the_documented_one() -> None:
    extras = ["--es", "org.cetp.inspector.relay.SOCKET", "cetp-relay-ab"]
    extras += ["--es", "org.cetp.inspector.relay.TOKEN", "T0K"]
    assert relay_start_command("org.cetp.inspector.relay", "cetp-relay-ab", "T0K") == [
        *("am", "start", "-W", "-n", "org.cetp.inspector.relay/.app.RelayActivity"),
        *extras,
    ]
    headless = relay_start_command(
        "org.cetp.inspector.relay", "cetp-relay-ab", "T0K", headless=True
    )
    assert headless == [
        *("am", "start-foreground-service", "-n", "org.cetp.inspector.relay/.app.RelayService"),
        *extras,
    ]
    assert _failure_code("Failure [INSTALL_FAILED_OLDER_SDK: Requires newer sdk]") == (
        "INSTALL_FAILED_OLDER_SDK"
    )


def test_shipped_relay_is_verified_before_use(tmp_path: Path) -> None:
    relay = stand_in_relay(tmp_path / "ok")
    assert relay.read_apk() == (tmp_path / "ok" / "cetp-relay.apk").read_bytes()
    assert relay.version_code == 3 and relay.version_name == "0.3"

    (tmp_path / "ok" / "cetp-relay.apk").write_bytes(b"tampered")
    with pytest.raises(DeviceError, match="damaged"):
        relay.read_apk()

    with pytest.raises(DeviceError) as err:
        load_shipped_relay(tmp_path / "nothing-here")
    assert err.value.code == RELAY_NOT_SHIPPED and "build.sh" in err.value.hint

    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "relay.json").write_text(json.dumps({"versionName": "1"}))
    with pytest.raises(DeviceError, match="malformed"):
        load_shipped_relay(bad)


def test_resources_folder_is_found_from_a_source_checkout() -> None:
    assert (resources_dir() / "__init__.py").is_file()


def test_start_command_matches_the_relay_sources() -> None:
    """The component and extra names the desktop sends are the ones the relay reads."""
    root = Path(__file__).resolve().parents[2] / "relay_apk"
    manifest = (root / "AndroidManifest.xml").read_text("utf-8")
    service = next((root / "src").rglob("RelayService.java")).read_text("utf-8")
    assert f'android:name="{RELAY_SERVICE_CLASS}"' in manifest
    assert f'android:name="{RELAY_ACTIVITY_CLASS}"' in manifest
    assert f'package="{RELAY_PACKAGE}"' in manifest
    assert f'EXTRA_SOCKET = "{EXTRA_SOCKET}"' in service
    assert f'EXTRA_TOKEN = "{EXTRA_TOKEN}"' in service
