"""The relay app on a phone: check, install/upgrade, grant, start, and app process control.

Installing never silently removes a user's data: when Android refuses an in-place upgrade
(INSTALL_FAILED_UPDATE_INCOMPATIBLE: another signing key) the outcome is
`NEEDS_CONFIRMATION`, and only a caller that asked the user passes `confirm_uninstall=True`.
(adbutils' own `install()` uninstalls on that error, so it is not used here.)
"""

from __future__ import annotations

import hashlib
import logging
import re
import secrets
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from inspector.device.blocking import run_blocking
from inspector.device.devices import AdbDevices
from inspector.device.errors import (
    APP_CONTROL_FAILED,
    INSTALL_FAILED,
    RELAY_START_FAILED,
    DeviceError,
    bounded,
)
from inspector.device.shipped_relay import ShippedRelay, load_shipped_relay

log = logging.getLogger(__name__)

# From docs/relay-apk.md ("Starting a session") and relay_apk/ sources;
# tests/device/test_units.py checks these against the relay sources so a rename fails here.
RELAY_ACTIVITY_CLASS = ".app.RelayActivity"
RELAY_SERVICE_CLASS = ".app.RelayService"
EXTRA_SOCKET = "org.cetp.inspector.relay.SOCKET"
EXTRA_TOKEN = "org.cetp.inspector.relay.TOKEN"
REMOTE_APK_PATH = "/data/local/tmp/cetp-relay.apk"
INSTALL_TIMEOUT_S = 120.0


def relay_start_command(
    package: str, socket_name: str, token: str, *, headless: bool = False
) -> list[str]:
    """The one place that knows how the relay is started from adb shell.

    Default: the relay Activity (it starts the foreground service and stays as the resumed
    activity PendingIntents are launched from). `headless`: the service alone, no screen.
    """
    if headless:
        start = ["am", "start-foreground-service", "-n", f"{package}/{RELAY_SERVICE_CLASS}"]
    else:
        start = ["am", "start", "-W", "-n", f"{package}/{RELAY_ACTIVITY_CLASS}"]
    return [*start, "--es", EXTRA_SOCKET, socket_name, "--es", EXTRA_TOKEN, token]


def relay_bring_forward_command(package: str) -> list[str]:
    """The relay screen to the front, no extras (shell is exempt from background-start limits):
    for ops the relay answered NEEDS_FOREGROUND (docs/relay-protocol.md §6)."""
    return ["am", "start", "-W", "-n", f"{package}/{RELAY_ACTIVITY_CLASS}"]


# (minimum SDK, command after the package is substituted for {pkg}); best effort each.
RELAY_GRANTS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (33, ("pm", "grant", "{pkg}", "android.permission.POST_NOTIFICATIONS")),
    # Lets the relay's Activity come to the front to launch PendingIntents (BAL exemption).
    (26, ("appops", "set", "{pkg}", "SYSTEM_ALERT_WINDOW", "allow")),
    (28, ("appops", "set", "{pkg}", "RUN_ANY_IN_BACKGROUND", "allow")),
)

INSTALL_FAILURE_HINTS: dict[str, str] = {
    "INSTALL_FAILED_INSUFFICIENT_STORAGE": "Free some storage on the phone and retry.",
    "INSTALL_FAILED_USER_RESTRICTED": "Allow installs over USB: Developer options → "
    '"Install via USB" (Xiaomi/MIUI and some others need this).',
    "INSTALL_FAILED_VERIFICATION_FAILURE": 'Turn off Developer options → "Verify apps over '
    'USB", or approve the install on the phone.',
    "INSTALL_FAILED_OLDER_SDK": "The relay needs Android 8.0 (API 26) or newer.",
    "INSTALL_FAILED_VERSION_DOWNGRADE": "The phone has a newer relay; uninstall it first.",
    "INSTALL_FAILED_TEST_ONLY": "The relay APK is marked test-only; rebuild it.",
    "INSTALL_PARSE_FAILED_NOT_APK": "The APK did not arrive intact; retry the install.",
    "INSTALL_FAILED_ABORTED": "The install was cancelled on the phone; retry and accept it.",
}

PACKAGE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)+$")


class RelayStatus(StrEnum):
    MISSING = "missing"
    CURRENT = "current"  # the exact APK the inspector ships
    OLDER = "older"
    NEWER = "newer"
    DIFFERENT_BUILD = "different_build"  # same version, other bytes (own build, other key)


class InstalledRelay(BaseModel):
    model_config = ConfigDict(frozen=True)

    status: RelayStatus
    version_code: int | None = None
    apk_sha256: str | None = None
    path: str | None = None


class InstallResult(StrEnum):
    ALREADY_CURRENT = "already_current"
    KEPT_NEWER = "kept_newer"
    INSTALLED = "installed"
    UPGRADED = "upgraded"
    REINSTALLED = "reinstalled"  # after a confirmed uninstall
    NEEDS_CONFIRMATION = "needs_confirmation"


