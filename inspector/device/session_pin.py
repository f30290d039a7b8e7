"""Keep the relay alive while a session runs, and put the phone back as it was after.

While the inspector is connected, the relay is put in the `active` app-standby bucket
(`am set-standby-bucket`, API 28+, UsageStatsService) and on the Doze allowlist
(`cmd deviceidle whitelist +PKG`, DeviceIdleController), so Android neither defers its
work nor cuts its network/CPU in Doze. Both are undone when the session ends: the bucket
goes back to what it was, and the allowlist entry is removed only if this session added it.
Each step is best effort (a vendor ROM may refuse): a refusal is logged, never fatal.
"""

from __future__ import annotations

import logging

from inspector.device.devices import AdbDevices
from inspector.device.diagnostics import parse_bucket
from inspector.device.errors import DeviceError

log = logging.getLogger(__name__)

PIN_TIMEOUT_S = 5.0


class SessionPin:
    """The bucket/allowlist changes made for one relay session on one phone."""

    def __init__(self, devices: AdbDevices, serial: str, package: str, sdk_int: int | None):
        self.devices = devices
        self.serial = serial
        self.package = package
        self.sdk = sdk_int or 0
        self.previous_bucket: int | None = None
        self.added_to_allowlist = False

    async def _run(self, argv: list[str]) -> str | None:
        try:
            ret = await self.devices.shell(self.serial, argv, timeout=PIN_TIMEOUT_S)
        except DeviceError as e:
            log.info("%s on %s failed: %s", " ".join(argv), self.serial, e)
            return None
        if ret.exit_code != 0 or "Exception" in ret.output or "Error" in ret.output:
            log.info("%s on %s refused: %s", " ".join(argv), self.serial, ret.output[:200])
            return None
        return ret.output

    async def apply(self) -> None:
        if self.sdk >= 28:
            got = await self._run(["am", "get-standby-bucket", self.package])
            prev = parse_bucket(got or "")
            active = ["am", "set-standby-bucket", self.package, "active"]
            if prev is not None and prev != 10 and await self._run(active) is not None:
                self.previous_bucket = prev
        listed = await self._run(["cmd", "deviceidle", "whitelist"])
        if listed is not None and self.package not in listed:
            added = await self._run(["cmd", "deviceidle", "whitelist", f"+{self.package}"])
            self.added_to_allowlist = added is not None

    async def undo(self) -> None:
        if self.previous_bucket is not None:
            await self._run(
                ["am", "set-standby-bucket", self.package, str(self.previous_bucket)]
            )
            self.previous_bucket = None
        if self.added_to_allowlist:
            await self._run(["cmd", "deviceidle", "whitelist", f"-{self.package}"])
            self.added_to_allowlist = False
