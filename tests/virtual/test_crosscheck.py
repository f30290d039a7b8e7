"""The virtual providers and the desktop's protocol model check each other: the conforming
provider passes the desktop's static rules, the non-conforming one trips them."""

from __future__ import annotations

import json

from inspector.protocol import cetp, discovery, rules
from inspector.virtual.device import VirtualDevice
from tests.virtual.phones import BAD_AUTH, PRICE_AUTH, V2, BackendPhone

CAPS = ["async_operations", "large_results"]


async def findings(device: VirtualDevice, authority: str) -> list[rules.Finding]:
    c = V2(BackendPhone(device), authority)
    neg = cetp.parse_negotiate(json.loads((await c.negotiate(caps=CAPS))["data"]))
    info = cetp.parse_provider_info(json.loads((await c.method("get_provider_info"))["data"]))
    raw = json.loads((await c.method("list_tools"))["data"])
    tools = cetp.parse_tool_list_lenient(raw)
    tools = tools[0] if isinstance(tools, tuple) else tools
    return (
        rules.check_negotiation(neg, CAPS)
        + rules.check_scopes(info)
        + rules.check_tool_names(tools)
        + rules.check_annotations(tools, CAPS)
        + rules.check_output_schemas(tools)
    )


async def test_discovery_agrees(device: VirtualDevice) -> None:
    d = discovery.discover(await BackendPhone(device).discover())
    assert set(d.problems) == {"com.example.badprovider"}
    assert {e.id for e in d.extensions} == {"hello_world", "unit_converter", "dice", "flashlight"}
    assert {c.authority for c in d.cetp if c.package == "com.example.pricealerts"} == {PRICE_AUTH}


async def test_conforming_provider_passes_the_desktop_rules(device: VirtualDevice) -> None:
    failed = [f for f in await findings(device, PRICE_AUTH) if not f.ok]
    assert failed == []


async def test_bad_provider_trips_the_desktop_rules(device: VirtualDevice) -> None:
    failed = {f.rule_id for f in await findings(device, BAD_AUTH) if not f.ok}
    assert len(failed) >= 5, failed
