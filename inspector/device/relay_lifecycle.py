"""The relay app on a phone: check, install/upgrade, grant, start, and app process control.

Installing never silently removes a user's data: when Android refuses an in-place upgrade
(INSTALL_FAILED_UPDATE_INCOMPATIBLE: another signing key) the outcome is
`NEEDS_CONFIRMATION`, and only a caller that asked the user passes `confirm_uninstall=True`.
(adbutils' own `install()` uninstalls on that error, so it is not used here.)
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
import secrets
from collections.abc import Callable
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from inspector.device.apk_signers import fingerprint, signer_digests
from inspector.device.blocking import run_blocking
from inspector.device.devices import AdbDevices, ShellResult
from inspector.device.diagnostics import Diagnostic, grant_refusals
from inspector.device.errors import (
    APP_CONTROL_FAILED,
    DEVICE_BOOTING,
    INSTALL_FAILED,
    INSTALL_NEEDS_CONFIRMATION,
    RELAY_START_FAILED,
    SHELL_FAILED,
    TIMEOUT,
    DeviceError,
    bounded,
)
from inspector.device.shipped_relay import ShippedRelay, load_shipped_relay
from inspector.device.sync_push import SyncFailure, push_bytes

log = logging.getLogger(__name__)

# From docs/relay-apk.md ("Starting a session") and relay_apk/ sources;
# tests/device/test_units.py checks these against the relay sources so a rename fails here.
RELAY_ACTIVITY_CLASS = ".app.RelayActivity"
RELAY_SERVICE_CLASS = ".app.RelayService"
EXTRA_SOCKET = "org.cetp.inspector.relay.SOCKET"
EXTRA_TOKEN = "org.cetp.inspector.relay.TOKEN"
# Each install pushes to its own file: two installs at once (two inspector windows, the CLI
# beside the GUI) must not overwrite or `rm` each other's copy before `pm install` reads it.
REMOTE_APK_PREFIX = "/data/local/tmp/cetp-relay-"


def remote_apk_path() -> str:
    """A fresh path for one install's pushed APK (`cetp-relay-<8 hex>.apk`)."""
    return f"{REMOTE_APK_PREFIX}{secrets.token_hex(4)}.apk"

INSTALL_TIMEOUT_S = 120.0
# After this long without an answer, `pm install` is most likely held by a vendor's
# "install via USB?" prompt (MIUI, ColorOS, Vivo): tell the user to look at the phone.
INSTALL_PROMPT_NOTICE_S = 5.0
# `am start -W` waits for the launch to complete (ActivityManagerShellCommand
# `runStartActivity` → `startActivityAndWait`); with the screen off or a vendor launch
# animation held back it may never answer, though the activity (and our intent) is on its way.
AM_START_WAIT_S = 10.0
# `cmd` (behind `pm` since Android 7) while the package service is not up yet, i.e. the
# phone is still booting (frameworks/native/cmds/cmd/cmd.cpp).
BOOTING_MARK = "Can't find service: package"
# Am.java: START_TASK_TO_FRONT — the relay's task was already open, the new intent (with
# the new socket name and token) was NOT delivered.
TASK_TO_FRONT_MARK = "its current task has been brought to the front"

Notify = Callable[[str], None]


def new_session_token() -> str:
    """A fresh relay session token (hex: no shell quoting, docs/relay-apk.md).

    One function so the test suite can learn every token it generates and check that no
    piece of one ever reaches output, logs or journals (tests/conftest.py).
    """
    return secrets.token_hex(24)


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
    signers: tuple[str, ...] = ()  # SHA-256 of each signer certificate (apk_signers)


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


