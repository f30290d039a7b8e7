"""The bridge on a phone: a real adb server and a fake phone whose relay serves the virtual
device's apps (tests/device), driven by the official MCP Python SDK client over HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from inspector.device.adb_server import AdbEndpoint
from inspector.device.layer import AdbDeviceLayer
from inspector.device.shipped_relay import ShippedRelay
from inspector.mcp.bridge import BridgeOptions
from inspector.session.devices import AdbLayerSource, DeviceManager
from inspector.session.journal import read_journal
from inspector.session.session import Session
from inspector.virtual.device import VirtualDevice
from tests.device.conftest import adb_endpoint, phone, shipped  # noqa: F401  (fixtures)
from tests.device.fakephone import FakePhone
from tests.device.tiny_relay import PhoneRelay, teach_phone
from tests.mcp.factories import serve_bridge, texts

pytestmark = [pytest.mark.adb, pytest.mark.timeout(120)]
ACME_QUOTE = 101.25


async def _virtual() -> VirtualDevice:
    return VirtualDevice()


@pytest.fixture
def phone_apps(phone: FakePhone, shipped: ShippedRelay  # noqa: F811
               ) -> Iterator[tuple[FakePhone, VirtualDevice]]:
    device = phone.call(_virtual())
    relay = PhoneRelay(phone, backend=device)
    teach_phone(phone, shipped)
    yield phone, device
    phone.call(relay.close())
    phone.call(device.aclose())


async def test_bridge_through_adb_and_the_relay(
        adb_endpoint: AdbEndpoint, shipped: ShippedRelay,  # noqa: F811
        phone_apps: tuple[FakePhone, VirtualDevice], home: Path) -> None:
    fake, device = phone_apps
    answers: list[str] = []

    def person_on_the_phone(req: Any) -> bool:  # the phone's user taps "Approve"
        answers.append(req.title)
        return True

    device.confirmation_handler = person_on_the_phone
    layer = AdbDeviceLayer(adb_endpoint, shipped=shipped)
    manager = DeviceManager(adb=AdbLayerSource(layer))
    session = Session(fake.serial, manager.connector(fake.serial))
    progress: list[str] = []

    async def on_progress(_p: float, _t: float | None, msg: str | None) -> None:
        progress.append(msg or "")

    try:
        await session.open()
        opts = BridgeOptions(allow_mutations=["create_alert", "delete_alert"])
        async with serve_bridge(session, home, opts) as hb, hb.client() as client:
            names = {t.name for t in (await client.list_tools()).tools}
            quote = await client.call_tool("p_pricealerts__get_quote", {"symbol": "ACME"})
            created = await client.call_tool("p_pricealerts__create_alert",
                                             {"symbol": "ACME", "price": ACME_QUOTE})
            alert = json.loads(texts(created))["alert_id"]
            deleted = await client.call_tool("p_pricealerts__delete_alert",
                                             {"alert_id": alert},
                                             progress_callback=on_progress)
            ext = await client.call_tool("x_hello_world__greet", {"name": "Ada"})
            notes = read_journal(hb.journal.path).records_of("mcp")
    finally:
        await session.close()
        await manager.close()
        await layer.stop()
    assert {"p_pricealerts__get_quote", "x_hello_world__greet"} <= names
    assert not quote.isError and quote.structuredContent["symbol"] == "ACME"
    assert not deleted.isError, texts(deleted)
    assert answers  # answered on the phone's screen, not by the bridge
    assert any(m.startswith("confirm on the phone") for m in progress), progress
    assert not any(n["event"] == "confirmation_screen" for n in notes)  # no virtual screen
    assert not ext.isError and "Hello, Ada" in texts(ext)
