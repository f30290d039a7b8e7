"""A second caller: a relay connection acting as a consumer app, bound end to end (two real
relay connections to one device; the providers see two UIDs)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from inspector.relay.client import RelayClient
from inspector.session.devices import VirtualConfig, VirtualDeviceHost
from inspector.session.session import Session
from inspector.virtual.app import RELAY_PACKAGE, RELAY_UID
from inspector.virtual.callers import (
    CONSUMER_APPS,
    SECOND_CALLER,
    second_caller_connector,
)
from inspector.virtual.device import VirtualDevice
from inspector.virtual.inprocess import connect_virtual_device
from inspector.virtual.manifest import fake_cert_sha256
from tests.virtual.phones import V2, data, error, value


@pytest.fixture
async def pair(device: VirtualDevice) -> AsyncIterator[tuple[RelayClient, RelayClient]]:
    a = await connect_virtual_device(device)
    b = await connect_virtual_device(device, caller_package=SECOND_CALLER)
    yield a, b
    await a.close()
    await b.close()


async def test_hello_reports_each_connections_caller(pair: Any) -> None:
    a, b = pair
    assert (a.hello_info.caller_uid, a.hello_info.caller_package) == (RELAY_UID, RELAY_PACKAGE)
    hb = b.hello_info
    assert (hb.caller_uid, hb.caller_package) == (CONSUMER_APPS[SECOND_CALLER].uid, SECOND_CALLER)
    assert hb.caller_cert_sha256 == (fake_cert_sha256(SECOND_CALLER),)
    assert hb.caller_uid != RELAY_UID
    # the rest of the hello is the device's (same capabilities, same serial)
    assert hb.capabilities == a.hello_info.capabilities
    assert hb.device["serial"] == a.hello_info.device["serial"]


async def test_only_whitelisted_consumer_apps(device: VirtualDevice) -> None:
    with pytest.raises(ValueError, match="not a consumer app"):
        await connect_virtual_device(device, caller_package="com.example.pricealerts")


async def test_session_token_is_bound_through_the_relay(pair: Any) -> None:
    a, b = pair
    va, vb = V2(a), V2(b)
    await va.negotiate()
    vb.token = va.token  # B presents A's token
    assert error(await vb.method("list_tools")) == "INVALID_REQUEST"
    await vb.negotiate()
    assert vb.token != va.token
    assert (await vb.method("list_tools"))["status"] == "success"


async def test_dedup_and_data_are_per_caller(pair: Any) -> None:
    a, b = pair
    va, vb = V2(a), V2(b)
    await va.negotiate()
    await vb.negotiate()
    rid = str(uuid.uuid4())
    args = {"symbol": "ACME", "price": 100}
    first = value(await va.execute("create_alert", args, request_id=rid))
    other = value(await vb.execute("create_alert", args, request_id=rid))
    assert other["alert_id"] != first["alert_id"]  # a new execution, not A's result
    # a replay by A still returns A's result
    assert value(await va.execute("create_alert", args, request_id=rid)) == first
    mine = value(await va.execute("list_alerts", {}))
    theirs = value(await vb.execute("list_alerts", {}))
    assert [x["alert_id"] for x in mine["alerts"]] == [first["alert_id"]]
    assert [x["alert_id"] for x in theirs["alerts"]] == [other["alert_id"]]


async def test_operation_is_bound_to_its_caller(pair: Any) -> None:
    a, b = pair
    va, vb = V2(a), V2(b)
    await va.negotiate()
    await vb.negotiate()
    rid = str(uuid.uuid4())
    r = await va.execute("sync_watchlist", {"symbols": ["ACME", "GLOBX"], "step_ms": 200},
                         request_id=rid)
    op_id = data(r)["operation_id"]
    assert error(await vb.method("get_operation", request_id=rid, operation_id=op_id)) == (
        "INVALID_REQUEST")
    assert error(await vb.method("cancel_operation", request_id=rid, operation_id=op_id)) == (
        "INVALID_REQUEST")
    state = data(await va.method("get_operation", request_id=rid, operation_id=op_id))
    assert state["operation_id"] == op_id and state["state"] != "cancelled"


async def test_closing_forgets_the_connections_caller(device: VirtualDevice) -> None:
    b = await connect_virtual_device(device, caller_package=SECOND_CALLER)
    await V2(b).negotiate()  # an IPC, so the device has seen the connection
    assert SECOND_CALLER in {c.package for c in device._callers.values()}
    await b.close()
    for _ in range(100):
        if not device._callers:
            break
        await asyncio.sleep(0.01)
    assert device._callers == {}


async def test_connector_for_device_and_session(device: VirtualDevice, tmp_path: Any) -> None:
    connect = second_caller_connector(device)
    assert connect is not None
    c = await connect()
    try:
        assert c.hello_info.caller_package == SECOND_CALLER
    finally:
        await c.close()
    assert second_caller_connector(object()) is None
    with pytest.raises(ValueError):
        second_caller_connector(device, "org.evil.app")
    # a Session on the in-process virtual device gets one; a socket relay does not
    host = VirtualDeviceHost(VirtualConfig(state_dir=str(tmp_path / "host")))
    try:
        assert second_caller_connector(Session("virtual", host.connect)) is not None
        far = VirtualDeviceHost(VirtualConfig(relay_socket="tcp:127.0.0.1:1"))
        assert second_caller_connector(Session("virtual", far.connect)) is None
    finally:
        await host.close()