def booting_error(serial: str) -> DeviceError:
    return DeviceError(
        DEVICE_BOOTING,
        f"{serial} is still starting up (its package service is not running yet).",
        "Wait until the phone has finished booting and is unlocked, then retry.",
    )


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

    def __init__(
        self, devices: AdbDevices, shipped: ShippedRelay | None = None, notify: Notify | None = None
    ) -> None:
        self.devices = devices
        self._shipped = shipped
        self._shipped_signers: tuple[str, ...] | None = None
        #: told (one line for a person) when a step waits on the user, e.g. an install prompt
        self.notify = notify
        self.install_timeout_s = INSTALL_TIMEOUT_S
        self.prompt_notice_s = INSTALL_PROMPT_NOTICE_S
        self.am_start_wait_s = AM_START_WAIT_S

    @property
    def shipped(self) -> ShippedRelay:
        if self._shipped is None:
            self._shipped = load_shipped_relay()
        return self._shipped

    @property
    def shipped_signers(self) -> tuple[str, ...]:
        """Who signed the APK we ship (the only signer we hand a token to)."""
        if self._shipped_signers is None:
            self._shipped_signers = signer_digests(self.shipped.read_apk())
        return self._shipped_signers

    def _tell(self, text: str) -> None:
        log.info("%s", text)
        if self.notify is not None:
            self.notify(text)

    async def _pm(self, serial: str, argv: list[str], timeout: float | None = None) -> str:
        """Run a `pm`/`dumpsys` query; a booting phone or a failing command raises."""
        ret = await self.devices.shell(serial, argv, timeout=timeout)
        if BOOTING_MARK in ret.output:
            raise booting_error(serial)
        return ret.output

    async def installed_version(self, serial: str, pkg: str) -> int | None:
        """versionCode of `pkg`, None when it is not installed.

        `pm list packages --show-versioncode` exists from Android 9 (API 28); on 8.x pm
        answers "Unknown option", so `dumpsys package` (every API level) is asked then. A
        failing command is an error, never "not installed" (AOSP PackageManagerShellCommand).
        """
        ret = await self.devices.shell(
            serial, ["pm", "list", "packages", "--show-versioncode", pkg]
        )
        if BOOTING_MARK in ret.output:
            raise booting_error(serial)
        if ret.exit_code == 0 and "Error" not in ret.output:
            for line in ret.output.splitlines():
                m = re.fullmatch(r"package:(\S+) versionCode:(\d+)", line.strip())
                if m and m.group(1) == pkg:
                    return int(m.group(2))
            if not any(ln.strip() == f"package:{pkg}" for ln in ret.output.splitlines()):
                return None  # listed fine, and the relay is not among the packages
        else:
            # Android 8.x: no --show-versioncode. Plain `pm list packages PKG` (every API
            # level) tells whether it is installed; `dumpsys package` of a missing package
            # does not say so in a fixed way on every release and vendor.
            plain = await self.devices.shell(serial, ["pm", "list", "packages", pkg])
            listed = [ln.strip() for ln in plain.output.splitlines()]
            failed = "Error" in plain.output or "Exception" in plain.output
            if plain.exit_code == 0 and not failed and f"package:{pkg}" not in listed:
                return None
        dump = await self.devices.shell(serial, ["dumpsys", "package", pkg])
        if BOOTING_MARK in dump.output:
            raise booting_error(serial)
        m = re.search(
            rf"Package \[{re.escape(pkg)}\].*?versionCode=(\d+)", dump.output, re.S
        )
        if m:
            return int(m.group(1))
        missing = "Unable to find package" in dump.output or not dump.output.strip()
        if dump.exit_code == 0 and missing:
            return None
        raise DeviceError(
            SHELL_FAILED,
            f"Cannot tell whether the relay is installed on {serial}: `pm list packages` "
            f"answered {bounded(ret.output, 120)!r} (exit {ret.exit_code}) and `dumpsys "
            f"package` answered {bounded(dump.output, 120)!r} (exit {dump.exit_code}).",
            "Unlock the phone and retry; if it persists, reboot the phone.",
        )

    async def check(self, serial: str) -> InstalledRelay:
        """Is the relay installed, is it byte-for-byte the APK we ship, and who signed it?"""
        pkg = self.shipped.package
        version = await self.installed_version(serial, pkg)
        if version is None:
            return InstalledRelay(status=RelayStatus.MISSING)
        where = await self._pm(serial, ["pm", "path", pkg])
        paths = [ln[len("package:") :] for ln in where.splitlines() if ln.startswith("package:")]
        digest = None
        signers: tuple[str, ...] = ()
        if paths:
            dev = self.devices.device(serial)
            data = await run_blocking(
                dev.sync.read_bytes,
                paths[0],
                timeout=self.install_timeout_s,
                what="Reading the installed relay",
            )
            digest = hashlib.sha256(data).hexdigest()
            signers = signer_digests(data)
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
            signers=signers,
        )

    def is_ours(self, installed: InstalledRelay) -> bool:
        """Signed with the shipped relay's certificate(s)? (Unreadable → not ours.)"""
        return bool(installed.signers) and installed.signers == self.shipped_signers

    def trusted(self, outcome: InstallOutcome) -> bool:
        """May this relay get the session token? Only the shipped bytes (just installed or
        verified by digest) or a relay signed with the shipped relay's certificate."""
        if outcome.result in (
            InstallResult.ALREADY_CURRENT,
            InstallResult.INSTALLED,
            InstallResult.UPGRADED,
            InstallResult.REINSTALLED,
        ):
            return True
        return outcome.result is InstallResult.KEPT_NEWER and self.is_ours(outcome.before)

    def foreign_message(self, installed: InstalledRelay) -> str:
        theirs = ", ".join(fingerprint(d) for d in installed.signers) or "unreadable (no v2/v3 "\
            "signature)"
        ours = ", ".join(fingerprint(d) for d in self.shipped_signers) or "unknown"
        return (
            f"The relay on the phone (versionCode {installed.version_code}) is signed with "
            f"certificate SHA-256 {theirs}, not the inspector's ({ours}). The inspector "
            "will not hand its session token to it. Uninstalling it first removes that relay "
            "and its data on the phone. Uninstall it and install the shipped relay?"
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
        if before.status is RelayStatus.NEWER and self.is_ours(before):
            return InstallOutcome(
                result=InstallResult.KEPT_NEWER,
                before=before,
                message=f"The phone has a newer relay (versionCode {before.version_code}, "
                "signed with the inspector's key); kept it.",
            )
        if before.status is RelayStatus.NEWER and not confirm_uninstall:
            # A newer relay signed by someone else: never started with our token (issue 11).
            return InstallOutcome(
                result=InstallResult.NEEDS_CONFIRMATION,
                before=before,
                message=self.foreign_message(before),
            )
        remote = remote_apk_path()
        if before.status is RelayStatus.NEWER:
            await self._push(serial, remote)
            try:
                return await self._reinstall(serial, before, remote)
            finally:
                await self._cleanup(serial, remote)
        await self._push(serial, remote)
        try:
            out = await self._pm_install(serial, remote)
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
            return await self._reinstall(serial, before, remote)
        finally:
            await self._cleanup(serial, remote)

    async def _reinstall(
        self, serial: str, before: InstalledRelay, remote: str
    ) -> InstallOutcome:
        """The user agreed: uninstall the relay on the phone, install the shipped one."""
        shipped = self.shipped
        removed = await self.devices.shell(serial, ["pm", "uninstall", shipped.package])
        if "Success" not in removed.output:
            raise DeviceError(
                INSTALL_FAILED,
                f"Uninstalling the old relay failed: {bounded(removed.output, 200)}",
                "Uninstall org.cetp.inspector.relay on the phone by hand, then retry.",
            )
        out = await self._pm_install(serial, remote)
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

    async def _push(self, serial: str, remote: str) -> None:
        """Copy the APK to the phone; a refusal carries the phone's own reason."""
        apk = self.shipped.read_apk()
        dev = self.devices.device(serial)
        try:
            await run_blocking(
                push_bytes,
                dev,
                apk,
                remote,
                0o644,
                self.install_timeout_s,
                timeout=self.install_timeout_s,
                what="Copying the relay APK to the phone",
            )
        except DeviceError as e:
            cause = e.__cause__
            if not isinstance(cause, SyncFailure):
                raise
            hint = (
                "Free some storage on the phone (Settings → Storage) and retry."
                if "No space" in cause.reason
                else "Check the phone's storage and retry."
            )
            raise DeviceError(
                INSTALL_FAILED,
                f"The phone refused the relay APK ({len(apk)} bytes to {remote}): "
                f"{bounded(cause.reason, 200)}",
                hint,
            ) from None

    async def _cleanup(self, serial: str, remote: str) -> None:
        """Remove the pushed APK. Never masks the install's own outcome or error: when the
        phone went away meanwhile, the real failure is the one the user needs."""
        try:
            await self.devices.shell(serial, ["rm", "-f", remote])
        except DeviceError as e:
            log.info("could not remove %s on %s: %s", remote, serial, e)

    async def _pm_install(self, serial: str, remote: str) -> str:
        """`pm install -r -t -g` (-g grants the runtime permissions, e.g. POST_NOTIFICATIONS,
        at install: PackageManagerShellCommand). Tells the user to look at the phone when
        it takes longer than a prompt-free install would."""
        loop = asyncio.get_running_loop()
        notice = loop.call_later(
            self.prompt_notice_s,
            self._tell,
            f"Installing the relay on {serial} is waiting: look at the phone and confirm the "
            "install if it asks (Xiaomi, OPPO, vivo and others ask for installs over USB).",
        )
        try:
            ret = await self.devices.shell(
                serial,
                ["pm", "install", "-r", "-t", "-g", remote],
                timeout=self.install_timeout_s,
            )
        except DeviceError as e:
            if e.code != TIMEOUT:
                raise
            raise DeviceError(
                INSTALL_NEEDS_CONFIRMATION,
                f"`pm install` on {serial} did not answer within "
                f"{self.install_timeout_s:g} s: a confirmation prompt may be waiting on the "
                "phone.",
                'Unlock the phone, accept the install prompt (Xiaomi: also turn on Developer '
                'options → "Install via USB"), and retry.',
            ) from None
        finally:
            notice.cancel()
        if BOOTING_MARK in ret.output:
            raise booting_error(serial)
        lines = [ln.strip() for ln in ret.output.splitlines() if ln.strip()]
        if "Success" in lines:
            return "Success"
        return next(
            (ln for ln in lines if "Failure" in ln or "INSTALL_" in ln),
            ret.output.strip() or f"exit code {ret.exit_code}",
        )

    async def grant(
        self, serial: str, sdk_int: int | None, setting: str | None = None
    ) -> list[Diagnostic]:
        """Grant what adb can grant; what the phone refused comes back as diagnostics that
        name the vendor setting to change (`setting`: MIUI/HyperOS, ColorOS/OxygenOS, from
        `inspector.device.vendors`)."""
        refused: list[tuple[str, str]] = []
        pkg = self.shipped.package
        for min_sdk, template in RELAY_GRANTS:
            if sdk_int is not None and sdk_int < min_sdk:
                continue
            argv = [a.replace("{pkg}", pkg) for a in template]
            ret = await self.devices.shell(serial, argv)
            if ret.exit_code != 0 or "Exception" in ret.output or "Error" in ret.output:
                refused.append((" ".join(argv), ret.output))
        found = grant_refusals(refused, setting)
        for d in found:
            log.info("relay grant on %s: %s", serial, d.text())
        return found

    async def start(self, serial: str, *, headless: bool = False) -> RelayLaunch:
        """Start the relay with a fresh abstract socket name and token.

        The caller has made sure the installed relay is ours (`install` refuses to keep a
        relay signed by another key). When the relay's screen is already open, Android
        brings its task to the front WITHOUT delivering the new intent (and its token); the
        session is then delivered to the relay's service instead.
        """
        pkg = self.shipped.package
        launch = RelayLaunch(
            serial=serial,
            package=pkg,
            socket_name=f"cetp-relay-{secrets.token_hex(8)}",
            token=new_session_token(),
        )
        try:
            ret: ShellResult | None = await self.devices.shell(
                serial,
                relay_start_command(pkg, launch.socket_name, launch.token, headless=headless),
                timeout=self.am_start_wait_s,
                secrets=[launch.token],
            )
        except DeviceError as e:
            if e.code != TIMEOUT or headless:
                raise
            # The same socket name and token go to the service: whichever arrives first
            # opens the session, the other finds the same one.
            self._tell(
                f"`am start` on {serial} did not answer within {self.am_start_wait_s:g} s "
                "(the screen may be off or the launch held back); handing the session to "
                "the relay's service instead. Unlock the phone to see the relay's screen."
            )
            ret = None
        if not headless and (ret is None or TASK_TO_FRONT_MARK in ret.output):
            log.info("relay activity did not take the session on %s; delivering it to the "
                     "relay's service", serial)
            ret = await self.devices.shell(
                serial,
                relay_start_command(pkg, launch.socket_name, launch.token, headless=True),
                secrets=[launch.token],
            )
        assert ret is not None  # a headless start that failed has raised above
        # shell() has blanked the token out of the output and any error text.
        text = ret.output
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
