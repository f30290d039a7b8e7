"""adb hot-plug in the window: phones appear and disappear in the navigator with their relay
state, and an unusable phone says what to do (a fake `AdbSource`, a second virtual device
playing the phone's relay)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from inspector.relay.api import RelayApi
from inspector.session.devices import DeviceInfo
from inspector.tasks import spawn
from inspector.ui.navigator import Role
from inspector.virtual import VirtualDevice
from inspector.virtual.inprocess import connect_virtual_device
from tests.ui.fixtures import Harness

pytestmark = pytest.mark.gui

UNAUTHORIZED_HINT = "Accept the 'Allow USB debugging?' prompt on the phone, then press F5"


class FakeAdb:
    """An `AdbSource` whose device list the test edits; its phone is a virtual device."""

    def __init__(self, phone: VirtualDevice) -> None:
        self.phone = phone
        self.listed: list[DeviceInfo] = []
        self.connects: list[str] = []

    async def list_devices(self) -> list[DeviceInfo]:
        return list(self.listed)

    async def connect_relay(self, serial: str) -> RelayApi:
        self.connects.append(serial)
        if serial not in {d.serial for d in self.listed if d.usable}:
            raise RuntimeError(f"device {serial} not found")
        return await connect_virtual_device(self.phone, events=True)


PIXEL = DeviceInfo(serial="PIXEL8", kind="adb", model="Pixel 8", sdk=34, release="14")
LOCKED = DeviceInfo(
    serial="LOCKED1", kind="adb", state="unauthorized", model="", usable=False,
    message=UNAUTHORIZED_HINT,
)


@pytest.fixture
def adb_source(tmp_path: Path, qtbot) -> Iterator[FakeAdb]:
    fake = FakeAdb(VirtualDevice(tmp_path / "phone"))
    yield fake
    closing = spawn(fake.phone.aclose(), "test-phone-close")
    qtbot.waitUntil(closing.done, timeout=10_000)


def rows(h: Harness) -> dict[str, tuple[str, list[str]]]:
    """serial → (badge, child labels) as the navigator shows them."""
    m = h.window.navigator.model
    out = {}
    for r in range(m.rowCount()):
        dev = m.item(r, 0)
        kids = [dev.child(c, 0).text() for c in range(dev.rowCount())]
        out[dev.data(Role.SERIAL)] = (m.item(r, 1).text(), kids)
    return out


def test_phone_plugged_connected_unplugged_and_back(harness: Harness, adb_source: FakeAdb):
    w = harness.window
    assert set(rows(harness)) == {"virtual"}

    adb_source.listed = [PIXEL]
    w.rescan()  # F5; the window's timer does the same every 3 s with a real adb
    harness.wait(lambda: "PIXEL8" in rows(harness))
    assert rows(harness)["PIXEL8"][0] == "disconnected"  # listed, relay not yet connected
    assert list(rows(harness)) == ["virtual", "PIXEL8"]  # the virtual device stays first

    assert w.navigator.select_device("PIXEL8")
    harness.wait(lambda: rows(harness)["PIXEL8"][0] == "connected")
    harness.wait(lambda: "Price Alerts" in rows(harness)["PIXEL8"][1])  # its own discovery
    assert adb_source.connects == ["PIXEL8"]
    assert w.current_serial == "PIXEL8"
    assert "PIXEL8: connected" in w._link_label.text()

    adb_source.listed = []  # cable pulled
    w.rescan()
    harness.wait(lambda: rows(harness).get("PIXEL8", ("",))[0] == "unplugged")
    assert harness.controller.device("PIXEL8").session is not None  # the session is kept

    adb_source.listed = [PIXEL]  # plugged back in
    w.rescan()
    harness.wait(lambda: rows(harness)["PIXEL8"][0] == "connected")
    assert not w.last_error, w.last_error


def test_unauthorized_phone_says_what_to_do_and_goes_away(harness: Harness, adb_source: FakeAdb):
    w = harness.window
    adb_source.listed = [LOCKED]
    w.rescan()
    harness.wait(lambda: "LOCKED1" in rows(harness))
    badge, kids = rows(harness)["LOCKED1"]
    assert badge == "unauthorized"
    assert kids == [f"⚠ {UNAUTHORIZED_HINT}"]  # visible without hovering
    dev = w.navigator.model.item(1, 0)
    assert UNAUTHORIZED_HINT in dev.toolTip()

    assert w.navigator.select_device("LOCKED1")  # clicking it explains instead of connecting
    harness.wait(lambda: bool(w.last_error))
    assert "LOCKED1 is not usable" in w.last_error and UNAUTHORIZED_HINT in w.last_error
    assert adb_source.connects == []

    adb_source.listed = [LOCKED.model_copy(update={"state": "device", "usable": True,
                                                   "message": ""})]
    w.rescan()  # the user accepted the prompt
    harness.wait(lambda: rows(harness)["LOCKED1"][0] == "disconnected")
    assert rows(harness)["LOCKED1"][1] == []  # the hint is gone
    assert w.navigator.model.item(1, 0).toolTip() == ""

    adb_source.listed = []  # never connected, so unplugging drops the row entirely
    w.rescan()
    harness.wait(lambda: "LOCKED1" not in rows(harness))


def test_offline_phone_has_a_default_hint(harness: Harness, adb_source: FakeAdb):
    adb_source.listed = [DeviceInfo(serial="OFF1", kind="adb", state="offline", usable=False)]
    harness.window.rescan()
    harness.wait(lambda: "OFF1" in rows(harness))
    badge, kids = rows(harness)["OFF1"]
    assert badge == "offline"
    assert kids and kids[0].startswith("⚠ the device is offline")
