"""CETP models, reply parsing and request builders, against the spec's own examples."""

from __future__ import annotations

import copy
import hashlib
import json
import pickle

import pytest

from inspector.protocol import cetp
from inspector.protocol.bundle import (
    Bundle,
    FileDescriptorHandle,
    Int,
    IntArray,
    Long,
    PendingIntentHandle,
    bundle,
)
from inspector.protocol.cetp import ProtocolViolation

from .conftest import load, tool

# --- spec examples ------------------------------------------------------------------


def test_spec_negotiate_parses(spec_negotiate):
    r = cetp.parse_negotiate(spec_negotiate)
    assert r.selected_version == 2
    assert r.session_token == "opaque-provider-issued-token"
    assert r.capabilities == [cetp.CAP_ASYNC, cetp.CAP_CANCEL, cetp.CAP_LARGE]
    assert r.limits.max_request_bytes == 65536
    assert r.limits.below_minimum() == {}
    assert r.has(cetp.CAP_LARGE)


def test_spec_provider_info_parses(spec_info):
    info = cetp.parse_provider_info(spec_info, v2=True)
    assert isinstance(info, cetp.ProviderInfo)
    assert info.schema_dialect == cetp.DRAFT_2020_12
    s = info.scope("alerts.write")
    assert s is not None and s.access == cetp.ScopeAccess.WRITE
    assert s.sensitivity == cetp.ScopeSensitivity.FINANCIAL


def test_provider_info_dialect_defaults_to_2020_12(spec_info):
    del spec_info["schema_dialect"]
    assert cetp.parse_provider_info(spec_info).schema_dialect == cetp.DRAFT_2020_12


def test_spec_tool_list_parses(spec_tools):
    tl = cetp.parse_tool_list(spec_tools)
    assert tl.revision == "tools-42"
    t = tl.tool("create_alert")
    assert t is not None
    a = t.annotations
    assert a.effect == cetp.Effect.CREATE and a.risk == cetp.Risk.MODERATE
    assert a.execution == cetp.Execution.SYNC_OR_ASYNC
    assert a.side_effecting and not a.needs_confirmation_always
    assert a.defaulted == frozenset()
    assert t.scopes == ["alerts.write"]


def test_spec_accepted_and_operation():
    acc = cetp.parse_accepted(load("spec_accepted.json"))
    assert acc.operation_id == "op_123" and acc.poll_after_ms == 1000
    op = cetp.parse_operation(load("spec_operation_running.json"))
    assert op.state == cetp.OpState.RUNNING and not op.is_terminal
    assert op.progress is not None and op.progress.fraction == 0.4
    assert op.progress.message == "Synchronizing"


def test_spec_file_result_placeholder_digest_is_rejected():
    with pytest.raises(ProtocolViolation) as e:
        cetp.parse_result_envelope(load("spec_file_result.json"))
    assert e.value.field == "data.sha256"
    assert "64 lowercase hex" in e.value.message


def test_file_result_with_real_digest():
    d = load("spec_file_result.json")
    d["sha256"] = hashlib.sha256(b"x").hexdigest()
    r = cetp.parse_result_envelope(d)
    assert isinstance(r, cetp.FileResult) and r.size_bytes == 1048576
    d["sha256"] = d["sha256"].upper()
    with pytest.raises(ProtocolViolation):
        cetp.parse_result_envelope(d)


def test_v1_finance_samples():
    tl = cetp.parse_v1_tool_list(load("cetp-v1-finance.list_tools.json"))
    assert [t.name for t in tl.tools] == ["get_portfolio_holdings", "get_transactions"]
    assert tl.tool("get_transactions").parameters["required"] == ["start_date"]
    info = cetp.parse_provider_info(load("cetp-v1-finance.get_provider_info.json"), v2=False)
    assert isinstance(info, cetp.V1ProviderInfo)
    assert info.provider_name == "MyFinance"
    assert [s.name for s in info.scopes] == ["holdings", "transactions"]


def test_v1_provider_info_is_not_v2():
    with pytest.raises(ProtocolViolation) as e:
        cetp.parse_provider_info(load("cetp-v1-finance.get_provider_info.json"), v2=True)
    assert e.value.field in ("data.provider_id", "data.scopes[0].access")
    assert "missing required field" in e.value.message


# --- tolerant: unknown fields ignored --------------------------------------------------


