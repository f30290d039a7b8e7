"""Replay as a virtual provider: a session recorded on the virtual device, bundled, then
served by `ReplayedApp` on a fresh device and driven by the consumer engine."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from inspector.consumer import errors as cerr
from inspector.consumer.andyclaw_host import ExtensionHost
from inspector.consumer.engine import ProviderSession
from inspector.consumer.execution import ExecState
from inspector.consumer.recorder import Recorder
from inspector.protocol import andyclaw as ac
from inspector.protocol.bundle import Bundle, Int, to_jsonable
from inspector.protocol.discovery import discover
from inspector.session.bundle_file import create_bundle, open_bundle
from inspector.session.journal import REDACTED, JournalWriter, read_journal
from inspector.session.replay import (
    RecordedCall,
    RecordedExtension,
    RecordedExtensionCall,
    RecordedProvider,
)
from inspector.virtual import VirtualApp, VirtualDevice
from inspector.virtual.apps.finance import FinanceProvider
from inspector.virtual.apps.replayed import (
    SYNTHESIZED_META,
    ReplayedApp,
    ReplayLoadError,
    install_bundle,
)
from inspector.virtual.inprocess import connect_virtual_device

AUTHORITY = "com.example.pricealerts.clawseed.tools"
PACKAGE = "com.example.pricealerts"
ALERT = {"symbol": "ACME", "price": 101.25, "direction": "above"}


@dataclass
class Recording:
    journal: Path
    bundle: Path
    record: Bundle  # the package record the original device reported
    tools: list[dict[str, object]]
    alerts: object
    created: object


async def _record(tmp_path: Path, *, with_discovery: bool = True) -> Recording:
    """negotiate, list_tools, a read and a create_alert on the real price-alerts app."""
    device = VirtualDevice(tmp_path / "device")
    client = await connect_virtual_device(device)
    try:
        [record] = await client.discover(PACKAGE)
        recorder = Recorder(device="virtual")
        writer = JournalWriter.create(
            name="alerts", device={"serial": "virtual"}, directory=tmp_path / "sessions"
        )
        if with_discovery:
            writer.record("discovery", {"packages": [to_jsonable(record)]})
        recorder.add_listener(writer.on_exchange)
        provider = ProviderSession(client, AUTHORITY, package=PACKAGE, recorder=recorder)
        await provider.negotiate()
        tools = await provider.list_tools()
        alerts = await provider.execute_tool("list_alerts", {})
        created = await provider.execute_tool("create_alert", ALERT)
        assert created.state == ExecState.SUCCEEDED, created.message
        writer.close()
    finally:
        await client.close()
        await device.aclose()
    bundle = create_bundle(tmp_path / "alerts.cetpbundle", read_journal(writer.path))
    return Recording(writer.path, bundle, record,
                     [t.model_dump(mode="json") for t in tools.tools], alerts.value, created.value)


async def _replay_device(
    tmp_path: Path, source: object, apps: list[VirtualApp] | None = None
) -> tuple[VirtualDevice, list[str]]:
    device = VirtualDevice(tmp_path / "replay", apps=apps or [])
    return device, install_bundle(device, source)


async def test_the_consumer_sees_the_recorded_provider(tmp_path: Path) -> None:
    rec = await _record(tmp_path)
    # another app first, so the replayed package gets another uid than it was recorded with
    device, installed = await _replay_device(tmp_path, rec.bundle, [FinanceProvider()])
    client = await connect_virtual_device(device)
    try:
        assert installed == [PACKAGE]
        # discover: the recorded declarations, exactly as the phone reported them
        [record] = await client.discover(PACKAGE)
        assert record == rec.record and device.apps[PACKAGE].uid != record["uid"]
        assert discover([record]).cetp[0].authority == AUTHORITY

        provider = ProviderSession(client, AUTHORITY, package=PACKAGE)
        session = await provider.negotiate()
        assert session.token == REDACTED  # the bundle was redacted; it is accepted back
        assert session.expires_ms is not None and not session.expired(provider.clock.now_ms())
        tools = await provider.list_tools()
        assert [t.model_dump(mode="json") for t in tools.tools] == rec.tools
        alerts = await provider.execute_tool("list_alerts", {})
        assert alerts.state == ExecState.SUCCEEDED and alerts.value == rec.alerts
        # argument order does not matter; the same create_alert gets the recorded answer
        again = await provider.execute_tool("create_alert", dict(reversed(ALERT.items())))
        assert again.state == ExecState.SUCCEEDED and again.value == rec.created

        other = await provider.execute_tool("create_alert", {**ALERT, "symbol": "GLOBX"})
        assert other.state == ExecState.FAILED
        assert other.error is not None and other.error.error_code == "UNAVAILABLE"
        assert other.error.retryable is False
        assert "not in the recording" in other.error.error_message
        assert "ACME" in other.error.error_message  # what was recorded instead

        never = await provider.execute_tool("get_quote", {"symbol": "ACME"})
        assert never.error is not None and "call of tool 'get_quote' is not in the recording" in (
            never.error.error_message)

        # raw calls: the request id is echoed; an unrecorded method is METHOD_NOT_FOUND
        base = {"protocol_version": Int(2), "session_token": "anything-at-all",
                "deadline_at_ms": Int(0)}
        raw = await client.call(AUTHORITY, "list_tools", Bundle(base, request_id="rid-1"))
        assert raw is not None and raw["request_id"] == "rid-1" and raw["status"] == "success"
        info = await client.call(AUTHORITY, "get_provider_info", Bundle(base, request_id="r2"))
        assert info is not None and info["status"] == "error"
        assert info["error_code"] == "METHOD_NOT_FOUND" and info["request_id"] == "r2"
        assert "not in the recording" in info["error_message"]
        assert json.loads(info["error_details"])["replay"] == "not_recorded"
    finally:
        await client.close()
        await device.aclose()


async def test_a_manifest_is_synthesized_when_none_was_recorded(tmp_path: Path) -> None:
    rec = await _record(tmp_path, with_discovery=False)
    # a journal (not a bundle) works as well: its tokens are the real ones
    device, installed = await _replay_device(tmp_path, rec.journal)
    client = await connect_virtual_device(device)
    try:
        [record] = await client.discover()
        assert record["package"] == PACKAGE and record["app_meta_data"][SYNTHESIZED_META] is True
        [decl] = discover([record]).cetp
        assert decl.authority == AUTHORITY and decl.versions == (2,)
        assert isinstance(device.apps[PACKAGE], ReplayedApp) and device.apps[PACKAGE].synthesized
        provider = ProviderSession(client, AUTHORITY, package=PACKAGE)
        tools = await provider.list_tools()
        assert [t.model_dump(mode="json") for t in tools.tools] == rec.tools
        assert installed == [PACKAGE]
        assert provider.session is not None and provider.session.token != REDACTED
    finally:
        await client.close()
        await device.aclose()


async def test_replacing_the_recorded_app_on_a_full_device(tmp_path: Path) -> None:
    """Loaded into a device that has the reference apps, the replay replaces the package."""
    rec = await _record(tmp_path)
    device = VirtualDevice(tmp_path / "full")
    try:
        assert install_bundle(device, open_bundle(rec.bundle)) == [PACKAGE]
        assert isinstance(device.apps[PACKAGE], ReplayedApp)
        assert "com.example.finance" in device.apps  # the others stay
    finally:
        await device.aclose()


def _op_call(op: str, state: str, rid: str = "r") -> RecordedCall:
    req = to_jsonable(Bundle(protocol_version=Int(2), session_token="t", request_id=rid,
                             operation_id=op))
    data = json.dumps({"operation_id": op, "state": state})
    resp = to_jsonable(Bundle(status="success", protocol_version=Int(2), request_id=rid,
                              data=data))
    return RecordedCall(method="get_operation", request=req, response=resp, status="success")


async def test_repeated_requests_walk_through_the_recorded_answers(tmp_path: Path) -> None:
    provider = RecordedProvider(
        authority="com.example.ops.tools", package="com.example.ops",
        calls=[_op_call("op1", "running"), _op_call("op1", "running"),
               _op_call("op1", "succeeded")],
    )
    device = VirtualDevice(tmp_path / "d", apps=[ReplayedApp([provider])])
    client = await connect_virtual_device(device)
    try:
        def ask(op: str) -> Bundle:
            return Bundle(protocol_version=Int(2), session_token=REDACTED, request_id="mine",
                          operation_id=op)

        states = []
        for _ in range(4):
            reply = await client.call("com.example.ops.tools", "get_operation", ask("op1"))
            assert reply is not None and reply["request_id"] == "mine"
            states.append(json.loads(reply["data"])["state"])
        assert states == ["running", "running", "succeeded", "succeeded"]
        unknown = await client.call("com.example.ops.tools", "get_operation", ask("op2"))
        assert unknown is not None and unknown["error_code"] == "UNAVAILABLE"
        assert "'op2' is not in the recording" in unknown["error_message"]
        v1 = await client.call("com.example.ops.tools", "list_tools", Bundle())
        assert v1 is not None and v1["error_code"] == "METHOD_NOT_FOUND"
        assert "protocol_version" not in v1  # a v1 request gets a v1 error envelope
    finally:
        await client.close()
        await device.aclose()


def test_unusable_sources_are_clear_errors(tmp_path: Path) -> None:
    device = VirtualDevice(tmp_path / "d", apps=[])
    with pytest.raises(ReplayLoadError, match="does not exist"):
        install_bundle(device, tmp_path / "missing.cetpbundle")
    junk = tmp_path / "junk.cetpbundle"
    junk.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(ReplayLoadError, match="not a zip"):
        install_bundle(device, junk)
    empty = JournalWriter.create(name="empty", device={}, directory=tmp_path / "s")
    empty.close()
    with pytest.raises(ReplayLoadError, match="no CETP provider or AndyClaw extension call"):
        install_bundle(device, empty.path)
    with pytest.raises(ValueError, match="at least one"):
        ReplayedApp([])


async def test_a_recorded_confirmation_is_played_back(tmp_path: Path) -> None:
    """delete_alert needs the user's confirmation: recorded approved, replayed both ways."""
    device = VirtualDevice(tmp_path / "device", confirmation_handler=lambda req: True)
    client = await connect_virtual_device(device)
    try:
        recorder = Recorder(device="virtual")
        provider = ProviderSession(client, AUTHORITY, package=PACKAGE, recorder=recorder)
        created = await provider.execute_tool("create_alert", ALERT)
        assert isinstance(created.value, dict)
        delete = {"alert_id": created.value["alert_id"]}
        asked = await provider.execute_tool("delete_alert", delete)
        assert asked.state == ExecState.NEEDS_RESOLUTION, asked.message
        done = await provider.launch_resolution(asked)
        assert done.state == ExecState.SUCCEEDED, done.message
        writer = JournalWriter.create(name="del", device={}, directory=tmp_path / "s")
        for ex in recorder.exchanges:
            writer.record_exchange(ex)
        writer.close()
    finally:
        await client.close()
        await device.aclose()
    bundle = create_bundle(tmp_path / "del.cetpbundle", read_journal(writer.path))

    screens: list[str] = []
    answer = {"approve": True}

    def handler(req: object) -> bool:
        screens.append(f"{req.title}: {req.consequences}")  # type: ignore[attr-defined]
        return answer["approve"]

    replay = VirtualDevice(tmp_path / "replay", apps=[], confirmation_handler=handler)
    install_bundle(replay, bundle)
    client = await connect_virtual_device(replay)
    try:
        provider = ProviderSession(client, AUTHORITY, package=PACKAGE)
        asked = await provider.execute_tool("delete_alert", delete)
        assert asked.state == ExecState.NEEDS_RESOLUTION and asked.resolution is not None
        assert asked.resolution.creator_package == PACKAGE
        again = await provider.launch_resolution(asked)
        assert again.state == ExecState.SUCCEEDED and again.value == done.value
        assert screens and "Replayed confirmation" in screens[0] and "recording" in screens[0]

        answer["approve"] = False
        denied = await provider.launch_resolution(
            await provider.execute_tool("delete_alert", delete))
        assert denied.state == ExecState.RESOLUTION_DECLINED
    finally:
        await client.close()
        await replay.aclose()


