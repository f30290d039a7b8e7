"""AndyClaw host behaviour against the hello-world extension (both manifest forms)."""

from __future__ import annotations

import json

import pytest

from inspector.consumer import errors as cerr
from inspector.consumer.andyclaw_host import CheckResult, ExtensionHost, security_checks
from inspector.consumer.recorder import Recorder
from inspector.protocol import andyclaw as ac
from inspector.protocol.discovery import discover
from inspector.protocol.exchange import ExchangeStatus
from tests.consumer.fakes import FakeRelay, fixture_text


async def host_for(relay: FakeRelay, **ext_kw) -> ExtensionHost:
    relay.add_extension(**ext_kw)
    found = discover(await relay.discover())
    assert len(found.extensions) == 1
    return ExtensionHost(relay, found.extensions[0], recorder=Recorder())


async def test_manifest_forms_and_no_drift() -> None:
    host = await host_for(FakeRelay())
    assert host.decl.id == "hello_world" and host.decl.bridge == ac.Bridge.SERVICE
    functions = await host.read_manifest()
    assert [f.name for f in functions] == ["greet"]
    manifest = await host.get_manifest()
    assert manifest.form == "object"
    assert manifest.description == "A simple greeting skill that says hello."
    rules = [f.rule_id for f in host.findings]
    assert rules == ["extension.manifest_form"]  # form differs, functions agree
    x = host.recorder.exchanges[-1]
    assert "extension.manifest_drift" in [f.rule_id for f in x.findings if f.ok]


async def test_manifest_drift_is_flagged() -> None:
    drifted = json.loads(fixture_text("andyclaw-hello-world.service_get_manifest.json"))
    drifted["tools"].append({"name": "wave", "description": "Waves", "inputSchema": {}})
    drifted["tools"][0]["description"] = "Greets differently"
    host = await host_for(FakeRelay(), service_manifest=json.dumps(drifted))
    await host.read_manifest()
    await host.get_manifest()
    messages = [f.message for f in host.findings if f.rule_id == "extension.manifest_drift"]
    assert "'wave' only in GET_MANIFEST" in messages
    assert "'greet' differs in description" in messages


async def test_malformed_raw_manifest_yields_no_functions_but_is_recorded() -> None:
    host = await host_for(FakeRelay(), manifest_array='{"not": "an array"}')
    assert await host.read_manifest() == []
    x = host.recorder.exchanges[-1]
    assert x.status == ExchangeStatus.MALFORMED
    assert "no functions" in " ".join(x.notes)


@pytest.mark.parametrize("bridge", [ac.Bridge.SERVICE, ac.Bridge.PROVIDER, ac.Bridge.BROADCAST])
async def test_execute_through_each_result_bridge(bridge: ac.Bridge) -> None:
    relay = FakeRelay()
    host = await host_for(relay)
    reply = await host.execute("greet", {"name": "Ada"}, bridge=bridge)
    assert reply.ok and reply.decoded["greeting"].startswith("Hello, Ada!")
    ext = relay.extensions[host.package]
    assert ext.received == [(bridge.value, "greet", '{"name":"Ada"}')]
    assert host.recorder.exchanges[-1].status == ExchangeStatus.SUCCESS


async def test_provider_bridge_uses_host_built_authority() -> None:
    relay = FakeRelay()
    host = await host_for(relay)
    await host.execute("greet", {"name": "Ada"}, bridge=ac.Bridge.PROVIDER)
    assert relay.ops[-1] == f"call:{host.package}.andyclaw.extension:execute"


async def test_default_bridge_is_by_priority() -> None:
    relay = FakeRelay()
    host = await host_for(relay, bridges=("broadcast", "provider"))
    assert host.decl.bridge == ac.Bridge.PROVIDER
    await host.execute("greet", {"name": "Bo"})
    assert relay.extensions[host.package].received[0][0] == "provider"


async def test_activity_bridge_only_launches() -> None:
    host = await host_for(FakeRelay())
    reply = await host.execute("greet", {"name": "Ada"}, bridge=ac.Bridge.ACTIVITY)
    assert reply.outcome == "launched" and reply.result is None


