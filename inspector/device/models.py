"""What the device layer tells the rest of the inspector about attached devices."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict


class DeviceState(StrEnum):
    """adb's transport states, folded into what a user can act on."""

    DEVICE = "device"
    UNAUTHORIZED = "unauthorized"
    AUTHORIZING = "authorizing"
    CONNECTING = "connecting"
    OFFLINE = "offline"
    NO_PERMISSIONS = "no_permissions"
    RECOVERY = "recovery"
    SIDELOAD = "sideload"
    BOOTLOADER = "bootloader"
    UNKNOWN = "unknown"


STATE_HINTS: dict[DeviceState, str] = {
    DeviceState.DEVICE: "",
    DeviceState.UNAUTHORIZED: 'Unlock the phone and accept the "Allow USB debugging?" prompt '
    '(tick "Always allow"). No prompt? Revoke USB debugging authorisations in Developer '
    "options and replug the cable.",
    DeviceState.AUTHORIZING: "Waiting for the phone to confirm this computer's key; unlock it.",
    DeviceState.CONNECTING: "adb is still connecting; wait a moment.",
    DeviceState.OFFLINE: "The device is attached but not answering adb. Replug the cable, "
    "unlock the phone, or run `adb kill-server` and retry; for a Wi-Fi device `adb connect` it "
    "again.",
    DeviceState.NO_PERMISSIONS: "This user may not open the USB device. On Linux add a udev "
    "rule for the phone (Debian/Ubuntu: `sudo apt install android-sdk-platform-tools-common`) "
    "and make sure you are in the plugdev group, then replug.",
    DeviceState.RECOVERY: "The device is in recovery mode; reboot it normally.",
    DeviceState.SIDELOAD: "The device is in sideload mode; reboot it normally.",
    DeviceState.BOOTLOADER: "The device is in the bootloader; reboot it normally.",
    DeviceState.UNKNOWN: "adb reports an unexpected state; replug the device or restart adb.",
}


def parse_state(raw: str) -> DeviceState:
    """adb's state text (e.g. "no permissions (user in plugdev group; …)") → DeviceState."""
    low = raw.strip().lower()
    if low.startswith("no permissions"):
        return DeviceState.NO_PERMISSIONS
    if low in ("host",):
        return DeviceState.DEVICE
    try:
        return DeviceState(low)
    except ValueError:
        return DeviceState.UNKNOWN


class DeviceInfo(BaseModel):
    """One adb device as listed: identity, state and (when online) build facts."""

    model_config = ConfigDict(frozen=True)

    serial: str
    state: DeviceState
    raw_state: str
    transport: Literal["usb", "tcp", "emulator"]
    model: str | None = None
    manufacturer: str | None = None
    sdk_int: int | None = None
    release: str | None = None
    abi: str | None = None
    booted: bool | None = None  # sys.boot_completed == 1 (None: not read)
    grant_setting: str | None = None  # vendor switch adb grants need (inspector.device.vendors)
    error: str | None = None  # why its facts could not be read (listing goes on without)

    @property
    def usable(self) -> bool:
        return self.state is DeviceState.DEVICE

    @property
    def hint(self) -> str:
        """What the user should do before this device can be inspected ("" when usable)."""
        return STATE_HINTS[self.state]

    @property
    def title(self) -> str:
        """A short label for lists: model (or serial) and Android version."""
        name = " ".join(x for x in (self.manufacturer, self.model) if x) or self.serial
        if self.release and self.sdk_int:
            return f"{name} (Android {self.release}, API {self.sdk_int})"
        return name


class DeviceChange(BaseModel):
    """A hot-plug event: a device appeared, changed state or went away."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["added", "changed", "removed"]
    device: DeviceInfo


def transport_of(serial: str) -> Literal["usb", "tcp", "emulator"]:
    if serial.startswith("emulator-"):
        return "emulator"
    if ":" in serial and not serial.startswith("usb:"):
        return "tcp"
    return "usb"
