"""Device listing, properties and states through the real adb server and the fake phone."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

import adbutils
import pytest

from inspector.device.adb_server import AdbBinary, AdbEndpoint, ensure_server, kill_server
from inspector.device.devices import DESCRIBE_TIMEOUT_S, AdbDevices
from inspector.device.models import DeviceState
from tests.device import fakephone_android as android
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


def attach(endpoint: AdbEndpoint, phone: FakePhone) -> FakePhone:
    phone.start()
    assert connect_phone(endpoint, phone).startswith("connected")
    return phone


def detach(endpoint: AdbEndpoint, phone: FakePhone) -> None:
    with contextlib.suppress(Exception):
        adbutils.AdbClient(port=endpoint.port).disconnect(phone.serial)
    phone.stop()


async def test_a_phone_whose_getprop_never_answers_hides_no_other_phone(
    adb_endpoint: AdbEndpoint, phone: FakePhone
) -> None:
    wedged = attach(adb_endpoint, android.getprop_hangs(FakePhone()))
    try:
        start = time.monotonic()
        devices = {d.serial: d for d in await AdbDevices(adb_endpoint).list_devices()}
        took = time.monotonic() - start
        assert took < DESCRIBE_TIMEOUT_S + 3, took  # one deadline, not one per phone
        assert devices[phone.serial].model == "Fake Phone 7" and devices[phone.serial].error is None
        stuck = devices[wedged.serial]
        assert stuck.state is DeviceState.DEVICE and stuck.model is None
        assert stuck.error and f"did not answer within {DESCRIBE_TIMEOUT_S:g} s" in stuck.error
    finally:
        detach(adb_endpoint, wedged)


async def test_a_phone_vanishing_mid_listing_hides_no_other_phone(
    adb_endpoint: AdbEndpoint, phone: FakePhone
) -> None:
    leaving = attach(adb_endpoint, android.vanishes_on_getprop(FakePhone()))
    try:
        devices = {d.serial: d for d in await AdbDevices(adb_endpoint).list_devices()}
        assert devices[phone.serial].model == "Fake Phone 7"
        gone = devices[leaving.serial]  # listed with what happened, never silently dropped
        assert gone.model is None and gone.error
        assert "ended before the command answered" in gone.error
    finally:
        detach(adb_endpoint, leaving)
