from __future__ import annotations

import json

import pytest

from inspector.protocol import andyclaw as ac
from inspector.protocol.bundle import Int, bundle
from inspector.protocol.cetp import ProtocolViolation

from .conftest import text


def test_raw_manifest_sample():
    fns = ac.parse_manifest_array(text("andyclaw-hello-world.extension_manifest.json"))
    assert [f.name for f in fns] == ["greet"]
    f = fns[0]
    assert f.inputSchema["required"] == ["name"]
    assert f.requiresApproval is False and f.requiredPermissions == []


def test_raw_manifest_bytes():
    raw = text("andyclaw-hello-world.extension_manifest.json").encode()
    assert ac.parse_manifest_array(raw)[0].name == "greet"
    with pytest.raises(ProtocolViolation) as e:
        ac.parse_manifest_array(b"\xff\xfe")
    assert "UTF-8" in e.value.message and e.value.spec == "AndyClaw"


def test_service_manifest_object_form():
    m = ac.parse_service_manifest(text("andyclaw-hello-world.service_get_manifest.json"))
    assert m.form == "object"
    assert m.description == "A simple greeting skill that says hello."
    assert m.names() == ["greet"]


def test_service_manifest_array_form():
    m = ac.parse_service_manifest(text("andyclaw-hello-world.extension_manifest.json"))
    assert m.form == "array" and m.description is None and m.names() == ["greet"]


def test_raw_manifest_must_be_array():
    with pytest.raises(ProtocolViolation) as e:
        ac.parse_manifest_array(text("andyclaw-hello-world.service_get_manifest.json"))
    assert e.value.field == "manifest" and "expected an array, got object" in e.value.message


@pytest.mark.parametrize("key", ["name", "description", "inputSchema"])
def test_function_required_fields(key):
    f = {"name": "greet", "description": "d", "inputSchema": {"type": "object"}}
    del f[key]
    with pytest.raises(ProtocolViolation) as e:
        ac.parse_manifest_array(json.dumps([f]))
    assert e.value.field == f"manifest[0].{key}"
    assert str(e.value).endswith("(AndyClaw §3)")


def test_function_optional_fields_and_unknown_keys():
    f = {"name": "pay", "description": "d", "inputSchema": {}, "requiresApproval": True,
         "requiredPermissions": ["android.permission.INTERNET"], "x": 1}
    (fn,) = ac.parse_manifest_array(json.dumps([f]))
    assert fn.requiresApproval and fn.requiredPermissions == ["android.permission.INTERNET"]
    f["requiresApproval"] = "yes"
    with pytest.raises(ProtocolViolation):
        ac.parse_manifest_array(json.dumps([f]))


def test_service_manifest_errors():
    with pytest.raises(ProtocolViolation) as e:
        ac.parse_service_manifest('{"description": "x"}')
    assert e.value.field == "manifest.tools"
    with pytest.raises(ProtocolViolation):
        ac.parse_service_manifest('"just a string"')
    with pytest.raises(ProtocolViolation):
        ac.parse_service_manifest("{")


def test_bridges_priority():
    assert [b.value for b in ac.BRIDGES_BY_PRIORITY] == ["service", "provider", "broadcast",
                                                         "activity"]
    assert ac.best_bridge([ac.Bridge.ACTIVITY, ac.Bridge.BROADCAST]) == ac.Bridge.BROADCAST
    assert ac.best_bridge(["provider", "service"]) == ac.Bridge.SERVICE
    assert ac.best_bridge([]) is None
    assert ac.Bridge.PROVIDER.action is None
    assert ac.Bridge.SERVICE.action == "org.ethereumphone.andyclaw.EXTENSION_SERVICE"
    assert not ac.Bridge.ACTIVITY.returns_result


def test_names():
    assert ac.response_action("p.q") == "p.q.andyclaw.EXTENSION_RESPONSE"
    assert ac.host_authority("p.q") == "p.q.andyclaw.extension"
    assert ac.default_extension_id("p.q") == "apk:p.q"
    assert ac.DESCRIPTOR == "org.ethereumphone.andyclaw.IExtension"
    assert (ac.TRANSACTION_GET_MANIFEST, ac.TRANSACTION_EXECUTE) == (1, 2)


def test_request_builders():
    assert ac.provider_extras("greet", {"name": "A"}) == {"function": "greet",
                                                          "params": '{"name":"A"}'}
    assert ac.broadcast_extras("greet", "{}", "x")["response_action"] == "x"
    assert ac.execute_strings("greet", {}) == ["greet", "{}"]
    assert ac.activity_extras("open", {})["function"] == "open"


def test_service_replies():
    r = ac.reply_from_transact(None, '{"greeting": "Hello, A!"}')
    assert r.ok and r.decoded == {"greeting": "Hello, A!"}
    r = ac.reply_from_transact(None, '{"error": "Unknown function: nope"}')
    assert r.outcome == "result" and not r.ok and r.in_band_error == "Unknown function: nope"
    r = ac.reply_from_transact({"class": "java.lang.SecurityException", "message": "no"}, None)
    assert r.outcome == "exception" and r.exception_class == "java.lang.SecurityException"
    r = ac.reply_from_transact(None, None)
    assert r.outcome == "empty"
    r = ac.reply_from_transact(None, "plain text")
    assert r.ok and not r.result_is_json and r.problems


def test_provider_and_broadcast_replies():
    assert ac.reply_from_provider(bundle(result='{"x":1}')).decoded == {"x": 1}
    r = ac.reply_from_provider(bundle(error="boom"))
    assert r.outcome == "error" and r.error == "boom" and not r.ok
    r = ac.reply_from_provider(bundle(result=Int(1)))
    assert r.outcome == "empty" and "getString" in r.problems[0]
    assert ac.reply_from_provider(None).outcome == "empty"
    r = ac.reply_from_provider(bundle(result="1", error="e"))
    assert r.outcome == "result" and any("both" in p for p in r.problems)
    assert ac.reply_from_broadcast(None, True).outcome == "timeout"
    assert ac.reply_from_broadcast(bundle(result="{}"), False).ok


def test_activity_reply():
    r = ac.reply_from_activity(True, "p/.A")
    assert r.ok and r.launched and r.result is None
    assert ac.reply_from_activity(False).outcome == "not_launched"
