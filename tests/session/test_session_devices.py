"""DeviceManager: the virtual device first, adb devices merged, the default choice."""

from __future__ import annotations

import pytest

from inspector.relay.api import RelayApi
from inspector.session.devices import (
    VIRTUAL_SERIAL,
    DeviceInfo,
    DeviceManager,
    VirtualConfig,
    parse_socket_spec,
)
from inspector.session.errors import InspectorError


class FakeAdb:
    def __init__(self, devices: list[DeviceInfo], fail: bool = False) -> None:
        self.devices = devices
        self.fail = fail
        self.connected: list[str] = []

    async def list_devices(self) -> list[DeviceInfo]:
        if self.fail:
            raise RuntimeError("adb server not running")
        return self.devices

    async def connect_relay(self, serial: str) -> RelayApi:
        self.connected.append(serial)
        raise InspectorError("DEVICE_NOT_READY", f"{serial} is offline")


def phone(serial: str, usable: bool = True) -> DeviceInfo:
    return DeviceInfo(serial=serial, kind="adb", state="device" if usable else "unauthorized",
                      usable=usable)


async def test_virtual_is_always_first_and_default_without_phones() -> None:
    m = DeviceManager(adb=FakeAdb([]))
    devices = await m.refresh()
    assert [d.serial for d in devices] == [VIRTUAL_SERIAL]
    assert await m.default_serial() == VIRTUAL_SERIAL


async def test_the_only_usable_phone_is_the_default() -> None:
    m = DeviceManager(adb=FakeAdb([phone("R58M"), phone("X1", usable=False)]))
    seen: list[list[str]] = []
    m.add_listener(lambda ds: seen.append([d.serial for d in ds]))
    await m.refresh()
    assert seen == [[VIRTUAL_SERIAL, "R58M", "X1"]]
    assert await m.default_serial() == "R58M"


async def test_two_phones_means_the_virtual_device_by_default() -> None:
    m = DeviceManager(adb=FakeAdb([phone("A"), phone("B")]))
    assert await m.default_serial() == VIRTUAL_SERIAL


async def test_commands_never_fall_back_silently() -> None:
    """Issue 11: the virtual device only when no phone is attached, and then with a note."""
    assert await DeviceManager(adb=FakeAdb([])).choose_default() == (
        VIRTUAL_SERIAL, "no phone is attached; using the virtual device")
    assert await DeviceManager(adb=FakeAdb([phone("A"), phone("X", usable=False)])
                               ).choose_default() == ("A", "")
    with pytest.raises(InspectorError) as err:
        await DeviceManager(adb=FakeAdb([phone("A"), phone("B")])).choose_default()
    assert err.value.code == "TOO_MANY_DEVICES"
    assert "A" in err.value.message and "B" in err.value.message and "-d" in err.value.hint
    lone = phone("U", usable=False)
    lone.message = "accept the prompt"
    with pytest.raises(InspectorError) as err:
        await DeviceManager(adb=FakeAdb([lone])).choose_default()
    assert err.value.code == "DEVICE_NOT_READY" and "unauthorized" in err.value.message
    assert err.value.hint == "accept the prompt"
    serial, note = await DeviceManager(adb=FakeAdb([], fail=True)).choose_default()
    assert serial == VIRTUAL_SERIAL and "adb server not running" in note


async def test_adb_failure_keeps_the_virtual_device() -> None:
    m = DeviceManager(adb=FakeAdb([], fail=True))
    assert [d.serial for d in await m.refresh()] == [VIRTUAL_SERIAL]
    assert "adb server not running" in m.adb_error


async def test_connector_for_adb_serial_uses_the_adb_layer() -> None:
    adb = FakeAdb([phone("R58M")])
    m = DeviceManager(adb=adb)
    with pytest.raises(InspectorError):
        await m.connector("R58M")()
    assert adb.connected == ["R58M"]


async def test_no_adb_means_a_clear_error_for_phone_serials() -> None:
    m = DeviceManager(use_adb=False)
    with pytest.raises(InspectorError) as err:
        m.connector("R58M")
    assert err.value.code == "NO_DEVICE" and "-d virtual" in err.value.hint


def test_relay_socket_is_shown_as_a_relay() -> None:
    m = DeviceManager(VirtualConfig(relay_socket="unix:/tmp/x.sock", token="t"), use_adb=False)
    info = m.virtual_info()
    assert info.kind == "relay" and "unix:/tmp/x.sock" in info.model


def test_socket_specs() -> None:
    assert parse_socket_spec("unix:/tmp/a") == ("unix", "/tmp/a", 0)
    assert parse_socket_spec("tcp:127.0.0.1:9000") == ("tcp", "127.0.0.1", 9000)
    for bad in ("tcp:127.0.0.1", "udp:x", "unix:"):
        with pytest.raises(InspectorError):
            parse_socket_spec(bad)


class FakeLayer:
    """The slice of `inspector.device.layer.AdbDeviceLayer` hot-plug tracking uses."""

    def __init__(self) -> None:
        from inspector.device.models import DeviceInfo as AdbInfo
        from inspector.device.models import DeviceState

        self.AdbInfo, self.DeviceState = AdbInfo, DeviceState
        self.devices: list = []
        self.listeners: list = []
        self.started = self.stopped = False

    def add_listener(self, listener) -> None:  # type: ignore[no-untyped-def]
        self.listeners.append(listener)

    def start(self) -> None:
        self.started = True

    async def stop(self) -> None:
        self.stopped = True

    def snapshot(self) -> list:
        return list(self.devices)

    def plug(self, serial: str, state: str = "device") -> None:
        self.devices.append(self.AdbInfo(serial=serial, state=self.DeviceState(state),
                                         raw_state=state, transport="usb", model="Pixel 8",
                                         sdk_int=34, release="14"))
        for listener in self.listeners:
            listener(object())


async def test_hotplug_tracking_notifies_listeners() -> None:
    from inspector.session.devices import AdbLayerSource

    layer = FakeLayer()
    m = DeviceManager(adb=AdbLayerSource(layer))
    seen: list[list[tuple[str, bool]]] = []
    m.add_listener(lambda ds: seen.append([(d.serial, d.usable) for d in ds]))
    assert m.start_tracking() and layer.started
    layer.plug("R58M")
    layer.plug("X1", "unauthorized")
    assert seen[-1] == [(VIRTUAL_SERIAL, True), ("R58M", True), ("X1", False)]
    row = m.devices[1]
    assert row.kind == "adb" and row.sdk == 34 and "Pixel 8" in row.model
    assert "USB debugging" in m.devices[2].message
    await m.close()
    assert layer.stopped


def test_tracking_without_adb_is_refused() -> None:
    assert DeviceManager(use_adb=False).start_tracking() is False
