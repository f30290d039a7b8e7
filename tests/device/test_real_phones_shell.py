"""Shell-level variants of real phones (issue 11, issue 10 part 3) through the real adb
server: pty line endings, two installs at once on one phone."""

from __future__ import annotations

import asyncio

import pytest

from inspector.device.adb_server import AdbEndpoint
from inspector.device.devices import AdbDevices
from inspector.device.layer import AdbDeviceLayer
from inspector.device.relay_lifecycle import (
    REMOTE_APK_PREFIX,
    InstallResult,
    RelayLifecycle,
    RelayStatus,
)
from inspector.device.shipped_relay import ShippedRelay
from tests.device import fakephone_android as android
from tests.device.fakephone import FakePhone
from tests.device.tiny_relay import PhoneRelay, teach_phone

pytestmark = pytest.mark.adb


async def test_pty_shell_with_crlf_lines_installs_once_and_connects(
    adb_endpoint: AdbEndpoint, phone: FakePhone, phone_relay: PhoneRelay, shipped: ShippedRelay
) -> None:
    android.pty_shell(phone)
    teach_phone(phone, shipped)
    devices = AdbDevices(adb_endpoint)
    info = (await devices.list_devices())[0]
    assert info.model == phone.state.props["ro.product.model"] and info.booted is True
    layer = AdbDeviceLayer(adb_endpoint, shipped=shipped)
    try:
        await layer.connect_relay(phone.serial)
        assert layer.last_install[phone.serial].result is InstallResult.INSTALLED
        assert len(phone_relay.started) == 1
        assert layer.diagnostics[phone.serial] == []  # "\r" never reads as a refusal
        check = await layer.lifecycle.check(phone.serial)
        assert check.status is RelayStatus.CURRENT  # "package:…\r\n" still parses
    finally:
        await layer.stop()
    assert len(phone.state.installs) == 1


async def test_two_installs_at_once_do_not_clobber_each_others_apk(
    adb_endpoint: AdbEndpoint, phone: FakePhone, shipped: ShippedRelay
) -> None:
    """The CLI beside the window (or two windows) install on the same phone at once: each
    push must survive until its own `pm install` read it."""
    teach_phone(phone, shipped)
    android.install_prompt(phone, 0.6)  # `pm install` takes a while, as a real one does
    first = RelayLifecycle(AdbDevices(adb_endpoint), shipped)
    second = RelayLifecycle(AdbDevices(adb_endpoint), shipped)

    async def later() -> object:
        await asyncio.sleep(0.2)
        return await second.install(phone.serial)

    a, b = await asyncio.gather(first.install(phone.serial), later())
    assert {a.result, b.result} <= {InstallResult.INSTALLED, InstallResult.UPGRADED}
    assert [i.result for i in phone.state.installs] == ["Success", "Success"]
    paths = {i.path for i in phone.state.installs}
    assert len(paths) == 2 and all(p.startswith(REMOTE_APK_PREFIX) for p in paths)
    assert not any(f.startswith(REMOTE_APK_PREFIX) for f in phone.state.files)


async def test_am_start_w_that_never_answers_hands_the_session_to_the_service(
    adb_endpoint: AdbEndpoint, phone: FakePhone, phone_relay: PhoneRelay, shipped: ShippedRelay
) -> None:
    """Before: the user waited 15 s and got "`am` … did not answer"; the relay was running."""
    teach_phone(phone, shipped)
    android.am_start_wait_hangs(phone)
    notes: list[str] = []
    layer = AdbDeviceLayer(adb_endpoint, shipped=shipped, notify=notes.append)
    layer.lifecycle.am_start_wait_s = 1.0
    try:
        client = await layer.connect_relay(phone.serial)
        assert client.hello_info is not None
        link = layer.links[phone.serial]
        assert all(s == (link.launch.socket_name, link.launch.token) for s in phone_relay.started)
        assert any(c.startswith("am start-foreground-service") for c in phone.state.commands)
        assert any("did not answer within 1 s" in n and "screen may be off" in n for n in notes)
    finally:
        await layer.stop()


async def test_two_connects_at_once_leave_one_working_session(
    adb_endpoint: AdbEndpoint, phone: FakePhone, phone_relay: PhoneRelay, shipped: ShippedRelay
) -> None:
    """A double click (or a reconnect racing a connect) on one phone: the connects run one
    after the other, so the relay installs once and the kept link is the relay's session."""
    teach_phone(phone, shipped)
    android.install_prompt(phone, 0.4)
    layer = AdbDeviceLayer(adb_endpoint, shipped=shipped)
    try:
        _first, second = await asyncio.gather(
            layer.connect_relay(phone.serial), layer.connect_relay(phone.serial)
        )
        assert second.hello_info is not None
        assert len(phone.state.installs) == 1
        link = layer.links[phone.serial]
        assert phone_relay.started[-1] == (link.launch.socket_name, link.launch.token)
        assert list(layer.pins) == [phone.serial]
    finally:
        await layer.stop()


async def test_android_8_without_the_relay_installs_though_dumpsys_stays_silent(
    phone: FakePhone, adb_endpoint: AdbEndpoint, shipped: ShippedRelay
) -> None:
    """Before: "Cannot tell whether the relay is installed" on a fresh Android 8.1 phone."""
    teach_phone(phone, shipped)
    android.android_version(phone, 27)
    android.dumpsys_silent_on_missing(phone)
    lifecycle = RelayLifecycle(AdbDevices(adb_endpoint), shipped)
    assert (await lifecycle.check(phone.serial)).status is RelayStatus.MISSING
    assert (await lifecycle.install(phone.serial)).result is InstallResult.INSTALLED
    after = await lifecycle.check(phone.serial)  # versionCode read through dumpsys
    assert after.status is RelayStatus.CURRENT and after.version_code == shipped.version_code