def test_unknown_fields_are_ignored(spec_tools, spec_negotiate, spec_info):
    spec_tools["x_future"] = 1
    spec_tools["tools"][0]["x_vendor"] = {"a": 1}
    spec_tools["tools"][0]["annotations"]["x_new_hint"] = "whatever"
    assert cetp.parse_tool_list(spec_tools).tools[0].name == "create_alert"
    spec_negotiate["limits"]["max_whatever"] = 5
    spec_negotiate["extra"] = None
    assert cetp.parse_negotiate(spec_negotiate).limits.max_concurrent_requests == 4
    spec_info["scopes"][0]["x"] = 1
    assert cetp.parse_provider_info(spec_info).scopes[0].name == "alerts.write"


# --- strict: missing required fields and unknown security enums ------------------------


@pytest.mark.parametrize("key", ["max_request_bytes", "max_inline_result_bytes",
                                 "max_concurrent_requests", "idempotency_window_seconds"])
def test_missing_limit_is_named(spec_negotiate, key):
    del spec_negotiate["limits"][key]
    with pytest.raises(ProtocolViolation) as e:
        cetp.parse_negotiate(spec_negotiate)
    assert e.value.field == f"data.limits.{key}"
    assert str(e.value) == f"data.limits.{key}: missing required field (CETP v2 §2.2)"


@pytest.mark.parametrize("key", ["selected_version", "session_token", "capabilities", "limits"])
def test_missing_negotiate_field(spec_negotiate, key):
    del spec_negotiate[key]
    with pytest.raises(ProtocolViolation) as e:
        cetp.parse_negotiate(spec_negotiate)
    assert e.value.field == f"data.{key}" and e.value.section == "§2.2"


@pytest.mark.parametrize("key", ["name", "description", "input_schema", "annotations"])
def test_missing_tool_field(key):
    t = tool()
    del t[key]
    with pytest.raises(ProtocolViolation) as e:
        cetp.parse_tool_list({"revision": "r", "tools": [t]})
    assert e.value.field == f"data.tools[0].{key}"
    assert e.value.message == "missing required field"


@pytest.mark.parametrize("key", ["effect", "risk", "idempotent", "confirmation"])
def test_missing_required_annotation(key):
    t = tool()
    del t["annotations"][key]
    with pytest.raises(ProtocolViolation) as e:
        cetp.parse_tool_list({"revision": "r", "tools": [t]})
    assert e.value.field == f"data.tools[0].annotations.{key}"
    assert e.value.section == "§3.4"


@pytest.mark.parametrize("key", ["destructive", "open_world", "execution"])
def test_optional_annotations_default_and_are_reported(key):
    t = tool()
    del t["annotations"][key]
    a = cetp.parse_tool_list({"revision": "r", "tools": [t]}).tools[0].annotations
    assert key in a.defaulted


@pytest.mark.parametrize(("where", "key", "bad"), [
    ("annotations", "effect", "erase"),
    ("annotations", "risk", "extreme"),
    ("annotations", "confirmation", "sometimes"),
    ("annotations", "execution", "async"),
])
def test_unknown_security_enum_in_tool(where, key, bad):
    t = tool(annotations={key: bad})
    with pytest.raises(ProtocolViolation) as e:
        cetp.parse_tool_list({"revision": "r", "tools": [t]})
    assert e.value.field == f"data.tools[0].{where}.{key}"
    assert "unknown security enum value" in e.value.message
    assert repr(bad).replace("'", '"') in e.value.message


@pytest.mark.parametrize(("key", "bad"), [("access", "admin"), ("sensitivity", "secret")])
def test_unknown_security_enum_in_scope(spec_info, key, bad):
    spec_info["scopes"][0][key] = bad
    with pytest.raises(ProtocolViolation) as e:
        cetp.parse_provider_info(spec_info)
    assert e.value.field == f"data.scopes[0].{key}"
    assert e.value.message.startswith("unknown security enum value")


def test_security_enum_is_case_sensitive():
    with pytest.raises(ProtocolViolation):
        cetp.parse_tool_list({"revision": "r", "tools": [tool(annotations={"risk": "HIGH"})]})


