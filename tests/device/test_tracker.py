"""Hot-plug tracking through `host:track-devices` on the real adb server."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from inspector.device.adb_server import AdbEndpoint, kill_server
from inspector.device.devices import AdbDevices, DeviceTracker
from inspector.device.models import DeviceChange, DeviceState
from tests.device import fakephone_android as android
from tests.device.conftest import connect_phone, poll_until
from tests.device.fakephone import FakePhone, free_port

pytestmark = pytest.mark.adb


async def test_tracker_follows_plug_cable_pull_and_disconnect(adb_endpoint: AdbEndpoint) -> None:
    devices = AdbDevices(adb_endpoint)
    tracker = DeviceTracker(devices)
    events: list[DeviceChange] = []
    tracker.add_listener(events.append)
    tracker.start()
    p = FakePhone().start()
    try:
        await asyncio.to_thread(connect_phone, adb_endpoint, p)
        await tracker.wait_for_state(p.serial, DeviceState.DEVICE, 10)
        await tracker.wait_for(lambda ds: any(d.serial == p.serial and d.model for d in ds), 10)
        info = tracker.get(p.serial)
        assert info is not None
        assert (info.model, info.sdk_int, info.abi) == ("Fake Phone 7", 34, "arm64-v8a")
        assert any(e.kind == "added" and e.device.serial == p.serial for e in events)

        await asyncio.to_thread(p.pull_cable)
        info = await tracker.wait_for_state(p.serial, DeviceState.OFFLINE, 10)
        assert "Replug the cable" in info.hint and info.model is None

        p.plug_cable()
        await devices.connect_network(p.serial)
        await tracker.wait_for(lambda ds: any(d.serial == p.serial and d.release for d in ds), 10)
        info = tracker.get(p.serial)
        assert info is not None and info.release == "14"

        await devices.disconnect_network(p.serial)
        await tracker.wait_for(lambda devs: p.serial not in {d.serial for d in devs}, 10)
        assert events[-1].kind == "removed" and events[-1].device.serial == p.serial
    finally:
        await tracker.stop()
        p.stop()


async def test_offline_device_is_listed_with_what_to_do(adb_endpoint: AdbEndpoint) -> None:
    p = FakePhone(mode="offline").start()  # accepts TCP, never answers the handshake
    try:
        assert connect_phone(adb_endpoint, p, timeout=1.0) == "timeout"
        devices = AdbDevices(adb_endpoint)
        states = dict(await devices.list_states())
        info = await devices.describe(p.serial, states[p.serial])
        assert info.state is DeviceState.OFFLINE and not info.usable
        assert "adb kill-server" in info.hint
    finally:
        await AdbDevices(adb_endpoint).disconnect_network(p.serial)
        p.stop()


async def test_tracker_starts_adb_and_recovers_from_a_server_restart() -> None:
    endpoint = AdbEndpoint(port=free_port())  # a second private server, not running yet
    assert not endpoint.is_running()
    tracker = DeviceTracker(AdbDevices(endpoint), retry_interval=0.1)
    events: list[DeviceChange] = []
    tracker.add_listener(events.append)
    tracker.start()
    p = FakePhone().start()
    try:
        await poll_until(endpoint.is_running, 20, "the tracker to start the adb server")
        await asyncio.to_thread(connect_phone, endpoint, p)
        await tracker.wait_for_state(p.serial, DeviceState.DEVICE, 10)

        await kill_server(endpoint)
        await tracker.wait_for(lambda devs: devs == [], 10)  # everything reported gone
        assert (events[-1].kind, events[-1].device.serial) == ("removed", p.serial)
        await poll_until(endpoint.is_running, 20, "the tracker to restart the adb server")
        await asyncio.to_thread(connect_phone, endpoint, p)
        await tracker.wait_for_state(p.serial, DeviceState.DEVICE, 10)
        assert tracker.last_error is None
    finally:
        await tracker.stop()
        await kill_server(endpoint)
        p.stop()


async def test_tracker_never_waits_on_a_wedged_phone(adb_endpoint: AdbEndpoint) -> None:
    tracker = DeviceTracker(AdbDevices(adb_endpoint))
    tracker.start()
    wedged = android.getprop_hangs(FakePhone()).start()
    good = FakePhone().start()
    try:
        await asyncio.to_thread(connect_phone, adb_endpoint, wedged)
        await tracker.wait_for_state(wedged.serial, DeviceState.DEVICE, 10)
        await asyncio.to_thread(connect_phone, adb_endpoint, good)
        await tracker.wait_for(lambda ds: any(d.serial == good.serial and d.model for d in ds), 10)
        stuck = tracker.get(wedged.serial)  # its facts are still being waited for: the good
        assert stuck is not None and stuck.state is DeviceState.DEVICE  # phone came first
        assert stuck.error is None and stuck.model is None
        await tracker.wait_for(
            lambda ds: any(d.serial == wedged.serial and d.error for d in ds), 10
        )  # the wedged phone ends up listed with what went wrong
    finally:
        await tracker.stop()
        for p in (wedged, good):
            with contextlib.suppress(Exception):
                await AdbDevices(adb_endpoint).disconnect_network(p.serial)
            p.stop()


async def test_tracker_shows_unauthorized_as_adb_devices_does(adb_endpoint: AdbEndpoint) -> None:
    """adb 29's track-devices misses the switch to `unauthorized`; polling reconciles."""
    tracker = DeviceTracker(AdbDevices(adb_endpoint), poll_interval=0.5)
    tracker.start()
    p = FakePhone(mode="unauthorized").start()
    try:
        await asyncio.to_thread(connect_phone, adb_endpoint, p)
        states = dict(await AdbDevices(adb_endpoint).list_states())
        assert states[p.serial] == "unauthorized"
        info = await tracker.wait_for_state(p.serial, DeviceState.UNAUTHORIZED, 10)
        assert "Allow USB debugging" in info.hint
    finally:
        await tracker.stop()
        with contextlib.suppress(Exception):
            await AdbDevices(adb_endpoint).disconnect_network(p.serial)
        p.stop()


