"""What the AndyClaw host checks must flag (issue 13): a function without or with an invalid
inputSchema, duplicate function names across extensions, a receiver ignoring
response_action, and a bridge choice that skips a bridge which cannot work."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from inspector.consumer.andyclaw_host import ExtensionHost, function_name_findings
from inspector.consumer.recorder import Recorder
from inspector.protocol import andyclaw as ac
from inspector.protocol.bundle import Bundle
from inspector.protocol.discovery import discover
from inspector.virtual import VirtualDevice
from inspector.virtual.app import CallContext
from inspector.virtual.apps.extensions import DiceExtension, UnitConverterExtension
from inspector.virtual.inprocess import connect_virtual_device
from inspector.virtual.manifest import EXT_SERVICE_ACTION, ServiceDecl


class NoSchema(UnitConverterExtension):
    PACKAGE, EXTENSION_ID = "com.example.noschema", "no_schema"

    def functions(self) -> list[dict[str, Any]]:
        return [{"name": "convert_speed", "description": "Convert a speed"}]


class BadSchema(UnitConverterExtension):
    PACKAGE, EXTENSION_ID = "com.example.badschema", "bad_schema"

    def functions(self) -> list[dict[str, Any]]:
        return [{"name": "convert_mass", "description": "Convert a mass",
                 "inputSchema": {"type": "object", "properties": {"kg": {"type": "nubmer"}}}}]


class Copycat(UnitConverterExtension):
    """Declares convert_length too (the unit converter has it)."""

    PACKAGE, EXTENSION_ID = "com.example.copycat", "copycat"


class FixedReplyDice(DiceExtension):
    """Replies on a hard-coded action instead of the request's response_action."""

    PACKAGE, EXTENSION_ID = "com.example.fixeddice", "fixed_dice"

    async def on_broadcast(self, ctx: CallContext, action: str, extras: Bundle
                           ) -> tuple[str, Bundle] | None:
        got = await super().on_broadcast(ctx, action, extras)
        return None if got is None else ("com.example.fixeddice.RESULT", got[1])


class HiddenService(UnitConverterExtension):
    """A bound-service bridge that is not exported, next to a working provider bridge."""

    PACKAGE, EXTENSION_ID = "com.example.hiddenservice", "hidden_service"

    def components(self) -> dict[str, Any]:
        comps = super().components()
        comps["services"] = (ServiceDecl(name=".ExtensionService", exported=False,
                                         actions=(EXT_SERVICE_ACTION,)),)
        return comps


@pytest.fixture
async def relay(tmp_path: Path) -> AsyncIterator[Any]:
    dev = VirtualDevice(tmp_path / "state")
    for app in (NoSchema(), BadSchema(), Copycat(), FixedReplyDice(), HiddenService()):
        dev.install(app, notify=False)
    client = await connect_virtual_device(dev)
    yield client
    await client.close()
    await dev.aclose()


async def _hosts(relay: Any, timeout_ms: int = 30_000) -> dict[str, ExtensionHost]:
    found = discover(await relay.discover())
    return {e.id: ExtensionHost(relay, e, recorder=Recorder(), timeout_ms=timeout_ms)
            for e in found.extensions}


async def test_a_function_without_input_schema_is_flagged(relay: Any) -> None:
    host = (await _hosts(relay))["no_schema"]
    assert await host.read_manifest() == []
    [f] = [f for f in host.findings if f.rule_id == "extension.input_schema"]
    assert not f.ok and f.level == "MUST"
    assert "inputSchema" in f.message and "register no function" in f.message


async def test_an_invalid_input_schema_is_flagged(relay: Any) -> None:
    host = (await _hosts(relay))["bad_schema"]
    assert [f.name for f in await host.read_manifest()] == ["convert_mass"]
    [f] = [f for f in host.findings if f.rule_id == "extension.input_schema"]
    assert not f.ok and "'convert_mass'" in f.message and "nubmer" in f.message


async def test_duplicate_function_names_across_extensions(relay: Any) -> None:
    hosts = await _hosts(relay)
    found = await function_name_findings(list(hosts.values()), focus="copycat")
    bad = [f for f in found if not f.ok]
    assert len(bad) == 1 and "'convert_length'" in bad[0].message
    assert "copycat" in bad[0].message and "unit_converter" in bad[0].message


async def test_a_receiver_ignoring_response_action_is_diagnosed(relay: Any) -> None:
    host = (await _hosts(relay, timeout_ms=300))["fixed_dice"]
    reply = await host.execute("roll_dice", {"sides": 6})
    assert reply.outcome == "timeout"
    problem, relay_detail = reply.problems  # the host's diagnosis, then the relay's own words
    assert "com.example.fixeddice.andyclaw.EXTENSION_RESPONSE" in problem
    assert "ignores the request's response_action" in problem
    assert "the target is not stopped" in relay_detail


async def test_bridge_choice_skips_an_unexported_bridge(relay: Any) -> None:
    host = (await _hosts(relay))["hidden_service"]
    # the service outranks the provider, but it is not exported: the provider is used
    assert [b.bridge for b in host.decl.bridges][:2] == [ac.Bridge.SERVICE, ac.Bridge.PROVIDER]
    assert host.decl.bridge == ac.Bridge.PROVIDER
    assert any("the host would pick the service bridge" in p for p in host.decl.problems)
    reply = await host.execute("convert_length", {"value": 1, "from": "km", "to": "m"})
    assert reply.ok and json.loads(reply.result or "") == {"value": 1000.0, "unit": "m"}
