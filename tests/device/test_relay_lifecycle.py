"""Relay install/upgrade/start and app control through real adb and the fake phone."""

from __future__ import annotations

import pytest

from inspector.device.adb_server import AdbEndpoint
from inspector.device.devices import AdbDevices
from inspector.device.errors import APP_CONTROL_FAILED, INSTALL_FAILED, DeviceError
from inspector.device.relay_lifecycle import (
    REMOTE_APK_PREFIX,
    InstallResult,
    RelayLifecycle,
    RelayStatus,
)
from inspector.device.shipped_relay import ShippedRelay
from tests.device.fakephone import FakePhone, InstalledPackage
from tests.device.tiny_relay import RELAY_KEY, preinstall_relay, teach_phone

pytestmark = pytest.mark.adb


@pytest.fixture
def lifecycle(adb_endpoint: AdbEndpoint, shipped: ShippedRelay) -> RelayLifecycle:
    return RelayLifecycle(AdbDevices(adb_endpoint), shipped)


def preinstall(phone: FakePhone, shipped: ShippedRelay, version: int, cert: str) -> None:
    preinstall_relay(phone, shipped, version, cert)


async def test_fresh_install_pushes_exactly_the_shipped_apk(
    phone: FakePhone, lifecycle: RelayLifecycle, shipped: ShippedRelay
) -> None:
    teach_phone(phone, shipped)
    assert (await lifecycle.check(phone.serial)).status is RelayStatus.MISSING
    outcome = await lifecycle.install(phone.serial)
    assert outcome.result is InstallResult.INSTALLED
    (install,) = phone.state.installs
    assert install.apk == shipped.apk_path.read_bytes()
    assert install.path.startswith(REMOTE_APK_PREFIX) and "-r" in install.flags
    assert install.path not in phone.state.files  # the pushed copy is cleaned up
    after = await lifecycle.check(phone.serial)
    assert after.status is RelayStatus.CURRENT and after.version_code == shipped.version_code
    assert after.apk_sha256 == shipped.sha256  # pulled back from `pm path` and hashed
    again = await lifecycle.install(phone.serial)
    assert again.result is InstallResult.ALREADY_CURRENT
    assert len(phone.state.installs) == 1


async def test_older_relay_with_same_key_is_upgraded_in_place(
    phone: FakePhone, lifecycle: RelayLifecycle, shipped: ShippedRelay
) -> None:
    teach_phone(phone, shipped)
    preinstall(phone, shipped, shipped.version_code - 1, RELAY_KEY)
    assert (await lifecycle.check(phone.serial)).status is RelayStatus.OLDER
    outcome = await lifecycle.install(phone.serial)
    assert outcome.result is InstallResult.UPGRADED
    assert not any(c.startswith("pm uninstall") for c in phone.state.commands)


async def test_other_signing_key_needs_confirmation_before_uninstall(
    phone: FakePhone, lifecycle: RelayLifecycle, shipped: ShippedRelay
) -> None:
    teach_phone(phone, shipped)
    preinstall(phone, shipped, shipped.version_code, "someone-elses-key")
    assert (await lifecycle.check(phone.serial)).status is RelayStatus.DIFFERENT_BUILD
    outcome = await lifecycle.install(phone.serial)
    assert outcome.result is InstallResult.NEEDS_CONFIRMATION
    assert "different key" in outcome.message and "data" in outcome.message
    assert phone.state.packages[shipped.package].cert_sha256 == "someone-elses-key"
    assert not any(c.startswith("pm uninstall") for c in phone.state.commands)

    confirmed = await lifecycle.install(phone.serial, confirm_uninstall=True)
    assert confirmed.result is InstallResult.REINSTALLED
    assert phone.state.packages[shipped.package].cert_sha256 == RELAY_KEY
    assert f"pm uninstall {shipped.package}" in phone.state.commands