async def test_recorded_extension_failures_are_played_back(tmp_path: Path) -> None:
    """An exception, a broadcast timeout and an activity not launched, as recorded; the
    manifest is synthesized (no package record) and marked so."""
    pkg = "com.example.flaky"
    ext = RecordedExtension(package=pkg, extension_id=f"apk:{pkg}", calls=[
        RecordedExtensionCall(bridge="service", function="boom", params={},
                              decoded={"outcome": "exception",
                                       "exception_class": "java.lang.IllegalStateException",
                                       "exception_message": "bad state"}),
        RecordedExtensionCall(bridge="broadcast", function="slow", params={},
                              decoded={"outcome": "timeout"}),
        RecordedExtensionCall(bridge="activity", function="open", params={},
                              decoded={"outcome": "not_launched", "launched": False}),
    ])
    app = ReplayedApp(extension=ext)
    device = VirtualDevice(tmp_path / "device", apps=[app])
    client = await connect_virtual_device(device)
    try:
        [decl] = discover(await client.discover(pkg)).extensions
        assert {b.bridge for b in decl.bridges} == {
            ac.Bridge.SERVICE, ac.Bridge.BROADCAST, ac.Bridge.ACTIVITY}
        assert app.manifest.app_meta_data[SYNTHESIZED_META] is True
        host = ExtensionHost(client, decl, timeout_ms=300)
        r = await host.execute("boom", {}, bridge=ac.Bridge.SERVICE)
        assert (r.outcome, r.exception_class, r.exception_message) == (
            "exception", "java.lang.IllegalStateException", "bad state")
        r = await host.execute("slow", {}, bridge=ac.Bridge.BROADCAST)
        assert r.outcome == "timeout"
        with pytest.raises(cerr.TransportFailure, match="recorded as not launched"):
            await host.execute("open", {}, bridge=ac.Bridge.ACTIVITY)
        r = await host.execute("boom", {"x": 1}, bridge=ac.Bridge.SERVICE)
        assert r.in_band_error is not None and "not in the recording" in r.in_band_error
        with pytest.raises(cerr.MalformedReply):  # GET_MANIFEST was not recorded
            await host.get_manifest()
    finally:
        await client.close()
        await device.aclose()


async def test_a_v1_read_is_not_answered_with_the_recorded_v2_one(tmp_path: Path) -> None:
    """Only v2 was recorded: a v1 list_tools must not get the v2 tool list (the v1 view
    would then report side-effecting tools over v1, §2.1, that the provider never exposed)."""
    rec = await _record(tmp_path)
    device, _ = await _replay_device(tmp_path, rec.bundle)
    client = await connect_virtual_device(device)
    try:
        v1 = await client.call(AUTHORITY, "list_tools", Bundle({}))
        assert v1 is not None and "tools" not in v1
        assert "not in the recording" in str(v1.get("error", "")) + str(v1)
        v2 = await client.call(AUTHORITY, "list_tools", Bundle(
            {"protocol_version": Int(2), "session_token": "x", "deadline_at_ms": Int(0)},
            request_id="r"))
        assert v2 is not None and v2["status"] == "success"
    finally:
        await client.close()
        await device.aclose()
