"""Relay install/start as real Android 8–15 phones and vendor ROMs behave (issue 11), through
the real adb server and the fake phone taught those behaviours (tests/device/fakephone_android.py).
"""

from __future__ import annotations

import asyncio
import hashlib

import pytest

from inspector.device.adb_server import AdbEndpoint
from inspector.device.apk_signers import fingerprint
from inspector.device.devices import AdbDevices
from inspector.device.errors import (
    DEVICE_BOOTING,
    DEVICE_NOT_FOUND,
    INSTALL_FAILED,
    INSTALL_NEEDS_CONFIRMATION,
    DeviceError,
)
from inspector.device.layer import AdbDeviceLayer
from inspector.device.relay_lifecycle import (
    REMOTE_APK_PREFIX,
    InstallResult,
    RelayLifecycle,
    RelayStatus,
)
from inspector.device.shipped_relay import ShippedRelay
from inspector.device.vendors import COLOROS_SETTING, MIUI_SETTING
from tests.device import fakephone_android as android
from tests.device.fakephone import FakePhone
from tests.device.tiny_relay import RELAY_KEY, PhoneRelay, preinstall_relay, teach_phone

pytestmark = pytest.mark.adb


@pytest.fixture
def lifecycle(adb_endpoint: AdbEndpoint, shipped: ShippedRelay) -> RelayLifecycle:
    return RelayLifecycle(AdbDevices(adb_endpoint), shipped)


def make_layer(endpoint: AdbEndpoint, shipped: ShippedRelay, notes: list[str]) -> AdbDeviceLayer:
    return AdbDeviceLayer(endpoint, shipped=shipped, notify=notes.append)


# -- trust ----------------------------------------------------------------------------------
async def test_newer_relay_signed_by_a_stranger_never_gets_the_token(
    adb_endpoint: AdbEndpoint, phone: FakePhone, phone_relay: PhoneRelay, shipped: ShippedRelay
) -> None:
    teach_phone(phone, shipped)
    preinstall_relay(phone, shipped, shipped.version_code + 10, "mallory's certificate")
    layer = make_layer(adb_endpoint, shipped, [])
    questions: list[str] = []

    async def refuse(question: str) -> bool:
        questions.append(question)
        return False

    try:
        with pytest.raises(DeviceError) as err:
            await layer.connect_relay(phone.serial, confirm_uninstall=refuse)
        assert err.value.code == INSTALL_NEEDS_CONFIRMATION
        ours = fingerprint(layer.lifecycle.shipped_signers[0])
        assert ours in err.value.message  # names our certificate …
        theirs = fingerprint(hashlib.sha256(b"mallory's certificate").hexdigest())
        assert theirs in err.value.message  # … and theirs
        assert "--allow-uninstall" in err.value.hint and questions
        assert phone_relay.started == [] and not any("am start" in c for c in phone.state.commands)

        async def agree(question: str) -> bool:
            return True

        await layer.connect_relay(phone.serial, confirm_uninstall=agree)
        assert f"pm uninstall {shipped.package}" in phone.state.commands
        assert phone.state.packages[shipped.package].cert_sha256 == RELAY_KEY
        assert len(phone_relay.started) == 1
    finally:
        await layer.stop()


async def test_newer_relay_signed_with_our_key_is_kept_and_started(
    phone: FakePhone, lifecycle: RelayLifecycle, shipped: ShippedRelay
) -> None:
    preinstall_relay(phone, shipped, shipped.version_code + 1, RELAY_KEY, "our next build")
    before = await lifecycle.check(phone.serial)
    assert before.status is RelayStatus.NEWER and lifecycle.is_ours(before)
    outcome = await lifecycle.install(phone.serial)
    assert outcome.result is InstallResult.KEPT_NEWER and phone.state.installs == []


async def test_token_never_leaks_when_the_cable_is_pulled_during_am_start(
    adb_endpoint: AdbEndpoint, phone: FakePhone, shipped: ShippedRelay
) -> None:
    teach_phone(phone, shipped)
    android.pulls_cable_on(phone, "am", "start")
    layer = make_layer(adb_endpoint, shipped, [])
    try:
        with pytest.raises(DeviceError) as err:
            await layer.connect_relay(phone.serial)
    finally:
        await layer.stop()
    (cmd,) = [c for c in phone.state.commands if c.startswith("am start")]
    token = cmd.split()[-1]
    text = f"{err.value.message} {err.value.hint} {err.value!r}"
    assert all(token[i:i + 8] not in text for i in range(len(token) - 7)), text
    assert err.value.__cause__ is None and err.value.__context__ is None
    assert err.value.code == DEVICE_NOT_FOUND and "ended before the command answered" in text