async def test_newer_relay_on_the_phone_is_kept(
    phone: FakePhone, lifecycle: RelayLifecycle, shipped: ShippedRelay
) -> None:
    preinstall(phone, shipped, shipped.version_code + 5, RELAY_KEY)
    outcome = await lifecycle.install(phone.serial)
    assert outcome.result is InstallResult.KEPT_NEWER
    assert phone.state.installs == []


async def test_refused_install_says_what_to_do(
    phone: FakePhone, lifecycle: RelayLifecycle, shipped: ShippedRelay
) -> None:
    teach_phone(phone, shipped)
    phone.state.next_install_failure = (
        "Failure [INSTALL_FAILED_USER_RESTRICTED: Install canceled by user]"
    )
    with pytest.raises(DeviceError) as err:
        await lifecycle.install(phone.serial)
    assert err.value.code == INSTALL_FAILED
    assert "INSTALL_FAILED_USER_RESTRICTED" in err.value.message
    assert "Install via USB" in err.value.hint


async def test_grants_and_start_command_carry_fresh_socket_and_token(
    phone: FakePhone, lifecycle: RelayLifecycle, shipped: ShippedRelay
) -> None:
    teach_phone(phone, shipped)
    await lifecycle.install(phone.serial)
    assert await lifecycle.grant(phone.serial, 34) == []
    assert (shipped.package, "android.permission.POST_NOTIFICATIONS") in phone.state.grants
    assert (shipped.package, "SYSTEM_ALERT_WINDOW", "allow") in phone.state.appops
    first = await lifecycle.start(phone.serial)
    second = await lifecycle.start(phone.serial)
    assert first.socket_name != second.socket_name and first.token != second.token
    assert len(first.token) >= 32 and first.token not in repr(first)
    assert all(c in "0123456789abcdef" for c in first.token)
    expected = (
        f"am start -W -n {shipped.package}/.app.RelayActivity "
        f"--es org.cetp.inspector.relay.SOCKET {first.socket_name} "
        f"--es org.cetp.inspector.relay.TOKEN {first.token}"
    )
    assert expected in phone.state.commands
    assert phone.state.started[0] == f"{shipped.package}/.app.RelayActivity"
    headless = await lifecycle.start(phone.serial, headless=True)
    assert (
        f"am start-foreground-service -n {shipped.package}/.app.RelayService "
        f"--es org.cetp.inspector.relay.SOCKET {headless.socket_name} "
        f"--es org.cetp.inspector.relay.TOKEN {headless.token}"
    ) in phone.state.commands


async def test_start_failure_is_reported_without_the_token(
    phone: FakePhone, lifecycle: RelayLifecycle
) -> None:
    with pytest.raises(DeviceError) as err:  # relay not installed: "Error type 3 …"
        await lifecycle.start(phone.serial)
    assert "did not start" in err.value.message and "does not exist" in err.value.message


async def test_force_stop_and_restart_a_provider_app(
    phone: FakePhone, lifecycle: RelayLifecycle
) -> None:
    phone.state.packages["com.example.tools"] = InstalledPackage(
        "com.example.tools", 7, "1.0", "k", b"apk", launch_activity=".MainActivity"
    )
    await lifecycle.force_stop(phone.serial, "com.example.tools")
    assert phone.state.force_stopped == ["com.example.tools"]
    comp = await lifecycle.restart(phone.serial, "com.example.tools")
    assert comp == "com.example.tools/.MainActivity"
    assert phone.state.force_stopped == ["com.example.tools"] * 2
    assert phone.state.started == [comp]

    phone.state.packages["com.example.headless"] = InstalledPackage(
        "com.example.headless", 1, "1", "k", b"apk"
    )
    with pytest.raises(DeviceError, match="no launcher activity"):
        await lifecycle.restart(phone.serial, "com.example.headless")
    with pytest.raises(DeviceError) as err:  # untrusted text never reaches the shell
        await lifecycle.force_stop(phone.serial, "x; reboot")
    assert err.value.code == APP_CONTROL_FAILED
    assert not any("reboot" in c for c in phone.state.commands)
