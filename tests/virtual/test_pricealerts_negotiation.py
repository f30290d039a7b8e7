"""com.example.pricealerts: negotiation and descriptors (spec §2.2, §3, §4)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from inspector.protocol.bundle import Bundle, Int, IntArray
from inspector.virtual.app import CallContext, Caller
from inspector.virtual.device import VirtualDevice
from tests.virtual.phones import PRICE_AUTH, V2, data, error, value


async def test_negotiate_selects_highest_common_version_and_intersects(phone: Any) -> None:
    c = V2(phone)
    r = await c.negotiate(caps=["large_results", "telepathy"])
    d = data(r)
    assert r["protocol_version"] == Int(2)
    assert d["selected_version"] == 2
    assert d["provider_id"] == "com.example.pricealerts"
    assert d["capabilities"] == ["large_results"]
    limits = d["limits"]
    assert limits["max_request_bytes"] >= 65536
    assert limits["max_inline_result_bytes"] >= 262144
    assert limits["max_concurrent_requests"] >= 1
    assert limits["idempotency_window_seconds"] >= 86400
    assert d["expires_at"].endswith("Z")


async def test_tokens_are_random_and_short(phone: Any) -> None:
    tokens = set()
    for _ in range(3):
        c = V2(phone)
        await c.negotiate()
        assert len(c.token.encode()) <= 256
        tokens.add(c.token)
    assert len(tokens) == 3


async def test_no_common_version(phone: Any) -> None:
    r = await V2(phone).negotiate(versions=(3,))
    assert error(r) == "UNSUPPORTED_VERSION"
    assert r["retryable"] is False


async def test_negotiate_needs_typed_fields(phone: Any) -> None:
    r = await phone.call(PRICE_AUTH, "negotiate", Bundle(consumer_versions="2"))
    assert error(r) == "INVALID_REQUEST"
    r = await phone.call(
        PRICE_AUTH, "negotiate", Bundle(consumer_versions=IntArray([2]), consumer_capabilities="[")
    )
    assert error(r) == "INVALID_REQUEST"


async def test_restart_invalidates_the_token(v2: V2, phone: Any) -> None:
    assert (await v2.method("get_provider_info"))["status"] == "success"
    assert await phone.force_stop("com.example.pricealerts")
    r = await v2.method("get_provider_info")
    assert error(r) == "NEGOTIATION_REQUIRED"
    assert r["retryable"] is True
    await v2.negotiate()
    assert (await v2.method("get_provider_info"))["status"] == "success"


async def test_token_is_bound_to_the_calling_uid(device: VirtualDevice) -> None:
    app = device.app("com.example.pricealerts")
    mine = CallContext(device, app, Caller(), "c1")
    app.ensure_process()
    extras = Bundle(consumer_versions=IntArray([2]), consumer_capabilities="[]")
    token = json.loads((await app.call(mine, PRICE_AUTH, "negotiate", None, extras))["data"])[
        "session_token"
    ]
    other = CallContext(device, app, Caller(uid=10_999, package="com.evil"), "c2")
    c = V2(None)
    c.token = token
    r = await app.call(other, PRICE_AUTH, "list_tools", None, c.env())
    assert error(r) == "INVALID_REQUEST"


async def test_envelope_is_checked(v2: V2, phone: Any) -> None:
    bad_pv = v2.env()
    bad_pv["protocol_version"] = "2"
    assert error(await phone.call(PRICE_AUTH, "list_tools", bad_pv)) == "INVALID_REQUEST"
    assert error(await v2.method("list_tools", request_id="not-a-uuid")) == "INVALID_REQUEST"
    no_deadline = v2.env()
    del no_deadline["deadline_at_ms"]
    assert error(await phone.call(PRICE_AUTH, "list_tools", no_deadline)) == "INVALID_REQUEST"
    v2.token = "forged"
    assert error(await v2.method("list_tools")) == "NEGOTIATION_REQUIRED"


async def test_provider_info_has_scopes(v2: V2) -> None:
    r = await v2.method("get_provider_info")
    d = data(r)
    assert r["request_id"]
    assert d["provider_id"] == "com.example.pricealerts"
    assert d["schema_dialect"] == "https://json-schema.org/draft/2020-12/schema"
    names = {s["name"]: s for s in d["scopes"]}
    assert names["alerts.write"] == {
        "name": "alerts.write",
        "title": "Manage price alerts",
        "description": "Create, update, and delete alerts",
        "access": "write",
        "sensitivity": "financial",
    }


async def test_tool_list_annotations_follow_negotiation(phone: Any) -> None:
    with_async = V2(phone)
    await with_async.negotiate()
    without = V2(phone)
    await without.negotiate(caps=["large_results"])
    a, b = await with_async.tools(), await without.tools()
    ta = {t["name"]: t for t in a["tools"]}
    tb = {t["name"]: t for t in b["tools"]}
    assert set(ta) == {
        "list_alerts",
        "get_quote",
        "create_alert",
        "delete_alert",
        "sync_watchlist",
        "share_watchlist",
        "export_history",
        "list_executions",
    }
    assert ta["list_executions"]["annotations"]["effect"] == "read"
    assert ta["list_executions"]["scopes"] == ["alerts.read"]
    assert ta["create_alert"]["annotations"]["execution"] == "sync_or_async"
    assert tb["create_alert"]["annotations"]["execution"] == "sync"
    assert a["revision"] != b["revision"]  # security semantics differ → revision differs
    assert (await with_async.tools())["revision"] == a["revision"]
    delete = ta["delete_alert"]["annotations"]
    assert delete["effect"] == "delete" and delete["confirmation"] == "always"
    assert ta["create_alert"]["annotations"]["confirmation"] == "provider_policy"
    assert ta["list_alerts"]["annotations"]["effect"] == "read"


async def test_unknown_method_and_tool(v2: V2) -> None:
    r = await v2.method("drop_tables")
    assert error(r) == "METHOD_NOT_FOUND" and r["retryable"] is False
    assert error(await v2.execute("launch_rockets", {})) == "TOOL_NOT_FOUND"


async def test_invalid_args_by_schema_and_business(v2: V2) -> None:
    r = await v2.execute("create_alert", {"symbol": "ACME", "price": -1})
    assert error(r) == "INVALID_ARGS" and r["retryable"] is False
    assert error(await v2.execute("create_alert", "{not json")) == "INVALID_ARGS"
    assert error(await v2.execute("get_quote", {"symbol": "NOPE"})) == "INVALID_ARGS"


async def test_args_over_max_request_bytes(v2: V2) -> None:
    big = json.dumps({"alert_id": "x" * 70_000})
    assert error(await v2.execute("delete_alert", big)) == "INVALID_REQUEST"


async def test_v1_sees_only_reads(phone: Any) -> None:
    r = await phone.call(PRICE_AUTH, "list_tools", None)
    assert r["status"] == "success" and "protocol_version" not in r
    names = [t["name"] for t in json.loads(r["data"])["tools"]]
    assert names == ["list_alerts", "get_quote", "export_history"]
    assert all("parameters" in t for t in json.loads(r["data"])["tools"])
    q = await phone.call(
        PRICE_AUTH, "execute_tool", Bundle(tool_name="get_quote", args='{"symbol":"ACME"}')
    )
    assert json.loads(q["data"])["price"] == 101.25
    r = await phone.call(
        PRICE_AUTH,
        "execute_tool",
        Bundle(tool_name="create_alert", args='{"symbol":"ACME","price":1}'),
    )
    assert error(r) == "TOOL_NOT_FOUND"
    assert error(await phone.call(PRICE_AUTH, "whatever", None)) == "TOOL_NOT_FOUND"


async def test_deadline_checked_before_side_effects(v2: V2, device: VirtualDevice) -> None:
    r = await v2.execute("create_alert", {"symbol": "ACME", "price": 100}, deadline_ms=-1)
    assert error(r) == "DEADLINE_EXCEEDED"
    assert value(await v2.execute("list_alerts", {}))["alerts"] == []


async def test_session_expires(phone: Any, device: VirtualDevice) -> None:
    device.app("com.example.pricealerts").SESSION_TTL_MS = 30  # type: ignore[attr-defined]
    c = V2(phone)
    await c.negotiate()
    await asyncio.sleep(0.05)
    assert error(await c.method("list_tools")) == "NEGOTIATION_REQUIRED"


async def test_concurrency_limit(v2: V2, phone: Any, device: VirtualDevice) -> None:
    app: Any = device.app("com.example.pricealerts")
    original = app.dispatch_v2

    async def slow(*args: Any) -> Any:  # keep each call in flight inside the provider
        await asyncio.sleep(0.2)
        return await original(*args)

    app.dispatch_v2 = slow
    replies = await asyncio.gather(*[v2.method("get_provider_info") for _ in range(6)])
    codes = sorted(r["status"] if r["status"] == "success" else r["error_code"] for r in replies)
    assert codes.count("success") == 4
    limited = [r for r in replies if r["status"] == "error"]
    assert all(r["error_code"] == "RATE_LIMITED" and r["retryable"] for r in limited)
    assert all(r["retry_after_ms"] > 0 for r in limited)
