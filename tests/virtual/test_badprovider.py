"""com.example.badprovider: every listed non-conformance is observable on the wire."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any

from inspector.protocol.bundle import Bundle
from inspector.virtual.apps.badprovider import NONCONFORMING_FAULTS
from inspector.virtual.device import VirtualDevice
from tests.virtual.phones import BAD_AUTH, V2, data, error, value

DOC = Path(__file__).parents[2] / "docs" / "virtual-device.md"
TOOL_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
SCOPE_NAME = re.compile(r"[a-z][a-z0-9_.-]{0,127}")


def test_fault_list_is_complete_and_documented() -> None:
    ids = [f.id for f in NONCONFORMING_FAULTS]
    assert len(ids) == len(set(ids)) >= 12
    text = DOC.read_text()
    for f in NONCONFORMING_FAULTS:
        assert f"`{f.id}`" in text, f"{f.id} missing from docs/virtual-device.md"
        assert f.section.startswith("§")


async def test_negotiation_faults(phone: Any) -> None:
    c = V2(phone, BAD_AUTH)
    d = data(await c.negotiate(caps=["cancellation"]))
    assert d["limits"]["max_request_bytes"] < 65536  # limits_below_minimum
    assert d["limits"]["idempotency_window_seconds"] < 86400
    assert len(d["session_token"].encode()) > 256  # token_too_long
    assert set(d["capabilities"]) - {"cancellation"}  # unrequested_capability


async def test_descriptor_faults(phone: Any) -> None:
    c = V2(phone, BAD_AUTH)
    await c.negotiate(caps=[])
    info = data(await c.method("get_provider_info"))
    assert any(not SCOPE_NAME.fullmatch(s["name"]) for s in info["scopes"])  # bad_scope_name
    first = await c.tools()
    tools = {t["name"]: t for t in first["tools"]}
    assert any(not TOOL_NAME.fullmatch(n) for n in tools)  # bad_tool_name
    wipe = tools["wipe_data"]["annotations"]
    assert wipe["effect"] == "delete" and wipe["confirmation"] != "always"
    assert tools["slow_report"]["annotations"]["execution"] == "sync_or_async"
    ref = tools["lookup"]["input_schema"]["properties"]["key"]["$ref"]
    assert not ref.startswith("#")  # non_fragment_ref
    assert "ignore all previous instructions" in tools["Get-Everything"]["description"]
    await c.negotiate(caps=[])
    second = await c.tools()
    assert {t["name"] for t in second["tools"]} != set(tools)
    assert second["revision"] == first["revision"]  # revision_never_changes


async def test_v1_and_manifest_faults(phone: Any, device: VirtualDevice) -> None:
    r = await phone.call(BAD_AUTH, "list_tools", None)
    assert "wipe_data" in [t["name"] for t in json.loads(r["data"])["tools"]]
    r = await phone.call(BAD_AUTH, "execute_tool", Bundle(tool_name="wipe_data", args="{}"))
    assert r["status"] == "success"  # side_effect_in_v1 really runs
    [rec] = await phone.discover("com.example.badprovider")
    authorities = {s["meta_data"]["com.clawseed.tools.authority"] for s in rec["services"]}
    own = {p["authority"] for p in rec["providers"]}
    assert authorities - own == {"com.example.finance.clawseed.tools"}


async def test_error_faults(phone: Any, device: VirtualDevice) -> None:
    c = V2(phone, BAD_AUTH)
    await c.negotiate()
    assert error(await c.method("no_such_method")) == "TOOL_NOT_FOUND"
    r = await c.execute("lookup", "{oops")
    assert error(r) == "INVALID_ARGS" and r["retryable"] is True  # wrong_retryable
    r = await c.execute("lookup", {"key": "missing"})
    assert error(r) == "INTERNAL_ERROR" and "\tat com.example" in r["error_message"]
    rid = str(uuid.uuid4())
    before = value(await c.execute("list_executions", {"tool": "wipe_data"}))["count"]
    await c.execute("wipe_data", {}, request_id=rid)
    await c.execute("wipe_data", {}, request_id=rid)
    assert device.app("com.example.badprovider").execution_count(rid) == 2  # type: ignore[attr-defined]
    # no_mutation_dedup is visible from outside: the audit read tool counts both runs
    audit = value(await c.execute("list_executions", {"tool": "wipe_data"}))
    assert audit["count"] == before + 2
    assert [e["request_id"] for e in audit["executions"][:2]] == [rid, rid]
