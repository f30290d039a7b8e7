"""The virtual device under Android API profiles: the relay's real manifest decides what it
holds, and the rules of inspector/android/rules.py are enforced as Android would."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from inspector.protocol.bundle import Bundle
from inspector.relay.api import RelayError
from inspector.virtual.apps.extensions import DiceExtension
from inspector.virtual.device import RESULT_CANCELED, RESULT_OK, VirtualDevice
from inspector.virtual.inprocess import connect_virtual_device
from inspector.virtual.manifest import EXT_ACTIVITY_ACTION, EXT_BROADCAST_ACTION
from tests.virtual.android_apps import (
    ACCESS_TOOLS,
    CETP_AUTHORITIES,
    RulesProbeApp,
    old_relay_manifest,
    op,
    relay_manifest,
    strict_device,
)
from tests.virtual.phones import FakeConnection

API_LEVELS = [26, 29, 31, 33, 34, 35]
QUERY_ALL = "android.permission.QUERY_ALL_PACKAGES"


@pytest.mark.parametrize("api", API_LEVELS)
async def test_the_relay_before_issue_10_fails_every_reference_provider(
        tmp_path: Path, api: int) -> None:
    device = strict_device(tmp_path, api, relay_manifest=old_relay_manifest())
    client = await connect_virtual_device(device)
    try:
        assert ACCESS_TOOLS not in str(client.hello_info.device["granted_permissions"])
        for package, authority in CETP_AUTHORITIES.items():
            with pytest.raises(RelayError) as err:
                await client.call(authority, "list_tools", None)
            assert err.value.code == "SECURITY", package
            assert ACCESS_TOOLS in err.value.message
            assert "does not hold com.clawseed.permission.ACCESS_TOOLS" in err.value.message
            assert "<uses-permission" in err.value.message  # says what to fix
            assert err.value.details is not None
            assert err.value.details["rule"] == "provider_permission"
            assert "ContentProviderHelper" in err.value.details["source"]
    finally:
        await client.close()
        await device.aclose()


@pytest.mark.parametrize("api", API_LEVELS)
async def test_the_shipped_relay_reaches_every_reference_provider(
        tmp_path: Path, api: int) -> None:
    device = strict_device(tmp_path, api)  # the relay manifest of resources/relay/*.apk
    client = await connect_virtual_device(device)
    try:
        hello = client.hello_info.device
        assert hello["sdk_int"] == api
        assert ACCESS_TOOLS in str(hello["granted_permissions"]).split(",")
        for authority in CETP_AUTHORITIES.values():
            reply = await client.call(authority, "list_tools", None)
            assert reply is not None and reply["status"] == "success", authority
    finally:
        await client.close()
        await device.aclose()


async def test_a_permission_defined_after_the_relay_is_not_granted_until_reinstall(
        tmp_path: Path) -> None:
    device = VirtualDevice(tmp_path / "s", apps=[])
    conn = FakeConnection()
    device.hello_info("test")  # the first connection installs the relay
    device.install(RulesProbeApp())  # defines ACCESS_TOOLS after the relay was installed
    with pytest.raises(RelayError) as err:
        await op(device, "call", conn, authority=RulesProbeApp.AUTHORITY, method="ping")
    assert err.value.code == "SECURITY"
    assert "no installed app defines it at install time" in err.value.message
    device.reinstall_relay()
    reply = await op(device, "call", conn, authority=RulesProbeApp.AUTHORITY, method="ping")
    assert reply["reply"]["status"] == "success"
    await device.aclose()


@pytest.mark.parametrize(("api", "visible"), [(29, True), (30, False), (34, False)])
async def test_package_visibility_hides_what_the_relay_does_not_query(
        tmp_path: Path, api: int, visible: bool) -> None:
    """A relay without QUERY_ALL_PACKAGES sees only what its <queries> match: the
    provider-bridge extension (no intent filter) vanishes from API 30."""
    facts = relay_manifest(ACCESS_TOOLS, queries=("com.clawseed.action.TOOL_PROVIDER",))
    device = strict_device(tmp_path, api, relay_manifest=facts)
    packages = {p["package"] for p in (await op(device, "discover"))["packages"]}
    assert "com.example.pricealerts" in packages
    assert ("com.example.unitconverter" in packages) is visible
    call = op(device, "call", authority="com.example.unitconverter.andyclaw.extension",
              method="execute", extras=Bundle(function="convert_length", params="{}"))
    if visible:
        await call
    else:
        with pytest.raises(RelayError) as err:
            await call
        assert err.value.code == "NOT_FOUND" and "Unknown authority" in err.value.message
        assert "package_visibility" in err.value.message and QUERY_ALL in err.value.message
    await device.aclose()


async def broadcast_dice(device: VirtualDevice, *, include_stopped: bool = False) -> Bundle:
    extras = Bundle(function="roll_dice", params='{"seed": 1}')
    args = dict(package="com.example.dice", action=EXT_BROADCAST_ACTION, extras=extras,
                reply_action="com.example.dice.andyclaw.EXTENSION_RESPONSE", timeout_ms=300)
    if include_stopped:
        args["include_stopped"] = True
    result: Bundle = await op(device, "broadcast", **args)
    return result


async def test_broadcasts_skip_stopped_packages_unless_included(tmp_path: Path) -> None:
    device = strict_device(tmp_path)
    assert (await broadcast_dice(device))["timed_out"] is False  # used before: not stopped
    await op(device, "force_stop", package="com.example.dice")
    started = time.monotonic()
    timed_out = await broadcast_dice(device)
    assert timed_out["timed_out"] is True and timed_out["target_stopped"] is True
    assert time.monotonic() - started >= 0.2  # the relay waited its timeout out
    # the timeout explains itself in the Java relay's words (Broadcasts.explainTimeout)
    assert "stopped state" in timed_out["detail"] and "include_stopped" in timed_out["detail"]
    delivered = await broadcast_dice(device, include_stopped=True)
    assert delivered["timed_out"] is False and delivered["include_stopped"] is True
    # delivery started the receiver's process: the package left the stopped state
    assert (await broadcast_dice(device))["timed_out"] is False
    await device.aclose()


async def test_a_fresh_install_is_stopped(tmp_path: Path) -> None:
    device = strict_device(tmp_path)
    device.uninstall("com.example.dice")
    device.install(DiceExtension())
    assert (await broadcast_dice(device))["timed_out"] is True
    assert "com.example.dice" in device.android.stopped
    await device.aclose()


@pytest.mark.parametrize(("api", "blocked"), [(28, False), (29, True), (34, True), (35, True)])
async def test_background_activity_start_needs_the_relay_in_front(
        tmp_path: Path, api: int, blocked: bool) -> None:
    device = strict_device(tmp_path, api, relay_in_front=False)
    start = op(device, "start_activity", package="com.example.flashlight",
               action=EXT_ACTIVITY_ACTION, extras=Bundle(function="toggle", params="{}"))
    if blocked:
        with pytest.raises(RelayError) as err:
            await start
        assert err.value.code == "NEEDS_FOREGROUND"
        assert err.value.details is not None
        assert err.value.details["rule"] == "background_activity_start"
        assert ".app.RelayActivity" in err.value.message
    else:
        assert (await start)["launched"] is True
    await device.aclose()


async def test_the_relay_in_front_may_start_activities(tmp_path: Path) -> None:
    device = strict_device(tmp_path, 35)
    r = await op(device, "start_activity", package="com.example.flashlight",
                 action=EXT_ACTIVITY_ACTION, extras=Bundle(function="toggle", params="{}"))
    assert r["launched"] is True
    await device.aclose()


async def probe_resolution(device: VirtualDevice, conn: FakeConnection, method: str) -> str:
    reply = (await op(device, "call", conn, authority=RulesProbeApp.AUTHORITY,
                      method=method))["reply"]
    return str(reply["resolution"].id)


@pytest.mark.parametrize(("api", "cancelled"), [(34, False), (35, True)])
async def test_force_stop_cancels_pending_intents_from_api_35(
        tmp_path: Path, api: int, cancelled: bool) -> None:
    device = strict_device(tmp_path, api, apps=[RulesProbeApp()])
    conn = FakeConnection()
    handle = await probe_resolution(device, conn, "activity")
    await op(device, "force_stop", conn, package=RulesProbeApp.PACKAGE)
    launch = op(device, "launch_pending_intent", conn, handle=handle)
    if cancelled:
        with pytest.raises(RelayError) as err:
            await launch
        assert err.value.code == "NOT_FOUND" and "CanceledException" in err.value.message
        assert "force_stop_cancels_pending_intents" in err.value.message
    else:
        assert (await launch)["result_code"] == RESULT_OK
    await device.aclose()


async def test_a_new_task_pending_intent_is_cancelled_at_once_but_still_shown(
        tmp_path: Path) -> None:
    app = RulesProbeApp()
    device = strict_device(tmp_path, apps=[app])
    conn = FakeConnection()
    handle = await probe_resolution(device, conn, "activity:new_task")
    r = await op(device, "launch_pending_intent", conn, handle=handle)
    assert r["result_code"] == RESULT_CANCELED and r["data"] is None
    for _ in range(50):  # the screen lives on in its own task; the user answers it there
        if app.answers:
            break
        await asyncio.sleep(0.01)
    assert app.answers == [True]
    await device.aclose()


@pytest.mark.parametrize("kind", ["service", "broadcast"])
async def test_a_non_activity_pending_intent_never_gives_a_result(
        tmp_path: Path, kind: str) -> None:
    device = strict_device(tmp_path, apps=[RulesProbeApp()])
    conn = FakeConnection()
    handle = await probe_resolution(device, conn, kind)
    with pytest.raises(RelayError) as err:
        await op(device, "launch_pending_intent", conn, handle=handle)
    assert err.value.code == "TIMEOUT" and "pending_intent_non_activity" in err.value.message
    await device.aclose()


@pytest.mark.parametrize(("api", "code"), [(26, "IPC_FAILED"), (28, "IPC_FAILED"),
                                           (34, "IPC_FAILED")])
async def test_null_binding_by_api_level(tmp_path: Path, api: int, code: str) -> None:
    device = strict_device(tmp_path, api, apps=[RulesProbeApp()])
    started = time.monotonic()
    with pytest.raises(RelayError) as err:
        await op(device, "bind_transact", package=RulesProbeApp.PACKAGE,
                 action=RulesProbeApp.NULL_ACTION, descriptor="x", code=1, strings=[],
                 timeout_ms=200)
    assert err.value.code == code and "null_binding" in err.value.message
    waited = time.monotonic() - started
    assert (waited >= 0.15) is (api < 28)  # no onNullBinding before 28: the timeout runs out
    await device.aclose()


async def test_wake_reports_a_permission_refusal(tmp_path: Path) -> None:
    device = strict_device(tmp_path, relay_manifest=old_relay_manifest())
    r = await op(device, "wake_provider", authority=CETP_AUTHORITIES["com.example.pricealerts"],
                 package="com.example.pricealerts", mode="acquire")
    assert r["ok"] is False and ACCESS_TOOLS in r["detail"]
    await device.aclose()


async def test_consumer_apps_hold_access_tools_as_the_clawseed_sdk_asks(tmp_path: Path) -> None:
    device = strict_device(tmp_path)
    client = await connect_virtual_device(device, caller_package="org.cetp.consumer.second")
    try:
        assert client.hello_info.device["granted_permissions"] == ACCESS_TOOLS
        reply = await client.call(CETP_AUTHORITIES["com.example.pricealerts"], "list_tools", None)
        assert reply is not None and reply["status"] == "success"
    finally:
        await client.close()
        await device.aclose()
