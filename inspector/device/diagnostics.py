"""Why the relay (or a provider app) on a phone cannot do its job: read through adb shell.

Each check runs one shell command and parses what Android prints; each names its AOSP source.
A check that cannot run (old Android, vendor quirk, timeout) yields nothing rather than
guessing. `Diagnostic` is what the CLI (`devices`, `providers`) and the GUI's device view
show; docs/devices.md has the table of situations → messages.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Sequence

from pydantic import BaseModel, ConfigDict

from inspector.device.devices import AdbDevices
from inspector.device.errors import DeviceError, bounded

CHECK_TIMEOUT_S = 5.0

KEYGUARD_LOCKED = "KEYGUARD_LOCKED"
RELAY_NOT_FOREGROUND = "RELAY_NOT_FOREGROUND"
OVERLAY_NOT_GRANTED = "OVERLAY_NOT_GRANTED"
GRANT_REFUSED = "GRANT_REFUSED"
RELAY_KILLED = "RELAY_KILLED"
APP_STOPPED = "APP_STOPPED"
APP_RESTRICTED = "APP_RESTRICTED"


class Diagnostic(BaseModel):
    """One thing on the phone that explains (or will explain) a failure."""

    model_config = ConfigDict(frozen=True)

    code: str
    message: str
    hint: str = ""

    def text(self) -> str:
        return f"{self.message} {self.hint}".strip()


def refusal_reason(output: str) -> str:
    """The line of a shell refusal that says why (the exception, not the preamble)."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    for ln in lines:
        if "Exception" in ln and not ln.startswith("Exception occurred while executing"):
            return bounded(ln.removeprefix("Error: "), 200)
    return bounded(lines[0] if lines else "no output", 200)


def grant_refusals(refused: list[tuple[str, str]], setting: str | None) -> list[Diagnostic]:
    """Refused `pm grant` / `appops set` commands ((command, output) pairs) as ONE
    diagnostic, with the vendor setting to change when the ROM is known."""
    if not refused:
        return []
    security = any("SecurityException" in out for _, out in refused)
    hint = (
        f"Turn on {setting}, then reconnect the relay."
        if setting and security
        else "Grant it on the phone (Settings → Apps → CETP Relay → Permissions), then "
        "reconnect the relay."
    )
    commands = "; ".join(f"`{cmd}`" for cmd, _ in refused)
    return [Diagnostic(
        code=GRANT_REFUSED,
        message=f"The phone refused {commands}: {refusal_reason(refused[0][1])}",
        hint=hint,
    )]


# -- parsers (pure: unit-tested with Android's own texts) -----------------------------------
def parse_keyguard(text: str) -> bool | None:
    """KeyguardController dump (`dumpsys activity activities`, Android 10+:
    "mKeyguardShowing=true"); PhoneWindowManager (`dumpsys window`, 8–9:
    "mShowingLockscreen=true" / "isStatusBarKeyguard=true")."""
    for key in ("mKeyguardShowing", "mShowingLockscreen", "isStatusBarKeyguard"):
        m = re.search(rf"\b{key}=(true|false)\b", text)
        if m:
            return m.group(1) == "true"
    return None


def parse_foreground(text: str) -> bool | None:
    """ServiceRecord dump in `dumpsys activity services PKG`: "isForeground=true"; None when
    the service is not running at all."""
    found = re.findall(r"\bisForeground=(true|false)\b", text)
    if not found:
        return None
    return "true" in found


def parse_exit_info(text: str) -> str | None:
    """The newest ApplicationExitInfo (`dumpsys activity exit-info PKG`, Android 11+,
    AppExitInfoTracker.dump): "reason=… description=…" of record #0."""
    m = re.search(r"ApplicationExitInfo #0:(.*?)(?:ApplicationExitInfo #1:|\Z)", text, re.S)
    if not m:
        return None
    block = m.group(1)
    reason = re.search(r"reason=([^\n]+)", block)
    desc = re.search(r"description=([^\n]+)", block)
    stamp = re.search(r"timestamp=(\S+ \S+)", block)
    parts = [reason.group(1).strip() if reason else "unknown reason"]
    if desc:
        parts.append(desc.group(1).strip())
    if stamp:
        parts.append(f"at {stamp.group(1)}")
    return bounded(", ".join(parts), 200)


def parse_stopped(text: str) -> bool | None:
    """`dumpsys package PKG` user line: "stopped=true" (PackageUserState)."""
    m = re.search(r"\bstopped=(true|false)\b", text)
    return None if m is None else m.group(1) == "true"


# UsageStatsManager.STANDBY_BUCKET_* (API 28+); RESTRICTED (45) from API 30.
BUCKETS = {5: "exempted", 10: "active", 20: "working_set", 30: "frequent", 40: "rare",
           45: "restricted", 50: "never"}