# -- versions, booting, storage, prompts ----------------------------------------------------------
async def test_android_8_1_reads_the_version_without_show_versioncode(
    phone: FakePhone, lifecycle: RelayLifecycle, shipped: ShippedRelay
) -> None:
    android.android_version(phone, 27)
    teach_phone(phone, shipped)
    assert (await lifecycle.install(phone.serial)).result is InstallResult.INSTALLED
    assert (await lifecycle.install(phone.serial)).result is InstallResult.ALREADY_CURRENT
    assert len(phone.state.installs) == 1  # not reinstalled on every run
    assert f"dumpsys package {shipped.package}" in phone.state.commands


async def test_a_failing_pm_list_is_an_error_not_a_missing_relay(
    phone: FakePhone, lifecycle: RelayLifecycle, shipped: ShippedRelay
) -> None:
    async def broken(p: FakePhone, args: list[str]) -> tuple[str, int] | None:
        return ("Error: java.lang.RuntimeException: system server died\n", 255)

    phone.on_shell("pm", broken)
    phone.on_shell("dumpsys", broken)
    with pytest.raises(DeviceError) as err:
        await lifecycle.install(phone.serial)
    assert "Cannot tell whether the relay is installed" in err.value.message
    assert phone.state.installs == []


async def test_booting_phone_is_waited_for_then_used(
    adb_endpoint: AdbEndpoint, phone: FakePhone, phone_relay: PhoneRelay, shipped: ShippedRelay
) -> None:
    teach_phone(phone, shipped)
    android.booting(phone)
    notes: list[str] = []
    layer = make_layer(adb_endpoint, shipped, notes)
    layer.boot_wait_s = 1.5
    try:
        with pytest.raises(DeviceError) as err:
            await layer.connect_relay(phone.serial)
        assert err.value.code == DEVICE_BOOTING and "still starting" in err.value.message
        assert any("still starting" in n for n in notes)
        layer.boot_wait_s = 20
        asyncio.get_running_loop().call_later(1.0, android.finish_booting, phone)
        await layer.connect_relay(phone.serial)
        assert len(phone_relay.started) == 1
    finally:
        await layer.stop()


async def test_pm_saying_the_package_service_is_missing_means_booting(
    phone: FakePhone, lifecycle: RelayLifecycle
) -> None:
    android.booting(phone)
    with pytest.raises(DeviceError) as err:
        await lifecycle.install(phone.serial)
    assert err.value.code == DEVICE_BOOTING and "UNKNOWN" not in err.value.message


async def test_no_space_on_the_phone_is_reported_with_the_phones_reason(
    phone: FakePhone, lifecycle: RelayLifecycle, shipped: ShippedRelay
) -> None:
    teach_phone(phone, shipped)
    android.no_space(phone)
    with pytest.raises(DeviceError) as err:
        await lifecycle.install(phone.serial)
    assert err.value.code == INSTALL_FAILED
    assert "No space left on device" in err.value.message and "storage" in err.value.hint
    assert "restart adb" not in err.value.hint


async def test_install_prompt_is_announced_and_a_timeout_says_a_prompt_may_wait(
    phone: FakePhone, lifecycle: RelayLifecycle, shipped: ShippedRelay
) -> None:
    teach_phone(phone, shipped)
    android.install_prompt(phone, 1.5)
    notes: list[str] = []
    lifecycle.notify = notes.append
    lifecycle.prompt_notice_s = 0.3
    assert (await lifecycle.install(phone.serial)).result is InstallResult.INSTALLED
    assert len(notes) == 1 and "look at the phone" in notes[0]

    phone.state.packages.clear()
    android.install_prompt(phone, 60)
    lifecycle.install_timeout_s = 1.0
    with pytest.raises(DeviceError) as err:
        await lifecycle.install(phone.serial)
    assert err.value.code == INSTALL_NEEDS_CONFIRMATION
    assert "prompt may be waiting" in err.value.message and "cable" not in err.value.hint


async def test_cleanup_failure_does_not_hide_the_real_error(
    phone: FakePhone, lifecycle: RelayLifecycle, shipped: ShippedRelay
) -> None:
    teach_phone(phone, shipped)
    android.pulls_cable_on(phone, "pm", "install")
    with pytest.raises(DeviceError) as err:
        await lifecycle.install(phone.serial)
    assert "`pm`" in err.value.message and "`rm`" not in err.value.message


