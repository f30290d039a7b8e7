"""com.example.finance (CETP v1) and the AndyClaw extensions, one per bridge."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspector.protocol.bundle import Bundle
from inspector.relay.api import NOT_FOUND, RelayError
from inspector.virtual.apps.extensions import FlashlightExtension
from inspector.virtual.device import VirtualDevice
from tests.virtual.phones import FINANCE_AUTH, V2, error

SAMPLES = Path(__file__).resolve().parents[1] / "protocol" / "fixtures"
"""Committed byte-for-byte copies of the reference samples (see README.md there)."""
SAMPLE_NAMES = (
    "cetp-v1-finance.list_tools.json",
    "cetp-v1-finance.get_provider_info.json",
    "andyclaw-hello-world.extension_manifest.json",
    "andyclaw-hello-world.service_get_manifest.json",
)
SERVICE = "org.ethereumphone.andyclaw.EXTENSION_SERVICE"
IEXT = "org.ethereumphone.andyclaw.IExtension"


def sample(name: str) -> str:
    """The reference sample as committed in the tests: independent of the app's own copy."""
    return (SAMPLES / name).read_text("utf-8")


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_the_packaged_samples_are_the_reference_samples(name: str) -> None:
    from inspector.virtual.apps.finance import sample as packaged

    assert packaged(name) == sample(name)


async def test_finance_publishes_the_sample_json(phone: Any) -> None:
    r = await phone.call(FINANCE_AUTH, "list_tools", None)
    assert r["status"] == "success"
    assert json.loads(r["data"]) == json.loads(sample("cetp-v1-finance.list_tools.json"))
    r = await phone.call(FINANCE_AUTH, "get_provider_info", None)
    assert json.loads(r["data"]) == json.loads(sample("cetp-v1-finance.get_provider_info.json"))


async def test_finance_tools(phone: Any) -> None:
    r = await phone.call(
        FINANCE_AUTH,
        "execute_tool",
        Bundle(tool_name="get_portfolio_holdings", args='{"account_type":"fund"}'),
    )
    holdings = json.loads(r["data"])["holdings"]
    assert {h["symbol"] for h in holdings} == {"VTI", "VXUS"}
    r = await phone.call(
        FINANCE_AUTH,
        "execute_tool",
        Bundle(tool_name="get_transactions", args='{"start_date":"2026-03-01","limit":2}'),
    )
    assert [t["date"] for t in json.loads(r["data"])["transactions"]] == [
        "2026-03-02",
        "2026-04-18",
    ]


async def test_finance_errors(phone: Any) -> None:
    e = await phone.call(FINANCE_AUTH, "execute_tool", Bundle(args="{}"))
    assert error(e) == "INVALID_ARGS" and "retryable" not in e
    e = await phone.call(
        FINANCE_AUTH, "execute_tool", Bundle(tool_name="get_transactions", args="{}")
    )
    assert error(e) == "INVALID_ARGS"
    e = await phone.call(FINANCE_AUTH, "execute_tool", Bundle(tool_name="nope"))
    assert error(e) == "TOOL_NOT_FOUND"
    assert error(await phone.call(FINANCE_AUTH, "frobnicate", None)) == "TOOL_NOT_FOUND"
    # a v1 provider knows no negotiate: v2 consumers must not downgrade silently
    assert error(await V2(phone, FINANCE_AUTH).negotiate()) == "TOOL_NOT_FOUND"


async def test_unknown_authority(phone: Any) -> None:
    with pytest.raises(RelayError) as exc:
        await phone.call("com.nobody.clawseed.tools", "list_tools", None)
    assert exc.value.code == NOT_FOUND


async def test_hello_world_two_manifest_forms(phone: Any) -> None:
    pkg = "org.ethereumphone.extensionexample"
    [rec] = await phone.discover(pkg)
    res_id = int(rec["app_meta_data"]["org.ethereumphone.andyclaw.EXTENSION_MANIFEST"])
    raw, name = await phone.read_resource(pkg, res_id, 65536)
    assert raw.decode() == sample("andyclaw-hello-world.extension_manifest.json")
    assert isinstance(json.loads(raw), list)
    assert name.endswith("raw/extension_manifest")
    t = await phone.bind_transact(pkg, SERVICE, IEXT, 1, [])
    assert t.exception is None
    assert t.reply == sample("andyclaw-hello-world.service_get_manifest.json")
    assert isinstance(json.loads(t.reply), dict)


async def test_hello_world_execute(phone: Any) -> None:
    pkg = "org.ethereumphone.extensionexample"
    t = await phone.bind_transact(pkg, SERVICE, IEXT, 2, ["greet", '{"name":"Ada"}'])
    assert json.loads(t.reply)["greeting"].startswith("Hello, Ada!")
    t = await phone.bind_transact(pkg, SERVICE, IEXT, 2, ["shout", "{}"])
    assert json.loads(t.reply) == {"error": "Unknown function: shout"}
    t = await phone.bind_transact(pkg, SERVICE, "wrong.Descriptor", 2, ["greet", "{}"])
    assert t.exception["class"] == "java.lang.SecurityException" and t.reply is None
    t = await phone.bind_transact(pkg, SERVICE, IEXT, 99, [])
    assert t.exception is None and t.reply is None
    with pytest.raises(RelayError):
        await phone.bind_transact(pkg, "some.other.ACTION", IEXT, 1, [])


async def test_content_provider_bridge(phone: Any) -> None:
    auth = "com.example.unitconverter.andyclaw.extension"
    r = await phone.call(
        auth,
        "execute",
        Bundle(function="convert_length", params='{"value":1,"from":"mi","to":"km"}'),
    )
    assert json.loads(r["result"]) == {"value": 1.609344, "unit": "km"}
    r = await phone.call(auth, "execute", Bundle(function="nope", params="{}"))
    assert "Unknown function" in r["error"]


async def test_broadcast_bridge(phone: Any) -> None:
    pkg = "com.example.dice"
    action = "org.ethereumphone.andyclaw.EXTENSION_BROADCAST"
    reply_action = f"{pkg}.andyclaw.EXTENSION_RESPONSE"
    r = await phone.broadcast(
        pkg,
        action,
        Bundle(function="roll_dice", params='{"sides":6,"count":3,"seed":7}'),
        reply_action,
        2000,
    )
    assert not r.timed_out
    result = json.loads(r.reply["result"])
    assert len(result["rolls"]) == 3 and sum(result["rolls"]) == result["total"]
    r = await phone.broadcast(pkg, action, Bundle(function="bad"), reply_action, 2000)
    assert "Unknown function" in r.reply["error"]
    r = await phone.broadcast(pkg, "not.listened.ACTION", Bundle(), reply_action, 200)
    assert r.timed_out and r.reply is None


async def test_activity_bridge(phone: Any, device: VirtualDevice) -> None:
    pkg = "com.example.flashlight"
    launched, component = await phone.start_activity(
        pkg,
        "org.ethereumphone.andyclaw.EXTENSION_ACTION",
        Bundle(function="toggle_flashlight", params='{"on":true}'),
    )
    assert launched and component == f"{pkg}/{pkg}.ExtensionActivity"
    app = device.app(pkg)
    assert isinstance(app, FlashlightExtension)
    assert app.launches == [("toggle_flashlight", '{"on":true}')]
    launched, component = await phone.start_activity(pkg, "no.such.ACTION", Bundle())
    assert not launched and component is None