def test_wrong_json_types_are_named(spec_negotiate):
    spec_negotiate["selected_version"] = "2"
    with pytest.raises(ProtocolViolation) as e:
        cetp.parse_negotiate(spec_negotiate)
    assert e.value.field == "data.selected_version"
    assert e.value.message == "expected an integer, got string"
    t = tool(annotations={"idempotent": "false"})
    with pytest.raises(ProtocolViolation) as e:
        cetp.parse_tool_list({"revision": "r", "tools": [t]})
    assert e.value.message == "expected a boolean, got string"
    with pytest.raises(ProtocolViolation) as e:
        cetp.parse_tool_list({"revision": 42, "tools": []})
    assert e.value.field == "data.revision"


def test_not_an_object():
    for fn in (cetp.parse_negotiate, cetp.parse_tool_list, cetp.parse_accepted,
               cetp.parse_operation, cetp.parse_result_envelope, cetp.parse_v1_tool_list):
        with pytest.raises(ProtocolViolation) as e:
            fn([1, 2])
        assert e.value.field == "data"
        assert "expected a JSON object, got array" in e.value.message


def test_violation_lists_all_errors_and_pickles(spec_negotiate):
    spec_negotiate["limits"] = {}
    with pytest.raises(ProtocolViolation) as e:
        cetp.parse_negotiate(spec_negotiate)
    assert len(e.value.errors) == 4
    v2 = pickle.loads(pickle.dumps(e.value))
    assert str(v2) == str(e.value) and v2.errors == e.value.errors


def test_lenient_tool_list_keeps_good_tools():
    good = tool()
    bad = tool(name="bad_tool", annotations={"risk": "extreme"})
    tl, problems = cetp.parse_tool_list_lenient({"revision": "r", "tools": [good, bad, 7]})
    assert [t.name for t in tl.tools] == ["create_alert"]
    assert [p.field for p in problems] == ["data.tools[1].annotations.risk", "data.tools[2]"]
    assert problems[0].section == "§3.4"
    with pytest.raises(ProtocolViolation):
        cetp.parse_tool_list_lenient({"tools": []})


# --- results and operations ------------------------------------------------------------


def test_inline_result_value_may_be_null_but_must_exist():
    assert cetp.parse_result_envelope({"kind": "inline", "value": None}).value is None
    with pytest.raises(ProtocolViolation) as e:
        cetp.parse_result_envelope({"kind": "inline"})
    assert e.value.field == "data.value"
    with pytest.raises(ProtocolViolation) as e:
        cetp.parse_result_envelope({"kind": "stream"})
    assert e.value.field == "data.kind" and "unknown result kind" in e.value.message
    with pytest.raises(ProtocolViolation) as e:
        cetp.parse_result_envelope({"value": 1})
    assert e.value.field == "data.kind"


def test_operation_terminal_states_need_payload():
    with pytest.raises(ProtocolViolation) as e:
        cetp.parse_operation({"operation_id": "o", "state": "succeeded"})
    assert e.value.field == "data.result"
    with pytest.raises(ProtocolViolation) as e:
        cetp.parse_operation({"operation_id": "o", "state": "failed"})
    assert e.value.field == "data.error"
    op = cetp.parse_operation({"operation_id": "o", "state": "succeeded",
                               "result": {"kind": "inline", "value": {"alert_id": "a1"}}})
    assert op.is_terminal and isinstance(op.result, cetp.InlineResult)
    op = cetp.parse_operation({"operation_id": "o", "state": "failed", "error": {
        "error_code": "CONFLICT", "error_message": "already filled", "retryable": False}})
    assert op.error is not None and op.error.error_code == "CONFLICT"
    with pytest.raises(ProtocolViolation) as e:
        cetp.parse_operation({"operation_id": "o", "state": "failed", "error": {
            "error_code": "CONFLICT", "error_message": "m"}})
    assert e.value.field == "data.error.retryable"


def test_cancel_ack_is_not_terminal():
    op = cetp.parse_operation({"operation_id": "o", "state": "cancellation_requested"})
    assert op.is_cancel_ack and not op.is_terminal
    assert cetp.parse_operation({"operation_id": "o", "state": "cancelled"}).is_terminal
    with pytest.raises(ProtocolViolation) as e:
        cetp.parse_operation({"operation_id": "o", "state": "paused"})
    assert e.value.field == "data.state"


# --- reply Bundles -----------------------------------------------------------------------


def ok_bundle(data: object = None, **more) -> Bundle:
    b = bundle(status="success", protocol_version=Int(2), request_id="r1",
               data=json.dumps({"kind": "inline", "value": data}))
    b.update(more)
    return b


