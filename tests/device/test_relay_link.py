"""End to end: real adb server + adbutils + device layer + fake phone + relay server core.

install → grant → start (socket name + token) → forward → hello → call → cable pull →
reconnect with the forward re-created → call again.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from inspector.device.adb_server import AdbEndpoint
from inspector.device.devices import AdbDevices
from inspector.device.errors import (
    DEVICE_NOT_READY,
    INSTALL_NEEDS_CONFIRMATION,
    RELAY_UNREACHABLE,
    DeviceError,
)
from inspector.device.layer import AdbDeviceLayer
from inspector.device.relay_lifecycle import RelayLifecycle
from inspector.device.relay_link import ConnectMode, RelayLink
from inspector.device.shipped_relay import ShippedRelay
from inspector.protocol.bundle import Bundle, Int
from inspector.relay.api import AUTH_FAILED, DISCONNECTED, RelayError
from inspector.virtual.device import VirtualDevice
from tests.device.conftest import connect_phone, poll_until
from tests.device.fakephone import FakePhone, InstalledPackage
from tests.device.tiny_relay import RELAY_KEY, PhoneRelay, teach_phone

pytestmark = pytest.mark.adb


def make_layer(
    endpoint: AdbEndpoint, shipped: ShippedRelay, mode: ConnectMode = ConnectMode.FORWARD
) -> AdbDeviceLayer:
    return AdbDeviceLayer(endpoint, shipped=shipped, mode=mode)


async def test_connect_call_cable_pull_and_reconnect(
    adb_endpoint: AdbEndpoint, phone: FakePhone, phone_relay: PhoneRelay, shipped: ShippedRelay
) -> None:
    teach_phone(phone, shipped)
    layer = make_layer(adb_endpoint, shipped)
    try:
        client = await layer.connect_relay(phone.serial)
        link = layer.links[phone.serial]
        # The relay got the socket name and token the desktop generated, via `am`.
        assert phone_relay.started == [(link.launch.socket_name, link.launch.token)]
        assert phone.state.installs[0].apk == shipped.apk_path.read_bytes()
        assert client.hello_info.caller_cert_sha256 == (RELAY_KEY,)
        assert client.hello_info.device["model"] == "Fake Phone 7"

        reply = await client.call("org.example.tools", "list_tools", Bundle(page=Int(1)))
        assert reply == Bundle(method="list_tools", count=Int(1))
        assert phone_relay.tiny.calls == [("org.example.tools", "list_tools")]
        port = link.local_port
        forwards = layer.devices.device(phone.serial).forward_list()
        assert [(f.local, f.remote) for f in forwards] == [(f"tcp:{port}", link.remote)]

        phone.pull_cable()
        with pytest.raises(RelayError) as err:
            await client.call("org.example.tools", "list_tools", None)
        assert err.value.code == DISCONNECTED
        await poll_until(  # adb drops the forward with the transport
            lambda: layer.devices.client.forward_list(phone.serial) == [], 5, "forward removal"
        )

        phone.plug_cable()
        again = await layer.reconnect_relay(phone.serial, timeout=20)
        assert again is not client
        reply = await again.call("org.example.tools", "list_tools", None)
        assert reply is not None and reply["count"] == Int(2)
        forwards = layer.devices.device(phone.serial).forward_list()
        assert [(f.local, f.remote) for f in forwards] == [(f"tcp:{port}", link.remote)]
        assert len(phone_relay.started) == 1  # the same relay process, not a new start
        assert phone_relay.tiny.connections == 2
    finally:
        await layer.stop()
    assert layer.devices.client.forward_list(phone.serial) == []


async def test_direct_connection_without_forward_survives_a_cable_pull(
    adb_endpoint: AdbEndpoint, phone: FakePhone, phone_relay: PhoneRelay, shipped: ShippedRelay
) -> None:
    teach_phone(phone, shipped)
    layer = make_layer(adb_endpoint, shipped, ConnectMode.DIRECT)
    try:
        client = await layer.connect_relay(phone.serial)
        assert await client.call("a.b", "negotiate", None) == Bundle(
            method="negotiate", count=Int(1)
        )
        assert layer.devices.client.forward_list(phone.serial) == []
        phone.pull_cable()
        with pytest.raises(RelayError) as err:
            await client.call("a.b", "negotiate", None)
        assert err.value.code == DISCONNECTED
        phone.plug_cable()
        again = await layer.reconnect_relay(phone.serial, timeout=20)
        reply = await again.call("a.b", "negotiate", None)
        assert reply is not None and reply["count"] == Int(2)
        assert len(phone_relay.started) == 1 and phone_relay.tiny.connections == 2
        assert layer.devices.client.forward_list(phone.serial) == []
    finally:
        await layer.stop()


async def test_wrong_token_fails_at_once_with_auth_failed(
    adb_endpoint: AdbEndpoint, phone: FakePhone, shipped: ShippedRelay
) -> None:
    relay = PhoneRelay(phone, token_override="not-the-session-token")
    teach_phone(phone, shipped)
    layer = make_layer(adb_endpoint, shipped)
    try:
        with pytest.raises(RelayError) as err:
            await layer.connect_relay(phone.serial)
        assert err.value.code == AUTH_FAILED
    finally:
        await layer.stop()
        phone.call(relay.close())


async def test_incompatible_relay_is_not_uninstalled_without_consent(
    adb_endpoint: AdbEndpoint, phone: FakePhone, phone_relay: PhoneRelay, shipped: ShippedRelay
) -> None:
    teach_phone(phone, shipped)
    phone.state.packages[shipped.package] = InstalledPackage(
        shipped.package, shipped.version_code, "x", "other-key", b"someone's own relay build"
    )
    layer = make_layer(adb_endpoint, shipped)
    questions: list[str] = []

    async def refuse(question: str) -> bool:
        questions.append(question)
        return False

    async def agree(question: str) -> bool:
        return True

    try:
        with pytest.raises(DeviceError) as err:
            await layer.connect_relay(phone.serial, confirm_uninstall=refuse)
        assert err.value.code == INSTALL_NEEDS_CONFIRMATION
        assert len(questions) == 1 and "Uninstall" in questions[0]
        assert phone.state.packages[shipped.package].cert_sha256 == "other-key"
        client = await layer.connect_relay(phone.serial, confirm_uninstall=agree)
        assert client.hello_info.caller_cert_sha256 == (RELAY_KEY,)
    finally:
        await layer.stop()


async def test_unauthorized_device_cannot_connect_and_says_why(
    adb_endpoint: AdbEndpoint, shipped: ShippedRelay
) -> None:
    p = FakePhone(mode="unauthorized").start()
    layer = make_layer(adb_endpoint, shipped)
    try:
        connect_phone(adb_endpoint, p)
        with pytest.raises(DeviceError) as err:
            await layer.connect_relay(p.serial)
        assert err.value.code == DEVICE_NOT_READY and "USB debugging" in err.value.hint
    finally:
        await layer.stop()
        layer.devices.client.disconnect(p.serial)
        p.stop()


async def test_cetp_call_to_the_virtual_device_served_on_the_phone(
    adb_endpoint: AdbEndpoint, phone: FakePhone, shipped: ShippedRelay
) -> None:
    """The virtual device's reference apps stand in for the phone's apps, behind adb."""
    device = phone.call(_make_virtual_device())
    relay = PhoneRelay(phone, backend=device)
    teach_phone(phone, shipped)
    layer = make_layer(adb_endpoint, shipped)
    try:
        client = await layer.connect_relay(phone.serial)
        packages = {str(p["package"]) for p in await client.discover()}
        assert "com.example.finance" in packages
        reply = await client.call("com.example.finance.clawseed.tools", "list_tools", None)
        assert reply is not None and reply["status"] == "success"
        tools = json.loads(str(reply["data"]))["tools"]
        assert "get_portfolio_holdings" in {t["name"] for t in tools}
    finally:
        await layer.stop()
        phone.call(relay.close())
        phone.call(device.aclose())


async def _make_virtual_device() -> VirtualDevice:
    return VirtualDevice()  # built on the phone's loop, where it will serve


@pytest.mark.parametrize("mode", [ConnectMode.FORWARD, ConnectMode.DIRECT])
async def test_open_retries_until_the_relay_listens(
    adb_endpoint: AdbEndpoint, phone: FakePhone, shipped: ShippedRelay, mode: ConnectMode
) -> None:
    """The relay opens its socket a moment after `am` returns: keep trying until it does."""
    relay = PhoneRelay(phone)
    phone.relay_starter = None  # `am` succeeds but nothing listens yet
    teach_phone(phone, shipped)
    devices = AdbDevices(adb_endpoint)
    lifecycle = RelayLifecycle(devices, shipped)
    await lifecycle.install(phone.serial)
    launch = await lifecycle.start(phone.serial)
    link = RelayLink(devices, launch, mode)
    opening = asyncio.ensure_future(link.open(timeout=15))
    try:
        await poll_until(lambda: len(phone.state.abstract_opens) >= 2, 10, "two refused tries")
        assert not opening.done()
        address = phone.call(relay.start(launch.socket_name, launch.token))
        phone.state.abstract_sockets[launch.socket_name] = address
        client = await opening
        assert await client.call("x.y", "ping_tool", None) == Bundle(
            method="ping_tool", count=Int(1)
        )
    finally:
        await link.close()
        phone.call(relay.close())


async def test_open_gives_up_with_a_clear_message(
    adb_endpoint: AdbEndpoint, phone: FakePhone, shipped: ShippedRelay
) -> None:
    teach_phone(phone, shipped)
    devices = AdbDevices(adb_endpoint)
    lifecycle = RelayLifecycle(devices, shipped)
    await lifecycle.install(phone.serial)
    link = RelayLink(devices, await lifecycle.start(phone.serial))
    with pytest.raises(DeviceError) as err:
        await link.open(timeout=0.5)
    assert err.value.code == RELAY_UNREACHABLE
    assert "did not accept a connection" in err.value.message and "Restart" in err.value.hint
    await link.close()
    assert devices.client.forward_list(phone.serial) == []


async def test_reconnect_restarts_a_relay_that_died(
    adb_endpoint: AdbEndpoint, phone: FakePhone, phone_relay: PhoneRelay, shipped: ShippedRelay
) -> None:
    teach_phone(phone, shipped)
    layer = make_layer(adb_endpoint, shipped)
    try:
        client = await layer.connect_relay(phone.serial)
        await layer.force_stop(phone.serial, shipped.package)  # the relay process is killed
        phone.call(phone_relay.close())
        phone.state.abstract_sockets.clear()
        with pytest.raises(RelayError):
            await client.call("a.b", "m", None)
        again = await layer.reconnect_relay(phone.serial, timeout=10, reopen_timeout=0.5)
        assert len(phone_relay.started) == 2  # started again …
        assert phone_relay.started[0][1] != phone_relay.started[1][1]  # … with a new token
        assert layer.links[phone.serial].launch.token == phone_relay.started[1][1]
        assert await again.call("a.b", "m", None) == Bundle(method="m", count=Int(1))
    finally:
        await layer.stop()
