"""com.example.pricealerts: background operations and large results (spec §4.4, §4.5)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import uuid
from typing import Any

import jsonschema
import pytest

from inspector.relay.api import TOO_LARGE, RelayError, StreamEnd
from inspector.virtual.apps.pricealerts import TOOLS
from inspector.virtual.device import VirtualDevice
from tests.virtual.phones import V2, data, error, value

PKG = "com.example.pricealerts"


async def poll(
    v2: V2, rid: str, op_id: str, until: tuple[str, ...] = ("succeeded", "failed", "cancelled")
) -> dict[str, Any]:
    for _ in range(500):
        state = data(await v2.method("get_operation", request_id=rid, operation_id=op_id))
        if state["state"] in until:
            return state
        await asyncio.sleep(0.01)
    raise AssertionError("operation did not finish")


async def start_sync(v2: V2, symbols: list[str], step_ms: int = 10) -> tuple[str, str]:
    rid = str(uuid.uuid4())
    r = await v2.execute("sync_watchlist", {"symbols": symbols, "step_ms": step_ms}, request_id=rid)
    assert r["status"] == "accepted" and r["request_id"] == rid
    d = data(r)
    assert d["poll_after_ms"] > 0
    return rid, d["operation_id"]


async def test_operation_succeeds_with_progress(v2: V2) -> None:
    rid, op = await start_sync(v2, ["ACME", "GLOBX", "STARK"], step_ms=30)
    running = await poll(v2, rid, op, until=("running", "succeeded"))
    assert "poll_after_ms" in running or running["state"] == "succeeded"
    final = await poll(v2, rid, op)
    assert final["state"] == "succeeded"
    assert final["progress"]["current"] == final["progress"]["total"] == 3
    assert final["result"]["kind"] == "inline"
    assert final["result"]["value"]["synced"] == 3
    # retrying the execution returns the same operation
    again = await v2.execute(
        "sync_watchlist", {"symbols": ["ACME", "GLOBX", "STARK"], "step_ms": 30}, request_id=rid
    )
    assert data(again)["operation_id"] == op


async def test_audit_read_tool_counts_each_execution_once(v2: V2) -> None:
    """list_executions is the outside view of sync_watchlist: one entry per effect, none
    for a retry with the same request_id."""
    audit = {"tool": "sync_watchlist"}
    assert value(await v2.execute("list_executions", audit)) == {"count": 0, "executions": []}
    rid, op = await start_sync(v2, ["ACME"], step_ms=0)
    await poll(v2, rid, op)
    await v2.execute("sync_watchlist", {"symbols": ["ACME"], "step_ms": 0}, request_id=rid)
    log = value(await v2.execute("list_executions", audit))
    assert log["count"] == 1
    assert [(e["request_id"], e["tool"]) for e in log["executions"]] == [
        (rid, "sync_watchlist")
    ]
    await v2.execute("create_alert", {"symbol": "ACME", "price": 100})
    everything = value(await v2.execute("list_executions", {"limit": 1}))
    assert everything["count"] == 2 and len(everything["executions"]) == 1
    assert everything["executions"][0]["tool"] == "create_alert"  # newest first
    assert error(await v2.execute("list_executions", {"limit": 10_000})) == "INVALID_ARGS"


async def test_operation_failure_is_structured(v2: V2) -> None:
    rid, op = await start_sync(v2, ["ACME", "NOPE"])
    final = await poll(v2, rid, op)
    assert final["state"] == "failed"
    assert final["error"]["error_code"] == "INVALID_ARGS"
    assert final["error"]["retryable"] is False


async def test_cancel_before_commit(v2: V2, device: VirtualDevice) -> None:
    rid, op = await start_sync(v2, ["ACME"] * 20, step_ms=20)
    r = await v2.method("cancel_operation", request_id=rid, operation_id=op)
    assert data(r)["state"] == "cancellation_requested"
    final = await poll(v2, rid, op)
    assert final["state"] == "cancelled"
    assert device.app(PKG).execution_count(rid) == 0  # type: ignore[attr-defined]


async def test_cancel_after_commit_is_conflict(v2: V2) -> None:
    rid, op = await start_sync(v2, ["ACME"], step_ms=0)
    await poll(v2, rid, op)
    r = await v2.method("cancel_operation", request_id=rid, operation_id=op)
    assert error(r) == "CONFLICT"
    assert (await poll(v2, rid, op))["state"] == "succeeded"


async def test_cancel_after_commit_while_still_running_is_conflict(
    v2: V2, device: VirtualDevice
) -> None:
    rid, op = await start_sync(v2, ["ACME"], step_ms=300)
    for _ in range(200):
        state = data(await v2.method("get_operation", request_id=rid, operation_id=op))
        if state.get("progress", {}).get("message", "").startswith("Committed"):
            break
        await asyncio.sleep(0.01)
    assert state["state"] == "running"
    r = await v2.method("cancel_operation", request_id=rid, operation_id=op)
    assert error(r) == "CONFLICT"
    assert (await poll(v2, rid, op))["state"] == "succeeded"
    assert device.app(PKG).execution_count(rid) == 1  # type: ignore[attr-defined]


async def test_operation_bound_to_request_id_and_caller(v2: V2) -> None:
    rid, op = await start_sync(v2, ["ACME"], step_ms=0)
    r = await v2.method("get_operation", operation_id=op)  # a fresh request_id
    assert error(r) == "INVALID_REQUEST"
    r = await v2.method("get_operation", request_id=rid, operation_id="op_unknown")
    assert error(r) == "INVALID_REQUEST"


async def test_operations_need_negotiated_capabilities(phone: Any) -> None:
    c = V2(phone)
    await c.negotiate(caps=[])
    r = await c.method("get_operation", operation_id="op_x")
    assert error(r) == "UNSUPPORTED_CAPABILITY"
    assert error(await c.method("cancel_operation", operation_id="op_x")) == (
        "UNSUPPORTED_CAPABILITY"
    )
    # without async_operations the same tool answers synchronously
    r = await c.execute("sync_watchlist", {"symbols": ["WAYNE"], "step_ms": 0})
    assert value(r)["watchlist"] == [{"symbol": "WAYNE", "price": 188.8}]


async def test_restart_mid_operation_resumes_without_duplicate(
    v2: V2, phone: Any, device: VirtualDevice
) -> None:
    rid, op = await start_sync(v2, ["ACME", "GLOBX", "UMBRL", "STARK"], step_ms=40)
    await poll(v2, rid, op, until=("running",))
    await asyncio.sleep(0.06)
    assert await phone.fault("restart_process", package=PKG)
    app = device.app(PKG)
    assert not app.process_running
    r = await v2.method("get_operation", request_id=rid, operation_id=op)
    assert error(r) == "NEGOTIATION_REQUIRED"
    await v2.negotiate()  # the first call starts the process again, which resumes the op
    final = await poll(v2, rid, op)
    assert final["state"] == "succeeded"
    assert final["result"]["value"]["synced"] == 4
    assert app.execution_count(rid) == 1  # type: ignore[attr-defined]
    assert app.process_starts == 2


# --- large results ------------------------------------------------------------------------------


async def read_all(phone: Any, handle: str, max_bytes: int = 1 << 30) -> tuple[bytes, StreamEnd]:
    out = bytearray()
    end = None
    async for item in phone.read_file(handle, max_bytes):
        if isinstance(item, StreamEnd):
            end = item
        else:
            out += item
    assert end is not None
    return bytes(out), end


async def test_large_result_through_a_file(v2: V2, phone: Any) -> None:
    r = await v2.execute("export_history", {"rows": 5000})
    d = data(r)
    assert d["kind"] == "file" and d["media_type"] == "application/json"
    fd = r["result_fd"]
    assert fd.size == d["size_bytes"]
    body, end = await read_all(phone, fd.id)
    assert len(body) == d["size_bytes"] == end.size
    assert hashlib.sha256(body).hexdigest() == d["sha256"] == end.sha256
    doc = json.loads(body)
    spec = next(t for t in TOOLS if t.name == "export_history")
    jsonschema.validate(doc, spec.output_schema)
    assert len(doc["history"]) == 5001 and doc["history"][4999]["i"] == "0000004999"
    assert await phone.close_handle(fd.id) is True
    assert await phone.close_handle(fd.id) is False


async def test_exact_byte_size(v2: V2, phone: Any) -> None:
    r = await v2.execute("export_history", {"bytes": 300_001})
    body, _ = await read_all(phone, r["result_fd"].id)
    assert len(body) == 300_001
    json.loads(body)


async def test_small_history_is_inline(v2: V2) -> None:
    v = value(await v2.execute("export_history", {"rows": 3}))
    assert [row["i"] for row in v["history"][:3]] == ["0000000000", "0000000001", "0000000002"]


async def test_result_too_large_without_capability(phone: Any) -> None:
    c = V2(phone)
    await c.negotiate(caps=["async_operations"])
    r = await c.execute("export_history", {"rows": 5000})
    assert error(r) == "RESULT_TOO_LARGE" and "result_fd" not in r


async def test_corrupt_digest_is_detectable(v2: V2, phone: Any) -> None:
    await phone.fault("corrupt_digest", package=PKG)
    r = await v2.execute("export_history", {"rows": 4000})
    body, end = await read_all(phone, r["result_fd"].id)
    assert end.sha256 == hashlib.sha256(body).hexdigest()
    assert end.sha256 != data(r)["sha256"]
    assert len(body) == data(r)["size_bytes"]


async def test_read_limit_is_enforced(v2: V2, phone: Any) -> None:
    r = await v2.execute("export_history", {"rows": 4000})
    with pytest.raises(RelayError) as exc:
        await read_all(phone, r["result_fd"].id, max_bytes=1000)
    assert exc.value.code == TOO_LARGE


async def test_handles_are_per_connection(v2: V2, device: VirtualDevice) -> None:
    from tests.virtual.phones import BackendPhone

    r = await v2.execute("export_history", {"rows": 4000})
    other = BackendPhone(device)
    with pytest.raises(RelayError):
        await read_all(other, r["result_fd"].id)
