"""Providers whose reply envelopes attack the inspector (issue 12's sweep): every case is a
price-alert provider whose reply to one method is rewritten — wrong Bundle types, missing
fields, nested junk, absurd numbers. Package `com.example.he.<case>`; `CASES` lists them."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

from inspector.protocol.bundle import Bundle, Int, IntArray, Long, StringArray
from inspector.virtual.apps.pricealerts import PriceAlertsProvider

EVIL = "<b>x</b>\u202e\x1b[2J\x00"
DEEP = "[" * 100_000 + "]" * 100_000
_COUNTER = itertools.count()


def _data(b: Bundle) -> dict[str, Any]:
    return json.loads(b["data"]) if isinstance(b.get("data"), str) else {}


def _with_data(b: Bundle, fn: Callable[[dict[str, Any]], Any]) -> Bundle:
    d = _data(b)
    out = fn(d)
    b = Bundle(b)
    b["data"] = out if isinstance(out, str) else json.dumps(out if out is not None else d)
    return b


def _set(**kv: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def f(d: dict[str, Any]) -> dict[str, Any]:
        d.update(kv)
        return d
    return f


def _tools(fn: Callable[[list[Any]], Any]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def f(d: dict[str, Any]) -> dict[str, Any]:
        d["tools"] = fn(d.get("tools", []))
        return d
    return f


def _each_tool(**kv: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return _tools(lambda ts: [{**t, **kv} for t in ts])


def _many(ts: list[Any]) -> list[Any]:
    base = ts[0]
    return [{**base, "name": f"t{i}"} for i in range(10_000)]


# case → (method, rewrite of the reply Bundle)
CASES: dict[str, tuple[str, Callable[[Bundle], Bundle]]] = {
    # envelope field types
    "status_int": ("list_tools", lambda b: Bundle(b, status=Int(1))),
    "status_array": ("list_tools", lambda b: Bundle(b, status=StringArray(["success"]))),
    "data_int": ("list_tools", lambda b: Bundle(b, data=Int(5))),
    "data_bundle": ("list_tools", lambda b: Bundle(b, data=Bundle(x="y"))),
    "data_missing": ("list_tools", lambda b: Bundle({k: v for k, v in b.items() if k != "data"})),
    "data_deep": ("list_tools", lambda b: Bundle(b, data=DEEP)),
    "data_not_json": ("list_tools", lambda b: Bundle(b, data="{not json" + EVIL)),
    "request_id_int": ("list_tools", lambda b: Bundle(b, request_id=Long(7))),
    "pv_string": ("list_tools", lambda b: Bundle(b, protocol_version="2")),
    "empty_bundle": ("list_tools", lambda b: Bundle()),
    "error_fields_odd": ("list_tools", lambda b: Bundle(
        status="error", request_id=b.get("request_id"), error_code=IntArray([1]),
        error_message=Bundle(a="b"), retry_after_ms="soon", error_details=DEEP)),
    "error_retry_negative": ("list_tools", lambda b: Bundle(
        status="error", request_id=b.get("request_id"), error_code="RATE_LIMITED",
        error_message=EVIL, retryable=True, retry_after_ms=Long(-5))),
    "error_retry_huge": ("list_tools", lambda b: Bundle(
        status="error", request_id=b.get("request_id"), error_code="RATE_LIMITED",
        error_message="x" * 200_000, retryable=True, retry_after_ms=Long(2**63 - 1))),
    # list_tools data
    "tools_not_list": ("list_tools", lambda b: _with_data(b, _set(tools={"a": 1}))),
    "tools_of_ints": ("list_tools", lambda b: _with_data(b, _set(tools=[1, 2, "x", None]))),
    "tools_10000": ("list_tools", lambda b: _with_data(b, _tools(_many))),
    "tool_name_1mb": ("list_tools", lambda b: _with_data(b, _each_tool(name="n" * 1_000_000))),
    "tool_desc_1mb_evil": ("list_tools", lambda b: _with_data(
        b, _each_tool(description=EVIL * 100_000, title=EVIL))),
    "tool_name_int": ("list_tools", lambda b: _with_data(b, _each_tool(name=5))),
    "schema_not_object": ("list_tools", lambda b: _with_data(b, _each_tool(input_schema=[1]))),
    "schema_string": ("list_tools", lambda b: _with_data(b, _each_tool(input_schema="object"))),
    "schema_remote_ref": ("list_tools", lambda b: _with_data(b, _each_tool(
        input_schema={"$ref": "https://evil.example/schema.json"}))),
    "schema_recursive_ref": ("list_tools", lambda b: _with_data(b, _each_tool(
        input_schema={"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/a"}}}))),
    "schema_bad_type": ("list_tools", lambda b: _with_data(b, _each_tool(
        input_schema={"type": 12, "properties": []}))),
    "revision_int": ("list_tools", lambda b: _with_data(b, _set(revision=12345))),
    "revision_nested": ("list_tools", lambda b: _with_data(b, _set(revision={"a": [1]}))),
    "revision_every_call": ("list_tools", lambda b: _with_data(
        b, _set(revision=f"r{next(_COUNTER)}" + "\u202e" * 3))),
    "data_array": ("list_tools", lambda b: _with_data(b, lambda d: [1, 2])),
    "data_null": ("list_tools", lambda b: _with_data(b, lambda d: "null")),
    # negotiate data
    "neg_limits_negative": ("negotiate", lambda b: _with_data(b, lambda d: {**d, "limits": {
        **d["limits"], "max_request_bytes": -1, "max_inline_result_bytes": -(2**63),
        "max_concurrent_requests": 2**70}})),
    "neg_limits_strings": ("negotiate", lambda b: _with_data(b, _set(limits="lots"))),
    "neg_caps_nested": ("negotiate", lambda b: _with_data(b, _set(capabilities=[[1], {"a": 2}]))),
    "neg_token_int": ("negotiate", lambda b: _with_data(b, _set(session_token=42))),
    "neg_token_huge": ("negotiate", lambda b: _with_data(b, _set(session_token="t" * 1_000_000))),
    "neg_version_string": ("negotiate", lambda b: _with_data(b, _set(selected_version="2"))),
    "neg_expires_odd": ("negotiate", lambda b: _with_data(b, _set(expires_at=[EVIL]))),
    "neg_pv_array": ("negotiate", lambda b: Bundle(b, protocol_version=IntArray([2]))),
    "neg_data_deep": ("negotiate", lambda b: Bundle(b, data=DEEP)),
    # execute_tool replies (get_quote)
    "result_deep": ("execute_tool", lambda b: _with_data(b, lambda d: DEEP)),
    "result_evil_text": ("execute_tool", lambda b: _with_data(b, lambda d: {"x": EVIL})),
    "result_kind_odd": ("execute_tool", lambda b: _with_data(b, lambda d: {
        "kind": ["file"], "size_bytes": "big"})),
    "file_size_zero": ("execute_tool", lambda b: _with_data(b, lambda d: {
        "kind": "file", "media_type": "application/json", "size_bytes": 0,
        "sha256": "0" * 64})),
    "file_size_negative": ("execute_tool", lambda b: _with_data(b, lambda d: {
        "kind": "file", "media_type": "application/json", "size_bytes": -1,
        "sha256": "0" * 64})),
    "file_size_2_63": ("execute_tool", lambda b: _with_data(b, lambda d: {
        "kind": "file", "media_type": "application/json", "size_bytes": 2**63,
        "sha256": "0" * 64})),
    "error_details_deep": ("execute_tool", lambda b: Bundle(
        status="error", request_id=b.get("request_id"), error_code="INTERNAL",
        error_message=EVIL, retryable=False, error_details=DEEP)),
    "error_code_unknown": ("execute_tool", lambda b: Bundle(
        status="error", request_id=b.get("request_id"), error_code=EVIL * 1000,
        error_message=EVIL, retryable=Int(1))),
    "op_poll_negative": ("execute_tool", lambda b: Bundle(
        status="accepted", request_id=b.get("request_id"), protocol_version=Int(2),
        data=json.dumps({"operation_id": "op-1", "poll_after_ms": -1}))),
    "op_poll_huge": ("execute_tool", lambda b: Bundle(
        status="accepted", request_id=b.get("request_id"), protocol_version=Int(2),
        data=json.dumps({"operation_id": "op-1", "poll_after_ms": 2**63}))),
    # provider info
    "info_nested": ("get_provider_info", lambda b: _with_data(b, lambda d: {
        k: {"x": [EVIL]} for k in d})),
}


def _make(case: str, method: str, rewrite: Callable[[Bundle], Bundle]) -> type:
    class Hostile(PriceAlertsProvider):
        PACKAGE = f"com.example.he.{case}"
        LABEL = f"HE {case}"

        async def call(self, ctx, authority, m, arg, extras):  # type: ignore[no-untyped-def]
            reply = await super().call(ctx, authority, m, arg, extras)
            if m == method and reply is not None:
                return rewrite(reply)
            return reply

    Hostile.__name__ = f"Hostile_{case}"
    return Hostile


def register(device):  # type: ignore[no-untyped-def]
    for case, (method, rewrite) in CASES.items():
        device.install(_make(case, method, rewrite)())