@pytest.mark.parametrize(
    ("rom", "setting"),
    [("miui", MIUI_SETTING), ("hyperos", MIUI_SETTING), ("coloros", COLOROS_SETTING),
     ("oxygenos", COLOROS_SETTING)],
)
async def test_vendor_grant_refusal_names_the_setting_to_change(
    phone: FakePhone, lifecycle: RelayLifecycle, shipped: ShippedRelay, rom: str, setting: str
) -> None:
    teach_phone(phone, shipped)
    android.vendor(phone, rom)
    await lifecycle.install(phone.serial)
    (info,) = [d for d in await AdbDevices(lifecycle.devices.endpoint).list_devices()
               if d.serial == phone.serial]
    assert info.grant_setting == setting
    (refused,) = await lifecycle.grant(phone.serial, 34, info.grant_setting)  # one, for all
    assert refused.code == "GRANT_REFUSED" and setting in refused.hint
    assert "pm grant" in refused.message and "SYSTEM_ALERT_WINDOW" in refused.message
    assert "java.lang.SecurityException: grantRuntimePermission" in refused.message
    assert "\n" not in refused.message and "Exception occurred" not in refused.message


async def test_stock_android_grant_refusal_points_to_the_settings_app(
    phone: FakePhone, lifecycle: RelayLifecycle, shipped: ShippedRelay
) -> None:
    teach_phone(phone, shipped)
    await lifecycle.install(phone.serial)

    async def refuse(p: FakePhone, args: list[str]) -> tuple[str, int] | None:
        return ("Exception occurred while executing 'grant':\n"
                "java.lang.IllegalArgumentException: no such permission\n", 255)

    phone.on_shell("pm", refuse)
    (refused,) = await lifecycle.grant(phone.serial, 34, None)
    assert "Settings → Apps → CETP Relay" in refused.hint


async def test_install_grants_runtime_permissions_with_g(
    phone: FakePhone, lifecycle: RelayLifecycle, shipped: ShippedRelay
) -> None:
    teach_phone(phone, shipped)
    await lifecycle.install(phone.serial)
    assert "-g" in phone.state.installs[0].flags
    assert not any(f.startswith(REMOTE_APK_PREFIX) for f in phone.state.files)


# -- start ------------------------------------------------------------------------------------
async def test_open_relay_task_brought_to_front_gets_the_session_through_its_service(
    adb_endpoint: AdbEndpoint, phone: FakePhone, phone_relay: PhoneRelay, shipped: ShippedRelay
) -> None:
    teach_phone(phone, shipped)
    android.screen(phone, android.PhoneScreen(relay_task_open=True))
    layer = make_layer(adb_endpoint, shipped, [])
    try:
        client = await layer.connect_relay(phone.serial)
        assert client.hello_info is not None
        link = layer.links[phone.serial]
        assert phone_relay.started == [(link.launch.socket_name, link.launch.token)]
        assert any(c.startswith("am start-foreground-service") for c in phone.state.commands)
    finally:
        await layer.stop()


async def test_forward_to_a_phone_that_went_away_names_the_cause(
    adb_endpoint: AdbEndpoint, phone: FakePhone
) -> None:
    from inspector.device.relay_lifecycle import RelayLaunch
    from inspector.device.relay_link import RelayLink

    devices = AdbDevices(adb_endpoint)
    launch = RelayLaunch(serial=phone.serial, package="p.q", socket_name="s", token="t" * 48)
    link = RelayLink(devices, launch)
    await asyncio.to_thread(phone.pull_cable)
    with pytest.raises(DeviceError) as err:
        await link.ensure_forward()
    assert "AdbError" not in err.value.message
    assert err.value.code in (DEVICE_NOT_FOUND, "DEVICE_NOT_READY")
    assert f"Forwarding the relay socket failed: {phone.serial} is" in err.value.message
    assert "lug" in err.value.hint  # Replug / Plug it in again


async def test_last_gate_refuses_a_foreign_relay_whatever_install_decided(
    adb_endpoint: AdbEndpoint, phone: FakePhone, phone_relay: PhoneRelay, shipped: ShippedRelay,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from inspector.device.errors import RELAY_NOT_OURS
    from inspector.device.relay_lifecycle import InstallOutcome

    preinstall_relay(phone, shipped, shipped.version_code + 1, "stranger")
    layer = make_layer(adb_endpoint, shipped, [])

    async def lenient_install(serial: str, *, confirm_uninstall: bool = False) -> InstallOutcome:
        before = await layer.lifecycle.check(serial)
        return InstallOutcome(result=InstallResult.KEPT_NEWER, message="kept", before=before)

    monkeypatch.setattr(layer.lifecycle, "install", lenient_install)
    try:
        with pytest.raises(DeviceError) as err:
            await layer.connect_relay(phone.serial)
    finally:
        await layer.stop()
    assert err.value.code == RELAY_NOT_OURS and "--allow-uninstall" in err.value.hint
    assert phone_relay.started == [] and not any("am start" in c for c in phone.state.commands)