async def test_unknown_function_error_inside_successful_reply() -> None:
    host = await host_for(FakeRelay())
    reply = await host.execute("dance", {})
    assert not reply.ok and reply.in_band_error == "Unknown function: dance"
    x = host.recorder.exchanges[-1]
    assert "andyclaw.reply.in_band_error" in [f.rule_id for f in x.findings]


async def test_broadcast_timeout_is_visible() -> None:
    host = await host_for(FakeRelay(), broadcast_times_out=True)
    reply = await host.execute("greet", {"name": "A"}, bridge=ac.Bridge.BROADCAST)
    assert reply.outcome == "timeout"
    assert host.recorder.exchanges[-1].status == ExchangeStatus.TRANSPORT_ERROR


async def test_requires_approval_needs_explicit_approval() -> None:
    manifest = json.loads(fixture_text("andyclaw-hello-world.extension_manifest.json"))
    manifest[0]["requiresApproval"] = True
    relay = FakeRelay()
    host = await host_for(relay, manifest_array=json.dumps(manifest))
    await host.read_manifest()
    with pytest.raises(cerr.RequestRefused):
        await host.execute("greet", {"name": "A"})
    assert relay.extensions[host.package].received == []
    assert host.recorder.exchanges[-1].status == ExchangeStatus.REFUSED
    assert (await host.execute("greet", {"name": "A"}, approved=True)).ok


async def test_security_checks_pass_for_the_reference_extension() -> None:
    relay = FakeRelay()
    host = await host_for(relay)
    await host.read_manifest()
    checks = {c.name: c.result for c in host.security_checks(granted_permissions=[])}
    assert checks == {"signature": CheckResult.PASS, "uid_isolation": CheckResult.PASS,
                      "required_permissions": CheckResult.PASS}


async def test_security_checks_fail_cases() -> None:
    relay = FakeRelay()
    host = await host_for(relay, uid=relay.hello_info.caller_uid)
    fn = ac.ExtensionFunction(name="sms", description="d", inputSchema={},
                              requiredPermissions=["android.permission.SEND_SMS"])
    checks = {c.name: c for c in security_checks(
        host.decl, host_uid=relay.hello_info.caller_uid, functions=[fn],
        pinned_cert_sha256="AA:" * 31 + "AA", granted_permissions=["android.permission.CAMERA"])}
    assert checks["signature"].result == CheckResult.FAIL
    assert checks["uid_isolation"].result == CheckResult.FAIL
    assert checks["required_permissions"].result == CheckResult.FAIL
    assert "SEND_SMS" in checks["required_permissions"].message
    unknown = security_checks(host.decl, host_uid=None, functions=[fn])
    assert [c.result for c in unknown][1:] == [CheckResult.UNKNOWN, CheckResult.UNKNOWN]


async def test_pinned_certificate_match_ignores_colons_and_case() -> None:
    relay = FakeRelay()
    host = await host_for(relay)
    cert = host.decl.cert_sha256[0]
    pinned = ":".join(cert[i:i + 2] for i in range(0, len(cert), 2)).upper()
    checks = security_checks(host.decl, host_uid=1, pinned_cert_sha256=pinned)
    assert checks[0].result == CheckResult.PASS


async def test_undeclared_bridges_are_refused() -> None:
    relay = FakeRelay()
    host = await host_for(relay, bridges=("broadcast",))
    with pytest.raises(cerr.RequestRefused, match="declares no service bridge"):
        await host.execute("greet", {"name": "A"}, bridge=ac.Bridge.SERVICE)
    with pytest.raises(cerr.RequestRefused, match="no bound-service bridge"):
        await host.get_manifest()
    assert relay.extensions[host.package].received == []
    assert (await host.execute("greet", {"name": "A"})).ok  # the declared broadcast bridge


async def test_security_findings_use_the_shared_rules() -> None:
    relay = FakeRelay()
    host = await host_for(relay, uid=relay.hello_info.caller_uid)
    await host.read_manifest()
    found = {f.rule_id: f.ok for f in host.security_findings(granted_permissions=[])}
    assert found["extension.signed"] is True
    assert found["extension.uid_isolation"] is False
