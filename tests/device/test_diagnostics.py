"""Phone diagnostics (issue 10 part 3): Android's own dump texts parsed, and the checks run
through the real adb server against the fake phone answering as a phone would."""

from __future__ import annotations

import pytest

from inspector.device.adb_server import AdbEndpoint
from inspector.device.devices import AdbDevices
from inspector.device.diagnostics import (
    APP_RESTRICTED,
    APP_STOPPED,
    KEYGUARD_LOCKED,
    OVERLAY_NOT_GRANTED,
    RELAY_KILLED,
    RELAY_NOT_FOREGROUND,
    PhoneChecks,
    parse_exit_info,
    parse_foreground,
    parse_keyguard,
)
from inspector.device.errors import RELAY_UNREACHABLE, DeviceError
from inspector.device.layer import AdbDeviceLayer
from inspector.device.shipped_relay import ShippedRelay
from tests.device import fakephone_android as android
from tests.device.fakephone import FakePhone
from tests.device.tiny_relay import PhoneRelay, teach_phone


def test_parsers_read_androids_dump_texts() -> None:
    assert parse_keyguard("  KeyguardController:\n    mKeyguardShowing=true\n") is True
    assert parse_keyguard("mShowingLockscreen=false mShowingDream=false") is False
    assert parse_keyguard("nothing here") is None
    assert parse_foreground("* ServiceRecord{…}\n    isForeground=false foregroundId=0") is False
    assert parse_foreground("(nothing)") is None
    text = ("ApplicationExitInfo #0:\n    timestamp=2026-12-01 10:00:00 pid=1\n"
            "    reason=6 (ANR)\n    description=user request after error\n"
            "ApplicationExitInfo #1:\n    reason=10 (USER REQUESTED)\n")
    assert parse_exit_info(text) == "6 (ANR), user request after error, at 2026-12-01 10:00:00"
    assert parse_exit_info("package: x\n") is None


@pytest.mark.adb
async def test_checks_name_each_cause_on_the_phone(
    adb_endpoint: AdbEndpoint, phone: FakePhone, shipped: ShippedRelay
) -> None:
    teach_phone(phone, shipped)
    scr = android.screen(phone, android.PhoneScreen(
        keyguard=True, foreground=False, exit_info=["2 (SIGNALED) signal 9"],
        buckets={"com.example.finance": 45}, stopped={"com.example.finance"}))
    pkg = shipped.package
    phone.state.started.append(f"{pkg}/.app.RelayService")
    from tests.device.fakephone import InstalledPackage

    for name in (pkg, "com.example.finance"):
        phone.state.packages[name] = InstalledPackage(name, 1, "1", "k", b"apk")
    checks = PhoneChecks(AdbDevices(adb_endpoint), phone.serial, 34)
    assert [d.code for d in await checks.keyguard()] == [KEYGUARD_LOCKED]
    assert [d.code for d in await checks.relay_foreground(pkg)] == [RELAY_NOT_FOREGROUND]
    assert [d.code for d in await checks.overlay(pkg)] == [OVERLAY_NOT_GRANTED]
    (killed,) = await checks.last_exit(pkg)
    assert killed.code == RELAY_KILLED and "signal 9" in killed.message
    codes = [d.code for d in await checks.app_state("com.example.finance")]
    assert codes == [APP_STOPPED, APP_RESTRICTED]
    scr.keyguard, scr.foreground, scr.exit_info = False, True, []
    scr.overlay[pkg] = "allow"
    assert await checks.keyguard() == [] and await checks.relay_foreground(pkg) == []
    assert await checks.overlay(pkg) == [] and await checks.last_exit(pkg) == []


@pytest.mark.adb
async def test_locked_phone_gets_the_session_headless_and_says_so(
    adb_endpoint: AdbEndpoint, phone: FakePhone, phone_relay: PhoneRelay, shipped: ShippedRelay
) -> None:
    teach_phone(phone, shipped)
    android.screen(phone, android.PhoneScreen(keyguard=True))
    layer = AdbDeviceLayer(adb_endpoint, shipped=shipped)
    try:
        await layer.connect_relay(phone.serial)
        assert not any(c.startswith("am start -W") for c in phone.state.commands)
        assert any(c.startswith("am start-foreground-service") for c in phone.state.commands)
        assert KEYGUARD_LOCKED in [d.code for d in layer.diagnostics[phone.serial]]
    finally:
        await layer.stop()