class InstallOutcome(BaseModel):
    model_config = ConfigDict(frozen=True)

    result: InstallResult
    message: str
    before: InstalledRelay


class RelayLaunch(BaseModel):
    """A started relay: where it listens and the token it expects (never logged)."""

    model_config = ConfigDict(frozen=True)

    serial: str
    package: str
    socket_name: str
    token: str = Field(repr=False)


def _failure_code(output: str) -> str:
    m = re.search(r"\[?(INSTALL_[A-Z_]+|DELETE_[A-Z_]+)", output)
    return m.group(1) if m else "UNKNOWN"


def check_package_name(package: str) -> str:
    """Package names may come from providers (untrusted): accept only valid names."""
    if not PACKAGE_NAME.match(package) or len(package) > 255:
        raise DeviceError(
            APP_CONTROL_FAILED,
            f"{bounded(package, 80)!r} is not an Android package name.",
            "Pick the package from the discovered list.",
        )
    return package


class RelayLifecycle:
    """Everything the inspector does to the relay app through adb (one phone at a time)."""

    def __init__(self, devices: AdbDevices, shipped: ShippedRelay | None = None) -> None:
        self.devices = devices
        self._shipped = shipped

    @property
    def shipped(self) -> ShippedRelay:
        if self._shipped is None:
            self._shipped = load_shipped_relay()
        return self._shipped

    async def check(self, serial: str) -> InstalledRelay:
        """Is the relay installed, and is it byte-for-byte the APK we ship?"""
        pkg = self.shipped.package
        listed = await self.devices.shell(
            serial, ["pm", "list", "packages", "--show-versioncode", pkg]
        )
        version: int | None = None
        for line in listed.output.splitlines():
            m = re.fullmatch(r"package:(\S+) versionCode:(\d+)", line.strip())
            if m and m.group(1) == pkg:
                version = int(m.group(2))
        if version is None:
            return InstalledRelay(status=RelayStatus.MISSING)
        where = await self.devices.shell(serial, ["pm", "path", pkg])
        paths = [
            ln[len("package:") :] for ln in where.output.splitlines() if ln.startswith("package:")
        ]
        digest = None
        if paths:
            dev = self.devices.device(serial)
            data = await run_blocking(
                dev.sync.read_bytes,
                paths[0],
                timeout=INSTALL_TIMEOUT_S,
                what="Reading the installed relay",
            )
            digest = hashlib.sha256(data).hexdigest()
        shipped = self.shipped
        if digest == shipped.sha256:
            status = RelayStatus.CURRENT
        elif version < shipped.version_code:
            status = RelayStatus.OLDER
        elif version > shipped.version_code:
            status = RelayStatus.NEWER
        else:
            status = RelayStatus.DIFFERENT_BUILD
        return InstalledRelay(
            status=status,
            version_code=version,
            apk_sha256=digest,
            path=paths[0] if paths else None,
        )

    async def install(self, serial: str, *, confirm_uninstall: bool = False) -> InstallOutcome:
        """Install or upgrade the shipped relay; see the module docstring about uninstalls."""
        before = await self.check(serial)
        shipped = self.shipped
        if before.status is RelayStatus.CURRENT:
            return InstallOutcome(
                result=InstallResult.ALREADY_CURRENT,
                before=before,
                message=f"Relay {shipped.version_name} is installed.",
            )
        if before.status is RelayStatus.NEWER:
            return InstallOutcome(
                result=InstallResult.KEPT_NEWER,
                before=before,
                message=f"The phone has a newer relay (versionCode {before.version_code}); "
                "kept it.",
            )
        apk = shipped.read_apk()
        dev = self.devices.device(serial)
        await run_blocking(
            dev.sync.push,
            apk,
            REMOTE_APK_PATH,
            0o644,
            timeout=INSTALL_TIMEOUT_S,
            what="Copying the relay APK to the phone",
        )
        try:
            out = await self._pm_install(serial)
            if out == "Success":
                result = (
                    InstallResult.INSTALLED
                    if before.status is RelayStatus.MISSING
                    else InstallResult.UPGRADED
                )
                return InstallOutcome(
                    result=result, before=before, message=f"Relay {shipped.version_name} installed."
                )
            code = _failure_code(out)
            if code != "INSTALL_FAILED_UPDATE_INCOMPATIBLE":
                raise DeviceError(
                    INSTALL_FAILED,
                    f"Android refused the relay install: {code} ({bounded(out, 200)}).",
                    INSTALL_FAILURE_HINTS.get(code, "Check the phone's screen and retry."),
                )
            if not confirm_uninstall:
                return InstallOutcome(
                    result=InstallResult.NEEDS_CONFIRMATION,
                    before=before,
                    message="The relay on the phone is signed with a different key, so "
                    "Android cannot upgrade it in place. Uninstalling it first removes that "
                    "relay and its data on the phone. Uninstall and install the shipped "
                    "relay?",
                )
            removed = await self.devices.shell(serial, ["pm", "uninstall", shipped.package])
            if "Success" not in removed.output:
                raise DeviceError(
                    INSTALL_FAILED,
                    f"Uninstalling the old relay failed: {bounded(removed.output, 200)}",
                    "Uninstall org.cetp.inspector.relay on the phone by hand, then retry.",
                )
            out = await self._pm_install(serial)
            if out != "Success":
                code = _failure_code(out)
                raise DeviceError(
                    INSTALL_FAILED,
                    f"Installing the relay failed: {code} ({bounded(out, 200)}).",
                    INSTALL_FAILURE_HINTS.get(code, "Check the phone's screen and retry."),
                )
            return InstallOutcome(
                result=InstallResult.REINSTALLED,
                before=before,
                message="The old relay was uninstalled and the shipped relay installed.",
            )
        finally:
            await self.devices.shell(serial, ["rm", "-f", REMOTE_APK_PATH])

    async def _pm_install(self, serial: str) -> str:
        ret = await self.devices.shell(
            serial, ["pm", "install", "-r", "-t", REMOTE_APK_PATH], timeout=INSTALL_TIMEOUT_S
        )
        lines = [ln.strip() for ln in ret.output.splitlines() if ln.strip()]
        if "Success" in lines:
            return "Success"
        return next(
            (ln for ln in lines if "Failure" in ln or "INSTALL_" in ln),
            ret.output.strip() or f"exit code {ret.exit_code}",
        )

    async def grant(self, serial: str, sdk_int: int | None) -> list[str]:
        """Grant what adb can grant; returns readable warnings for what did not work."""
        warnings = []
        pkg = self.shipped.package
        for min_sdk, template in RELAY_GRANTS:
            if sdk_int is not None and sdk_int < min_sdk:
                continue
            argv = [a.replace("{pkg}", pkg) for a in template]
            ret = await self.devices.shell(serial, argv)
            if ret.exit_code != 0 or "Exception" in ret.output or "Error" in ret.output:
                warnings.append(f"`{' '.join(argv)}` failed: {bounded(ret.output, 160)}")
        for w in warnings:
            log.info("relay grant on %s: %s", serial, w)
        return warnings

    async def start(self, serial: str, *, headless: bool = False) -> RelayLaunch:
        """Start the relay with a fresh abstract socket name and token."""
        pkg = self.shipped.package
        launch = RelayLaunch(
            serial=serial,
            package=pkg,
            socket_name=f"cetp-relay-{secrets.token_hex(8)}",
            token=secrets.token_hex(24),  # hex: no shell quoting (docs/relay-apk.md)
        )
        ret = await self.devices.shell(
            serial,
            relay_start_command(pkg, launch.socket_name, launch.token, headless=headless),
            secrets=[launch.token],
        )
        # Never echo the command line (it holds the token); the output does not.
        text = ret.output.replace(launch.token, "<token>")
        if ret.exit_code != 0 or "Error" in text or "Exception" in text:
            raise DeviceError(
                RELAY_START_FAILED,
                f"The relay did not start: {bounded(text, 240)}",
                "Reinstall the relay from the inspector; on Android 14+ make sure the phone "
                "is unlocked.",
            )
        return launch

    async def stop(self, serial: str) -> None:
        await self.force_stop(serial, self.shipped.package)

    async def force_stop(self, serial: str, package: str) -> None:
        """`am force-stop`: kills the app's processes (restart-recovery checks)."""
        ret = await self.devices.shell(serial, ["am", "force-stop", check_package_name(package)])
        if ret.exit_code != 0:
            raise DeviceError(
                APP_CONTROL_FAILED,
                f"force-stop {package} failed: {bounded(ret.output, 200)}",
                "Is the package installed?",
            )

    async def restart(self, serial: str, package: str) -> str:
        """Force-stop the app, then start its launcher activity; returns the component."""
        await self.force_stop(serial, package)
        resolved = await self.devices.shell(
            serial, ["cmd", "package", "resolve-activity", "--brief", package]
        )
        comps = [
            ln.strip()
            for ln in resolved.output.splitlines()
            if ln.strip().startswith(package + "/")
        ]
        if not comps:
            raise DeviceError(
                APP_CONTROL_FAILED,
                f"{package} has no launcher activity to restart it with.",
                "It was stopped; Android restarts a provider when it is next called (use wake).",
            )
        ret = await self.devices.shell(serial, ["am", "start", "-n", comps[-1]])
        if ret.exit_code != 0 or "Error" in ret.output:
            raise DeviceError(
                APP_CONTROL_FAILED,
                f"Starting {comps[-1]} failed: {bounded(ret.output, 200)}",
                "Unlock the phone and retry.",
            )
        return comps[-1]
