"""The device layer: adb devices, the relay APK's install/start, and relay connections.

Public entry point: `AdbDeviceLayer` (device snapshot + change events + `connect_relay`).
See docs/devices.md.
"""

from inspector.device.diagnostics import Diagnostic
from inspector.device.errors import DeviceError
from inspector.device.layer import AdbDeviceLayer
from inspector.device.models import DeviceChange, DeviceInfo, DeviceState
from inspector.device.relay_link import ConnectMode

__all__ = [
    "AdbDeviceLayer",
    "ConnectMode",
    "DeviceChange",
    "DeviceError",
    "DeviceInfo",
    "DeviceState",
    "Diagnostic",
]
