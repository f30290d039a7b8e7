"""Device listing, properties and states through the real adb server and the fake phone."""

from __future__ import annotations

from pathlib import Path

import adbutils
import pytest

from inspector.device.adb_server import AdbBinary, AdbEndpoint, ensure_server, kill_server
from inspector.device.devices import AdbDevices
from inspector.device.models import DeviceState
from tests.device.conftest import connect_phone
from tests.device.fakephone import FakePhone, free_port

pytestmark = pytest.mark.adb


async def test_lists_the_phone_with_model_sdk_and_abi(
    adb_endpoint: AdbEndpoint, phone: FakePhone
) -> None:
    devices = await AdbDevices(adb_endpoint).list_devices()
    (info,) = [d for d in devices if d.serial == phone.serial]
    assert info.state is DeviceState.DEVICE and info.usable and info.hint == ""
    assert (info.model, info.manufacturer, info.sdk_int, info.release, info.abi) == (
        "Fake Phone 7",
        "Fakeco",
        34,
        "14",
        "arm64-v8a",
    )
    assert info.transport == "tcp"
    assert info.title == "Fakeco Fake Phone 7 (Android 14, API 34)"


async def test_unauthorized_phone_is_listed_with_what_to_do(adb_endpoint: AdbEndpoint) -> None:
    p = FakePhone(mode="unauthorized").start()
    try:
        assert "authenticate" in connect_phone(adb_endpoint, p)
        devices = await AdbDevices(adb_endpoint).list_devices()
        (info,) = [d for d in devices if d.serial == p.serial]
        assert info.state is DeviceState.UNAUTHORIZED and not info.usable
        assert "Allow USB debugging" in info.hint
        assert info.model is None  # nothing is read from a device that refused us
    finally:
        adbutils.AdbClient(port=adb_endpoint.port).disconnect(p.serial)
        p.stop()


async def test_the_adb_inside_the_adbutils_wheel_accepts_the_fake_phone_too() -> None:
    import adbutils as wheel

    bundled = AdbBinary(
        path=str(Path(wheel.__file__).parent / "binaries" / "adb"), source="bundled"
    )
    endpoint = AdbEndpoint(port=free_port())
    assert await ensure_server(endpoint, bundled) is True
    p = FakePhone().start()
    try:
        assert connect_phone(endpoint, p).startswith("connected")
        (info,) = await AdbDevices(endpoint).list_devices()
        assert (info.serial, info.model, info.sdk_int) == (p.serial, "Fake Phone 7", 34)
    finally:
        await kill_server(endpoint, bundled)
        p.stop()
    assert not endpoint.is_running()