def test_parse_success_reply():
    r = cetp.parse_reply(ok_bundle({"a": 1}), v2=True, request_id="r1")
    assert r.ok and r.protocol_version == 2 and r.request_id == "r1"
    assert r.decoded == {"kind": "inline", "value": {"a": 1}}
    assert r.problems == []
    assert isinstance(cetp.parse_result_envelope(r.decoded), cetp.InlineResult)


def test_null_bundle():
    with pytest.raises(ProtocolViolation) as e:
        cetp.parse_reply(None, v2=False)
    assert "null Bundle" in str(e.value)


@pytest.mark.parametrize("status", ["ok", "SUCCESS", "", "failure"])
def test_unknown_status(status):
    with pytest.raises(ProtocolViolation) as e:
        cetp.parse_reply(bundle(status=status, data="{}"), v2=True)
    assert e.value.field == "status" and "neither" in e.value.message


def test_status_wrong_type_or_missing():
    with pytest.raises(ProtocolViolation) as e:
        cetp.parse_reply(bundle(status=Int(1)), v2=True)
    assert e.value.message == "expected String, got int"
    with pytest.raises(ProtocolViolation) as e:
        cetp.parse_reply(bundle(data="{}"), v2=True)
    assert e.value.field == "status"


def test_accepted_is_v2_only():
    b = bundle(status="accepted", data='{"operation_id":"op"}')
    assert cetp.parse_reply(b, v2=True).accepted
    with pytest.raises(ProtocolViolation):
        cetp.parse_reply(b, v2=False)


def test_non_json_data():
    with pytest.raises(ProtocolViolation) as e:
        cetp.parse_reply(bundle(status="success", data="{not json"), v2=False)
    assert e.value.field == "data" and "not valid JSON" in e.value.message
    with pytest.raises(ProtocolViolation) as e:
        cetp.parse_reply(bundle(status="success", data="NaN"), v2=False)
    assert e.value.field == "data"


def test_data_wrong_type_and_missing():
    with pytest.raises(ProtocolViolation) as e:
        cetp.parse_reply(bundle(status="success", data=Bundle(a="b")), v2=False)
    assert e.value.field == "data" and "got Bundle" in e.value.message
    with pytest.raises(ProtocolViolation) as e:
        cetp.parse_reply(bundle(status="success"), v2=False)
    assert e.value.field == "data" and "missing" in e.value.message


def test_echo_problems_and_mismatch():
    r = cetp.parse_reply(bundle(status="success", data="{}"), v2=True, request_id="r1")
    assert {p.field for p in r.problems} == {"protocol_version", "request_id"}
    r = cetp.parse_reply(ok_bundle(protocol_version=Long(2)), v2=True, request_id="r1")
    assert [p.field for p in r.problems] == ["protocol_version"]
    with pytest.raises(ProtocolViolation) as e:
        cetp.parse_reply(ok_bundle(request_id="other"), v2=True, request_id="r1")
    assert e.value.field == "request_id"
    with pytest.raises(ProtocolViolation) as e:
        cetp.parse_reply(ok_bundle(protocol_version=Int(1)), v2=True, request_id="r1")
    assert "silently" in e.value.message
    with pytest.raises(ProtocolViolation) as e:
        cetp.parse_reply(ok_bundle(protocol_version="2"), v2=True, request_id="r1")
    assert e.value.field == "protocol_version"
    # negotiate replies carry no request id: no echo demanded
    assert cetp.parse_reply(bundle(status="success", data="{}"), v2=True).problems == []


def err_bundle(**over) -> Bundle:
    b = bundle(status="error", protocol_version=Int(2), request_id="r1",
               error_code="USER_ACTION_REQUIRED", error_message="Confirm the transfer",
               retryable=False)
    for k, v in over.items():
        if v is None:
            b.pop(k, None)
        else:
            b[k] = v
    return b


def test_error_reply():
    pi = PendingIntentHandle("pi1", "com.example.app", 0b1111)
    r = cetp.parse_reply(err_bundle(resolution=pi, resume_token="rt", retry_after_ms=Long(50),
                                    error_details='{"field":"price"}'),
                         v2=True, request_id="r1")
    assert r.is_error and r.error_code == "USER_ACTION_REQUIRED"
    e = r.error
    assert e.resolution == pi and e.resume_token == "rt" and e.retry_after_ms == 50
    assert e.error_details == {"field": "price"} and e.retryable is False


