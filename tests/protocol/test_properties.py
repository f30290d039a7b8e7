"""Property tests: every parser returns a model or raises ProtocolViolation — nothing else."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.protocol import andyclaw as ac
from inspector.protocol import cetp, schema, text
from inspector.protocol import rules as R
from inspector.protocol.bundle import (
    Bundle,
    BundleArray,
    Double,
    FileDescriptorHandle,
    Int,
    IntArray,
    Long,
    PendingIntentHandle,
    StringArray,
    Unsupported,
)
from inspector.protocol.cetp import ProtocolViolation
from inspector.protocol.discovery import discover

from .conftest import load
from .conftest import text as text_fixture

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

# --- JSON values, biased towards the protocol's own words ----------------------------

WORDS = st.sampled_from([
    "success", "accepted", "error", "inline", "file", "read", "write", "create", "delete",
    "transaction", "high", "low", "moderate", "always", "never", "provider_policy", "sync",
    "sync_or_async", "queued", "running", "succeeded", "failed", "cancelled",
    "cancellation_requested", "public", "financial", "x", "", "op_1", "0" * 64,
    cetp.DRAFT_2020_12, "#/$defs/a", "https://evil.example/s.json",
])
KEYS = st.sampled_from([
    "selected_version", "session_token", "capabilities", "limits", "max_request_bytes",
    "max_inline_result_bytes", "max_concurrent_requests", "idempotency_window_seconds",
    "provider_id", "description", "scopes", "name", "access", "sensitivity", "revision",
    "tools", "input_schema", "output_schema", "annotations", "effect", "risk",
    "idempotent", "confirmation", "execution", "destructive", "open_world", "kind", "value",
    "media_type", "size_bytes", "sha256", "operation_id", "poll_after_ms", "state",
    "progress", "current", "total", "result", "error", "error_code", "error_message",
    "retryable", "parameters", "inputSchema", "requiresApproval", "$ref", "type",
    "properties", "x",
])
SCALARS = (st.none() | st.booleans() | st.integers(-(2**70), 2**70)
           | st.floats(allow_nan=False, allow_infinity=False) | WORDS | st.text(max_size=20))
JSON = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=5)
    | st.dictionaries(KEYS | st.text(max_size=8), children, max_size=8),
    max_leaves=40,
)


def mutate(base: Any) -> st.SearchStrategy[Any]:
    """Spec examples with one field replaced, removed or added, at any depth."""

    @st.composite
    def _m(draw: st.DrawFn) -> Any:
        doc = json.loads(json.dumps(base))
        node = doc
        for _ in range(draw(st.integers(0, 4))):
            if isinstance(node, dict) and node:
                k = draw(st.sampled_from(sorted(node)))
                if isinstance(node[k], dict | list) and node[k] and draw(st.booleans()):
                    node = node[k]
                    continue
                action = draw(st.sampled_from(["replace", "delete", "add"]))
                if action == "replace":
                    node[k] = draw(JSON)
                elif action == "delete":
                    del node[k]
                else:
                    node[draw(KEYS)] = draw(JSON)
                break
            if isinstance(node, list) and node:
                i = draw(st.integers(0, len(node) - 1))
                if isinstance(node[i], dict | list) and draw(st.booleans()):
                    node = node[i]
                    continue
                node[i] = draw(JSON)
                break
            break
        return doc

    return _m()


PARSERS = [
    cetp.parse_negotiate,
    lambda d: cetp.parse_provider_info(d, v2=True),
    lambda d: cetp.parse_provider_info(d, v2=False),
    cetp.parse_tool_list,
    cetp.parse_tool_list_lenient,
    cetp.parse_v1_tool_list,
    cetp.parse_result_envelope,
    cetp.parse_accepted,
    cetp.parse_operation,
    cetp.parse_error_object,
]


def _all_parsers(data: Any) -> None:
    for p in PARSERS:
        try:
            p(data)
        except ProtocolViolation as v:
            assert v.field is not None and v.message
            assert str(v)


@SETTINGS
@given(JSON)
def test_random_json_at_every_parser(data):
    _all_parsers(data)


@SETTINGS
@given(st.sampled_from(["spec_negotiate.json", "spec_provider_info.json",
                        "spec_list_tools.json", "spec_accepted.json",
                        "spec_operation_running.json", "spec_file_result.json",
                        "cetp-v1-finance.list_tools.json",
                        "cetp-v1-finance.get_provider_info.json"]).flatmap(
    lambda name: mutate(load(name))))
def test_mutated_spec_examples(data):
    _all_parsers(data)


@SETTINGS
@given(mutate(load("spec_list_tools.json")))
def test_parsed_tool_lists_survive_all_rules(data):
    try:
        tl = cetp.parse_tool_list(data)
    except ProtocolViolation:
        return
    pi = cetp.parse_provider_info(load("spec_provider_info.json"))
    R.check_descriptors(pi, tl, package="com.example.app", capabilities=["async_operations"])
    R.check_revision(tl, tl)


# --- Bundles ---------------------------------------------------------------------------

BUNDLE_SCALARS = (
    st.none() | st.booleans() | st.text(max_size=30) | WORDS
    | st.integers(-(2**31), 2**31 - 1).map(Int) | st.integers(-(2**63), 2**63 - 1).map(Long)
    | st.floats(allow_nan=False).map(Double)
    | st.lists(st.integers(-(2**31), 2**31 - 1), max_size=3).map(IntArray)
    | st.lists(st.none() | st.text(max_size=5), max_size=3).map(StringArray)
    | st.binary(max_size=8)
    | st.builds(PendingIntentHandle, st.text(max_size=4), st.text(max_size=4),
                st.integers(0, 15))
    | st.builds(FileDescriptorHandle, st.text(max_size=4), st.integers(-1, 10))
    | st.builds(Unsupported, st.text(max_size=10))
)
JSON_TEXT = JSON.map(json.dumps) | st.text(max_size=30)
REPLY_KEYS = st.sampled_from([
    "status", "data", "protocol_version", "request_id", "error_code", "error_message",
    "retryable", "retry_after_ms", "error_details", "resolution", "resume_token",
    "result_fd", "resolution_hint", "authorize_intent", "x",
])


@st.composite
def reply_bundles(draw: st.DrawFn) -> Bundle:
    b = Bundle()
    if draw(st.booleans()):
        b["status"] = draw(st.sampled_from(["success", "accepted", "error"]) | BUNDLE_SCALARS)
    if draw(st.booleans()):
        b["data"] = draw(JSON_TEXT | BUNDLE_SCALARS)
    for k in draw(st.lists(REPLY_KEYS, max_size=8)):
        b[k] = draw(BUNDLE_SCALARS | JSON_TEXT)
    if draw(st.booleans()):
        b["nested"] = Bundle(a=draw(BUNDLE_SCALARS))
    return b


@SETTINGS
@given(st.none() | reply_bundles(), st.booleans(), st.none() | st.just("r1"))
def test_random_reply_bundles(b, v2, rid):
    try:
        r = cetp.parse_reply(b, v2=v2, request_id=rid)
    except ProtocolViolation as v:
        assert v.message
        return
    assert r.status in cetp.STATUSES
    if r.error is not None:
        R.check_error(r, v2=v2)
    if rid:
        R.check_reply_echo(r, rid)


@SETTINGS
@given(st.lists(st.none() | BUNDLE_SCALARS | reply_bundles()
                | st.builds(lambda p, s: Bundle(package=p, services=s),
                            st.text(max_size=5) | BUNDLE_SCALARS,
                            BUNDLE_SCALARS | st.lists(reply_bundles(), max_size=2).map(
                                BundleArray)),
                max_size=5))
def test_random_package_records(records):
    d = discover(records)
    for c in d.cetp:
        R.check_declaration(c)
    for e in d.extensions:
        R.check_extension_declaration(e)
        R.check_extension_security(e)


# --- AndyClaw manifests ------------------------------------------------------------------


@SETTINGS
@given(JSON.map(json.dumps) | st.text(max_size=40) | st.binary(max_size=40)
       | mutate(json.loads(text_fixture("andyclaw-hello-world.service_get_manifest.json")))
       .map(json.dumps))
def test_random_manifests(data):
    for fn in (ac.parse_manifest_array, ac.parse_service_manifest):
        try:
            fn(data)
        except ProtocolViolation as v:
            assert v.spec == "AndyClaw"


@SETTINGS
@given(st.none() | reply_bundles(), st.booleans(), st.none() | st.text(max_size=20))
def test_random_extension_replies(b, timed_out, s):
    ac.reply_from_provider(b)
    ac.reply_from_broadcast(b, timed_out)
    ac.reply_from_transact(b, s)


# --- schemas and text --------------------------------------------------------------------


@SETTINGS
@given(JSON, JSON)
def test_schema_helpers_never_raise(sch, instance):
    schema.find_remote_refs(sch)
    schema.check_schema(sch)
    schema.validate(instance, sch)
    schema.check_dialect(sch)


@SETTINGS
@given(st.text(max_size=300), st.integers(0, 50))
def test_text_helpers(s, n):
    b = text.bound(s, n)
    assert len(b.text) <= max(n, 0) and b.original_length == len(s)
    esc = text.escape_controls(s)
    assert not text.control_chars(esc, allow_newlines=False)
    text.instruction_like(s)
    text.stack_trace_like(s)
    text.secret_like(s)