@pytest.mark.adb
async def test_session_pins_the_relay_active_and_allowlisted_then_undoes_it(
    adb_endpoint: AdbEndpoint, phone: FakePhone, phone_relay: PhoneRelay, shipped: ShippedRelay
) -> None:
    teach_phone(phone, shipped)
    scr = android.screen(phone, android.PhoneScreen(buckets={shipped.package: 40}))
    layer = AdbDeviceLayer(adb_endpoint, shipped=shipped)
    try:
        await layer.connect_relay(phone.serial)
        assert scr.buckets[shipped.package] == 10
        assert shipped.package in scr.idle_allowlist
    finally:
        await layer.stop()
    assert scr.buckets[shipped.package] == 40
    assert shipped.package not in scr.idle_allowlist


@pytest.mark.adb
async def test_relay_that_never_answers_is_explained_by_its_exit_info(
    adb_endpoint: AdbEndpoint, phone: FakePhone, shipped: ShippedRelay
) -> None:
    teach_phone(phone, shipped)  # no relay serves the socket: it "died" at start
    android.screen(phone, android.PhoneScreen(exit_info=["4 (CRASH) java.lang.NullPointer"]))
    layer = AdbDeviceLayer(adb_endpoint, shipped=shipped)
    layer.open_timeout_s = 1.0
    try:
        with pytest.raises(DeviceError) as err:
            await layer.connect_relay(phone.serial)
    finally:
        await layer.stop()
    assert err.value.code == RELAY_UNREACHABLE
    assert "last ended: 4 (CRASH)" in err.value.message


@pytest.mark.adb
async def test_layer_explains_a_stopped_or_restricted_target_app(
    adb_endpoint: AdbEndpoint, phone: FakePhone, shipped: ShippedRelay
) -> None:
    from tests.device.fakephone import InstalledPackage

    phone.state.packages["com.example.finance"] = InstalledPackage(
        "com.example.finance", 1, "1", "k", b"apk")
    scr = android.screen(phone, android.PhoneScreen(stopped={"com.example.finance"}))
    layer = AdbDeviceLayer(adb_endpoint, shipped=shipped)
    found = await layer.app_diagnostics(phone.serial, "com.example.finance", 34)
    assert [d.code for d in found] == [APP_STOPPED]
    scr.stopped.clear()
    scr.buckets["com.example.finance"] = 45
    (restricted,) = await layer.app_diagnostics(phone.serial, "com.example.finance", 34)
    assert restricted.code == APP_RESTRICTED and "restricted standby bucket" in restricted.message
    with pytest.raises(DeviceError):
        await layer.app_diagnostics(phone.serial, "not a package; rm -rf /", 34)


@pytest.mark.adb
async def test_a_relay_killed_mid_session_is_restarted_and_the_reason_told(
    adb_endpoint: AdbEndpoint, phone: FakePhone, phone_relay: PhoneRelay, shipped: ShippedRelay
) -> None:
    from inspector.relay.api import RelayError

    teach_phone(phone, shipped)
    scr = android.screen(phone)
    notes: list[str] = []
    layer = AdbDeviceLayer(adb_endpoint, shipped=shipped, notify=notes.append)
    try:
        client = await layer.connect_relay(phone.serial)
        assert RELAY_KILLED not in [d.code for d in layer.diagnostics[phone.serial]]
        scr.exit_info.append("3 (LOW_MEMORY)")  # Android's low-memory killer took it
        phone.call(phone_relay.close())
        phone.state.abstract_sockets.clear()
        with pytest.raises(RelayError):
            await client.call("a.b", "m", None)
        await layer.reconnect_relay(phone.serial, timeout=10, reopen_timeout=0.5)
        assert len(phone_relay.started) == 2
        assert any("had stopped" in n and "3 (LOW_MEMORY)" in n for n in notes)
        assert RELAY_KILLED in [d.code for d in layer.diagnostics[phone.serial]]
    finally:
        await layer.stop()