def test_error_retryable_as_string_is_rejected():
    with pytest.raises(ProtocolViolation) as e:
        cetp.parse_reply(err_bundle(retryable="false"), v2=True, request_id="r1")
    assert str(e.value) == "retryable: expected boolean, got String (CETP v2 §5)"


@pytest.mark.parametrize("key", ["error_code", "error_message", "retryable"])
def test_error_missing_fields_v2(key):
    with pytest.raises(ProtocolViolation) as e:
        cetp.parse_reply(err_bundle(**{key: None}), v2=True, request_id="r1")
    assert e.value.field == key and "missing" in e.value.message


def test_v1_error_needs_no_retryable():
    b = bundle(status="error", error_code="AUTH_REQUIRED", error_message="log in",
               resolution_hint="Open MyFinance", authorize_intent="com.example.AUTHORIZE")
    r = cetp.parse_reply(b, v2=False)
    assert r.error.retryable is None and r.error.authorize_intent == "com.example.AUTHORIZE"


@pytest.mark.parametrize(("key", "bad"), [
    ("retry_after_ms", "100"), ("resolution", "intent://x"), ("resume_token", Int(3)),
    ("error_details", Int(1)), ("result_fd", "fd"),
])
def test_error_wrong_bundle_types(key, bad):
    with pytest.raises(ProtocolViolation) as e:
        cetp.parse_reply(err_bundle(**{key: bad}), v2=True, request_id="r1")
    assert e.value.field == key


def test_soft_problems_in_error_reply():
    r = cetp.parse_reply(err_bundle(retry_after_ms=Int(5), error_details="{bad"), v2=True,
                         request_id="r1")
    assert {p.field for p in r.problems} == {"retry_after_ms", "error_details"}
    assert r.error.error_details == "{bad"


def test_result_fd():
    fd = FileDescriptorHandle("fd1", 10)
    r = cetp.parse_reply(ok_bundle(result_fd=fd), v2=True, request_id="r1")
    assert r.result_fd == fd


# --- builders ----------------------------------------------------------------------------


def test_negotiate_extras():
    b = cetp.negotiate_extras([1, 2], [cetp.CAP_ASYNC])
    assert b["consumer_versions"] == IntArray([2, 1])
    assert isinstance(b["consumer_versions"], IntArray)
    assert json.loads(b["consumer_capabilities"]) == ["async_operations"]


def test_v2_and_execute_extras():
    b = cetp.execute_extras("tok", "rid", 123, "create_alert", {"symbol": "X", "price": 1},
                            resume_token="rt")
    assert isinstance(b["protocol_version"], Int) and b["protocol_version"] == 2
    assert isinstance(b["deadline_at_ms"], Long) and b["deadline_at_ms"] == 123
    assert b["args"] == '{"symbol":"X","price":1}'
    assert b["resume_token"] == "rt" and b["tool_name"] == "create_alert"
    b = cetp.execute_extras("tok", "rid", 123, "t", "{raw")
    assert b["args"] == "{raw" and "resume_token" not in b
    b = cetp.operation_extras("tok", "rid", 5, "op")
    assert b["operation_id"] == "op"
    b = cetp.v1_execute_extras("get_transactions", {"start_date": "2024-01-01"})
    assert set(b) == {"tool_name", "args"}
    assert "request_id" in cetp.v1_execute_extras("t", {}, request_id="x")


def test_versions_helpers():
    assert cetp.parse_versions("1,2") == (2, 1)
    assert cetp.parse_versions(" 2 ") == (2,)
    assert cetp.parse_versions(Int(2)) == (2,)
    assert cetp.parse_versions("1,,2") is None
    assert cetp.parse_versions("v2") is None
    assert cetp.parse_versions(True) is None
    assert cetp.select_version((2, 1), (1,)) == 1
    assert cetp.select_version((2, 1), (3,)) is None
    assert cetp.deadline_in(1000, now_ms=5) == 1005


def test_tool_roundtrip(spec_tools):
    tl = cetp.parse_tool_list(spec_tools)
    again = cetp.parse_tool_list(json.loads(tl.model_dump_json()))
    assert again == tl
    _ = copy.deepcopy(tl)