def parse_bucket(text: str) -> int | None:
    m = re.search(r"^\s*(\d+)\s*$", text, re.M)
    return int(m.group(1)) if m else None


# -- checks over adb ---------------------------------------------------------------------------
class PhoneChecks:
    """Runs the diagnostics on one phone (each command with a short deadline)."""

    def __init__(self, devices: AdbDevices, serial: str, sdk_int: int | None) -> None:
        self.devices = devices
        self.serial = serial
        self.sdk = sdk_int or 0

    async def _out(self, argv: Sequence[str]) -> str | None:
        try:
            ret = await self.devices.shell(self.serial, argv, timeout=CHECK_TIMEOUT_S)
        except DeviceError:
            return None
        return ret.output if ret.exit_code == 0 else None

    async def keyguard_locked(self) -> bool | None:
        text = await self._out(["dumpsys", "activity", "activities"])
        locked = parse_keyguard(text or "")
        if locked is None:
            locked = parse_keyguard(await self._out(["dumpsys", "window", "policy"]) or "")
        return locked

    async def keyguard(self) -> list[Diagnostic]:
        if await self.keyguard_locked():
            return [Diagnostic(
                code=KEYGUARD_LOCKED,
                message="The phone is locked: the relay's screen and provider confirmations "
                "cannot show.",
                hint="Unlock the phone (and keep it unlocked while you inspect).",
            )]
        return []

    async def relay_foreground(self, package: str) -> list[Diagnostic]:
        fg = parse_foreground(await self._out(["dumpsys", "activity", "services", package]) or "")
        if fg is False:
            return [Diagnostic(
                code=RELAY_NOT_FOREGROUND,
                message="The relay's service is running but not as a foreground service, so "
                "Android may stop it at any time.",
                hint="Allow the relay's notification (Android 13+: Settings → Apps → CETP "
                "Relay → Notifications) and reconnect.",
            )]
        return []

    async def overlay(self, package: str) -> list[Diagnostic]:
        text = await self._out(["appops", "get", package, "SYSTEM_ALERT_WINDOW"])
        if text is not None and "allow" not in text:
            return [Diagnostic(
                code=OVERLAY_NOT_GRANTED,
                message="The relay may not draw over other apps, so Android can refuse its "
                "background activity starts (provider confirmations, wake by launch).",
                hint="Settings → Apps → CETP Relay → Display over other apps → Allow.",
            )]
        return []

    async def last_exit(self, package: str) -> list[Diagnostic]:
        if self.sdk and self.sdk < 30:
            return []  # ApplicationExitInfo exists from Android 11 (API 30)
        reason = parse_exit_info(
            await self._out(["dumpsys", "activity", "exit-info", package]) or ""
        )
        if reason is None:
            return []
        return [Diagnostic(
            code=RELAY_KILLED,
            message=f"The relay process last ended: {reason}.",
            hint="A crash or ANR: reinstall the relay; a low-memory or user kill: keep the "
            "relay's screen open and the phone plugged in.",
        )]

    async def app_state(self, package: str) -> list[Diagnostic]:
        """The target app stopped (broadcasts skip it) or in a restricted standby bucket."""
        found: list[Diagnostic] = []
        if parse_stopped(await self._out(["dumpsys", "package", package]) or ""):
            found.append(Diagnostic(
                code=APP_STOPPED,
                message=f"{package} is in the stopped state (never opened since install, or "
                "force-stopped): Android skips it for broadcasts.",
                hint="Open the app once on the phone, or use wake (launch).",
            ))
        if not self.sdk or self.sdk >= 28:  # app standby buckets: API 28+
            bucket = parse_bucket(await self._out(["am", "get-standby-bucket", package]) or "")
            if bucket is not None and bucket >= 40:
                found.append(Diagnostic(
                    code=APP_RESTRICTED,
                    message=f"{package} is in the {BUCKETS.get(bucket, str(bucket))} standby "
                    "bucket: Android delays or refuses its background work.",
                    hint="Open the app on the phone, or Settings → Apps → it → Battery → "
                    "Unrestricted.",
                ))
        return found


async def gather_checks(
    checks: Sequence[Callable[[], Awaitable[list[Diagnostic]]]], timeout: float
) -> list[Diagnostic]:
    """Run checks concurrently; any that fail or overrun are skipped (never invented)."""

    async def one(check: Callable[[], Awaitable[list[Diagnostic]]]) -> list[Diagnostic]:
        try:
            return await asyncio.wait_for(check(), timeout)
        except (DeviceError, TimeoutError):
            return []

    results = await asyncio.gather(*(one(c) for c in checks))
    return [d for r in results for d in r]
