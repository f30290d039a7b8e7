"""Replay covers AndyClaw extension calls: a session recorded on the virtual device with one
call through each bridge, bundled, then replayed against a device (every function call
asks for confirmation; a changed reply shows in the diff) and served as a virtual
provider (same replies; unrecorded params get an error saying "not in the recording")."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from inspector.consumer import errors as cerr
from inspector.consumer.andyclaw_host import ExtensionHost
from inspector.consumer.recorder import Recorder
from inspector.protocol import andyclaw as ac
from inspector.protocol.bundle import Bundle, to_jsonable
from inspector.protocol.discovery import ExtensionDeclaration, discover
from inspector.protocol.exchange import Exchange, ExchangeKind, ExchangeStatus
from inspector.relay.api import RelayApi
from inspector.session.bundle_file import create_bundle, open_bundle
from inspector.session.journal import JournalContents, JournalWriter, read_journal
from inspector.session.replay import (
    ReplayAction,
    ReplayKind,
    classify,
    diff_text_replies,
    recorded_extensions,
    replay_session,
)
from inspector.virtual import VirtualDevice
from inspector.virtual.apps.extensions import (
    DiceExtension,
    FlashlightExtension,
    HelloWorldExtension,
    UnitConverterExtension,
)
from inspector.virtual.apps.replayed import SYNTHESIZED_META, ReplayedApp, install_bundle
from inspector.virtual.inprocess import connect_virtual_device

HELLO = HelloWorldExtension.PACKAGE
UNITS = UnitConverterExtension.PACKAGE
DICE = DiceExtension.PACKAGE
LIGHT = FlashlightExtension.PACKAGE
PACKAGES = (HELLO, UNITS, DICE, LIGHT)
CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    HELLO: ("greet", {"name": "Ada"}),
    UNITS: ("convert_length", {"value": 2, "from": "km", "to": "m"}),
    DICE: ("roll_dice", {"sides": 6, "count": 3, "seed": 7}),
    LIGHT: ("toggle_flashlight", {"on": True}),
}


@dataclass
class Recording:
    bundle: Path
    session: JournalContents
    replies: dict[str, ac.ExtensionReply]
    functions: dict[str, list[str]]  # package → names in the raw manifest resource


async def _decls(client: RelayApi, packages: tuple[str, ...] = PACKAGES
                 ) -> tuple[dict[str, ExtensionDeclaration], list[Bundle]]:
    records = [r for p in packages for r in await client.discover(p)]
    d = discover(records)
    return {p: d.find_extension(p)[0] for p in packages}, records


async def record_extensions(tmp_path: Path, *, with_discovery: bool = True) -> Recording:
    """Record manifest reads and one function call through each of the four bridges."""
    device = VirtualDevice(tmp_path / "device")
    client = await connect_virtual_device(device)
    replies: dict[str, ac.ExtensionReply] = {}
    functions: dict[str, list[str]] = {}
    try:
        decls, records = await _decls(client)
        recorder = Recorder(device="virtual")
        writer = JournalWriter.create(name="ext", device={"serial": "virtual"},
                                      directory=tmp_path / "sessions")
        if with_discovery:
            writer.record("discovery", {"packages": [to_jsonable(r) for r in records]})
        recorder.add_listener(writer.on_exchange)
        for pkg in PACKAGES:
            host = ExtensionHost(client, decls[pkg], recorder=recorder)
            functions[pkg] = [f.name for f in await host.read_manifest()]
            if pkg == HELLO:
                await host.get_manifest()
            fn, params = CALLS[pkg]
            replies[pkg] = await host.execute(fn, params, approved=True)
            assert replies[pkg].ok, replies[pkg]
        writer.close()
    finally:
        await client.close()
        await device.aclose()
    bundle = create_bundle(tmp_path / "ext.cetpbundle", read_journal(writer.path))
    return Recording(bundle, open_bundle(bundle).session, replies, functions)


class ChangedConverter(UnitConverterExtension):
    """A plugin update that got the kilometre wrong: the replay must show it."""

    FACTORS = {**UnitConverterExtension.FACTORS, "km": 1001.0}


def _calls(session: JournalContents) -> list[Exchange]:
    return [e for e in session.exchanges if e.kind == ExchangeKind.EXTENSION]


def test_every_extension_function_call_is_a_mutation() -> None:
    def ex(method: str, status: ExchangeStatus = ExchangeStatus.SUCCESS) -> Exchange:
        return Exchange(id="x", kind=ExchangeKind.EXTENSION, target="apk:p", method=method,
                        package="p", status=status, started_ms=0)

    for bridge in ac.Bridge:
        assert classify(ex(bridge.value)) == ReplayKind.MUTATION
    assert classify(ex("read_resource")) == ReplayKind.READ
    assert classify(ex("service:GET_MANIFEST")) == ReplayKind.READ
    assert classify(ex("provider", ExchangeStatus.REFUSED)) == ReplayKind.SKIP


def test_extension_results_diff_as_json_else_as_text() -> None:
    assert diff_text_replies('{"a": 1, "b": [1]}', '{"b":[1],"a":1}') == []
    [d] = diff_text_replies('{"a": 1}', '{"a": 2}')
    assert (d.path, d.recorded, d.new) == ("a", 1, 2)
    [t] = diff_text_replies("plain text", "other text")
    assert (t.path, t.recorded, t.new) == ("(reply)", "plain text", "other text")
    assert diff_text_replies("same", "same") == []


async def test_replay_against_a_device_confirms_each_extension_call(tmp_path: Path) -> None:
    rec = await record_extensions(tmp_path)
    assert {e.method for e in _calls(rec.session)} >= {b.value for b in ac.Bridge}

    apps = [HelloWorldExtension(), ChangedConverter(), DiceExtension(), FlashlightExtension()]
    device = VirtualDevice(tmp_path / "fresh", apps=apps)
    client = await connect_virtual_device(device)
    asked: list[tuple[str, str | None]] = []

    def confirm(ex: Exchange) -> bool:
        asked.append((ex.method, ex.tool))
        return ex.package != DICE  # the user declines the dice roll

    try:
        report = await replay_session(rec.session, client, confirm=confirm)
    finally:
        await client.close()
        await device.aclose()

    assert sorted(asked) == sorted((b.value, CALLS[p][0]) for b, p in zip(
        (ac.Bridge.SERVICE, ac.Bridge.PROVIDER, ac.Bridge.BROADCAST, ac.Bridge.ACTIVITY),
        (HELLO, UNITS, DICE, LIGHT), strict=True))
    by_method = {r.method: r for r in report.results}
    assert by_method["broadcast"].action == ReplayAction.DECLINED
    for m in ("service", "provider", "activity", "service:GET_MANIFEST", "read_resource"):
        assert by_method[m].action == ReplayAction.REISSUED, by_method[m]
    reads = [r for r in report.results if r.kind == ReplayKind.READ]
    assert len(reads) == 5 and all(not r.changed for r in reads)  # 4 resources + GET_MANIFEST
    assert not by_method["service"].changed and not by_method["activity"].changed
    service = by_method["service"]  # result strings are shown like typed Strings
    assert service.recorded == service.new == {"t": "String", "v": rec.replies[HELLO].result}
    assert by_method["activity"].new == {"launched": True,
                                         "component": f"{LIGHT}/{LIGHT}.ExtensionActivity"}
    [changed] = report.changed
    assert changed.method == "provider" and changed.tool == "convert_length"
    [d] = changed.diff
    assert (d.path, d.recorded, d.new) == ("result.value", 2000.0, 2002.0)
    assert apps[3].launches == [("toggle_flashlight", '{"on":true}')]


async def test_served_as_a_virtual_provider_each_bridge_answers_as_recorded(
        tmp_path: Path) -> None:
    rec = await record_extensions(tmp_path)
    device = VirtualDevice(tmp_path / "served", apps=[])
    assert sorted(install_bundle(device, rec.bundle)) == sorted(PACKAGES)
    client = await connect_virtual_device(device)
    try:
        decls, _ = await _decls(client)
        assert decls[HELLO].id == "hello_world"  # the recorded meta-data, not synthesized
        assert [b.bridge for b in decls[UNITS].bridges] == [ac.Bridge.PROVIDER]
        assert SYNTHESIZED_META not in device.apps[HELLO].manifest.app_meta_data
        recorder = Recorder()
        for pkg in PACKAGES:
            host = ExtensionHost(client, decls[pkg], recorder=recorder)
            assert [f.name for f in await host.read_manifest()] == rec.functions[pkg]
            fn, params = CALLS[pkg]
            again = await host.execute(fn, dict(reversed(params.items())), approved=True)
            want = rec.replies[pkg]
            assert (again.outcome, again.result, again.launched) == (
                want.outcome, want.result, want.launched), pkg
        hello = ExtensionHost(client, decls[HELLO], recorder=recorder)
        assert (await hello.get_manifest()).names() == ["greet"]

        unrecorded = {"name": "Bob"}
        r = await hello.execute("greet", unrecorded)
        assert r.in_band_error and "not in the recording" in r.in_band_error
        for pkg in (UNITS, DICE):
            host = ExtensionHost(client, decls[pkg], recorder=recorder)
            r = await host.execute(CALLS[pkg][0], {"value": 9})
            assert r.outcome == "error" and "not in the recording" in (r.error or ""), pkg
        light = ExtensionHost(client, decls[LIGHT], recorder=recorder)
        with pytest.raises(cerr.TransportFailure, match="not in the recording"):
            await light.execute("toggle_flashlight", {"on": False}, approved=True)
    finally:
        await client.close()
        await device.aclose()


async def test_without_recorded_discovery_the_extension_is_synthesized(tmp_path: Path) -> None:
    rec = await record_extensions(tmp_path, with_discovery=False)
    [units] = [e for e in recorded_extensions(rec.session) if e.package == UNITS]
    app = ReplayedApp(extension=units)
    device = VirtualDevice(tmp_path / "synth", apps=[app])
    client = await connect_virtual_device(device)
    try:
        decls, _ = await _decls(client, (UNITS,))
        assert decls[UNITS].bridge == ac.Bridge.PROVIDER
        assert app.manifest.app_meta_data[SYNTHESIZED_META] is True
        host = ExtensionHost(client, decls[UNITS])
        assert [f.name for f in await host.read_manifest()] == ["convert_length"]
        r = await host.execute(*CALLS[UNITS])
        assert r.result == rec.replies[UNITS].result
    finally:
        await client.close()
        await device.aclose()
