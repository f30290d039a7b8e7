"""The device view shows a phone's diagnostics (issue 10 part 3) as plain-text tooltips, read
through the real adb server from the fake phone answering as a locked MIUI phone would."""

from __future__ import annotations

import pytest

from inspector.device.adb_server import AdbEndpoint
from inspector.device.layer import AdbDeviceLayer
from inspector.device.shipped_relay import ShippedRelay
from inspector.session.devices import AdbLayerSource, DeviceInfo
from inspector.ui.navigator import NavigatorModel
from tests.device import fakephone_android as android
from tests.device.conftest import adb_endpoint, phone, run_async, shipped  # noqa: F401
from tests.device.fakephone import FakePhone
from tests.device.tiny_relay import PhoneRelay, teach_phone

pytestmark = [pytest.mark.gui, pytest.mark.adb]


def test_locked_miui_phone_explains_itself_in_the_device_view(
    qapp: object, adb_endpoint: AdbEndpoint, phone: FakePhone,  # noqa: F811
    shipped: ShippedRelay,  # noqa: F811
) -> None:
    teach_phone(phone, shipped)
    relay = PhoneRelay(phone)
    android.vendor(phone, "miui")
    android.screen(phone, android.PhoneScreen(keyguard=True))

    async def list_after_connect() -> list[DeviceInfo]:
        layer = AdbDeviceLayer(adb_endpoint, shipped=shipped)
        source = AdbLayerSource(layer)
        try:
            await source.connect_relay(phone.serial)
            return [r for r in await source.list_devices() if r.serial == phone.serial]
        finally:
            await layer.stop()

    try:  # the adb work on its own loop: the GUI tests' qasync loop is not driven here
        rows = run_async(list_after_connect())
    finally:
        phone.call(relay.close())
    model = NavigatorModel()
    model.set_devices(rows, {})
    item = model.item(0, 0)
    tip = item.toolTip()
    assert "The phone is locked" in tip
    assert 'USB debugging (Security settings)' in tip  # the refused grant, with the setting


def test_diagnostic_tooltips_are_never_rich_text(qapp: object) -> None:
    d = DeviceInfo(serial="X1", kind="adb", model="Phone", diagnostics=[
        {"code": "RELAY_KILLED", "message": "<b>bold</b> <img src=x>", "hint": ""}])
    model = NavigatorModel()
    model.set_devices([d], {})
    tip = model.item(0, 0).toolTip()
    assert "bold" in tip and "<" not in tip