async def test_the_adbutils_wheel_adb_reports_unauthorized_on_track_devices() -> None:
    """Why polling is needed only for adb 29 (docs/devices.md "Which adb"): the wheel's adb
    reports the switch to `unauthorized` on track-devices alone (polling switched off)."""
    from pathlib import Path

    import adbutils

    from inspector.device.adb_server import AdbBinary, ensure_server

    wheel = AdbBinary(path=str(Path(adbutils.__file__).parent / "binaries" / "adb"),
                      source="bundled")
    endpoint = AdbEndpoint(port=free_port())
    await ensure_server(endpoint, wheel)
    tracker = DeviceTracker(AdbDevices(endpoint), poll_interval=3600, start_server=False)
    tracker.start()
    p = FakePhone(mode="unauthorized").start()
    try:
        await asyncio.to_thread(connect_phone, endpoint, p)
        await tracker.wait_for_state(p.serial, DeviceState.UNAUTHORIZED, 10)
    finally:
        await tracker.stop()
        await kill_server(endpoint, wheel)
        p.stop()


async def test_a_sleepy_phone_gets_its_name_once_it_answers(adb_endpoint: AdbEndpoint) -> None:
    """Its first `getprop` outlasts the deadline: listed with an error, then (on a later
    poll) with its model; before, it stayed nameless until replugged."""
    tracker = DeviceTracker(AdbDevices(adb_endpoint), poll_interval=0.3)
    tracker.start()
    sleepy = android.getprop_slow_first(FakePhone(), 6.0).start()
    try:
        await asyncio.to_thread(connect_phone, adb_endpoint, sleepy)
        await tracker.wait_for(
            lambda ds: any(d.serial == sleepy.serial and d.error for d in ds), 10
        )
        assert "wake it" in (tracker.get(sleepy.serial).error or "")
        await tracker.wait_for(
            lambda ds: any(d.serial == sleepy.serial and d.model and not d.error for d in ds), 5
        )
    finally:
        await tracker.stop()
        with contextlib.suppress(Exception):
            await AdbDevices(adb_endpoint).disconnect_network(sleepy.serial)
        sleepy.stop()
