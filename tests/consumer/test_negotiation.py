"""Negotiation, version choice, session tokens, re-negotiation and revision diffs."""

from __future__ import annotations

import json

import pytest

from inspector.consumer import errors as cerr
from inspector.consumer.engine import ProviderSession, open_provider
from inspector.consumer.execution import ExecState
from inspector.consumer.negotiation import choose_protocol, diff_tool_lists
from inspector.consumer.options import EngineOptions
from inspector.consumer.v1 import V1ProviderSession
from inspector.protocol.bundle import IntArray
from inspector.protocol.cetp import parse_tool_list
from inspector.protocol.exchange import ExchangeStatus
from tests.consumer.factories import v2_rig
from tests.consumer.fakes import FakeRelay, default_v2_tools, fixture, v2_error


def rule_ids(rig, method: str) -> list[str]:
    return [f.rule_id for x in rig.recorder.exchanges if x.method == method
            for f in x.findings if not f.ok]


async def test_negotiate_sends_descending_versions_and_capabilities() -> None:
    rig = v2_rig(EngineOptions(consumer_versions=(1, 2)))
    session = await rig.session.negotiate()
    extras = rig.provider.calls("negotiate")[0]
    assert isinstance(extras["consumer_versions"], IntArray)
    assert list(extras["consumer_versions"]) == [2, 1]
    assert json.loads(extras["consumer_capabilities"]) == [
        "async_operations", "cancellation", "large_results"]
    assert session.result.limits.model_dump() == fixture("spec_negotiate.json")["limits"]
    assert session.capabilities == {"async_operations", "cancellation", "large_results"}
    assert rule_ids(rig, "negotiate") == []
    passed = {f.rule_id for x in rig.recorder.exchanges for f in x.findings if f.ok}
    assert {"negotiate.capability_intersection", "negotiate.limits_minimums",
            "negotiate.session_token"} <= passed


async def test_capability_intersection_uses_only_requested() -> None:
    rig = v2_rig(EngineOptions(capabilities=("async_operations",)))
    session = await rig.session.negotiate()
    assert session.capabilities == {"async_operations"}
    assert not session.has("large_results")


async def test_capabilities_not_requested_are_flagged_and_not_used() -> None:
    rig = v2_rig(EngineOptions(capabilities=("async_operations",)),
                 extra_capabilities=("large_results", "teleport"))
    session = await rig.session.negotiate()
    assert session.capabilities == {"async_operations"}
    failed = [f.message for x in rig.recorder.exchanges for f in x.findings
              if not f.ok and f.rule_id == "negotiate.capability_intersection"]
    assert any("'large_results' was not requested" in m for m in failed)
    assert any("unknown capability" in m for m in failed)


async def test_limits_below_minimum_are_flagged() -> None:
    limits = dict(fixture("spec_negotiate.json")["limits"], max_request_bytes=1000)
    rig = v2_rig(limits=limits)
    await rig.session.negotiate()
    assert rule_ids(rig, "negotiate") == ["negotiate.limits_minimums"]


async def test_overlong_session_token_is_flagged() -> None:
    rig = v2_rig(token_factory=lambda n: "t" * 300)
    await rig.session.negotiate()
    assert rule_ids(rig, "negotiate") == ["negotiate.session_token"]


async def test_session_token_accompanies_every_v2_call() -> None:
    rig = v2_rig()
    session = await rig.session.negotiate()
    await rig.session.get_provider_info()
    await rig.session.execute_tool("get_quote", {"symbol": "ACME"})
    for method, extras in rig.provider.received[1:]:
        assert extras["session_token"] == session.token, method


async def test_silent_downgrade_is_refused() -> None:
    rig = v2_rig(negotiate_override={"selected_version": 1}, versions=(1, 2))
    with pytest.raises(cerr.NegotiationFailed, match="selected version 1"):
        await rig.session.negotiate()
    assert rig.session.session is None
    assert [m for m, _ in rig.provider.received] == ["negotiate"]


async def test_failed_v2_negotiation_never_falls_back_to_v1() -> None:
    relay = FakeRelay()
    provider = relay.add_v2(versions=(1, 2), negotiate_error="UNSUPPORTED_VERSION")
    session = open_provider(relay, provider.authority, (1, 2), package=provider.package,
                            clock=relay.clock)
    assert isinstance(session, ProviderSession)
    with pytest.raises(cerr.NegotiationFailed) as err:
        await session.list_tools()
    assert err.value.code == "UNSUPPORTED_VERSION"
    assert "never falls back to v1" in str(err.value)
    assert [m for m, _ in provider.received] == ["negotiate"]  # no v1 list_tools


async def test_malformed_negotiate_reply_fails() -> None:
    rig = v2_rig(negotiate_override={"limits": {"max_request_bytes": 65536}})
    with pytest.raises(cerr.NegotiationFailed, match="limits"):
        await rig.session.negotiate()
    assert rig.recorder.exchanges[0].status == ExchangeStatus.MALFORMED


def test_choose_protocol() -> None:
    assert choose_protocol([1, 2]) == 2
    assert choose_protocol([2]) == 2
    assert choose_protocol([1]) == 1
    assert choose_protocol([3]) is None


def test_open_provider_picks_v1_only_without_v2() -> None:
    relay = FakeRelay()
    assert isinstance(open_provider(relay, "a", [1]), V1ProviderSession)
    assert isinstance(open_provider(relay, "a", [1, 2]), ProviderSession)
    with pytest.raises(cerr.RequestRefused) as err:
        open_provider(relay, "a", [3])
    assert err.value.code == cerr.NO_COMMON_VERSION


async def test_negotiation_required_renegotiates_once_and_keeps_request_id() -> None:
    rig = v2_rig()
    await rig.session.list_tools()  # negotiated, revision checked
    rig.provider.restart()  # tokens lost, durable state kept
    ex = await rig.session.execute_tool("create_alert", {"symbol": "ACME", "price": 10})
    assert ex.state == ExecState.SUCCEEDED
    assert ex.renegotiated == 1
    assert len(rig.provider.calls("negotiate")) == 2
    ids = {e["request_id"] for e in rig.provider.calls("execute_tool")}
    assert ids == {ex.request_id}
    assert len(rig.provider.calls("execute_tool")) == 2
    assert rig.provider.effects == [(ex.request_id, "create_alert")]
    # the revision is checked again for the new negotiation, before the retry
    methods = [m for m, _ in rig.provider.received]
    assert methods[-3:] == ["negotiate", "list_tools", "execute_tool"]


async def test_repeated_negotiation_required_is_not_looped() -> None:
    nr = {"code": "NEGOTIATION_REQUIRED", "retryable": True}
    rig = v2_rig(execute_errors=[nr, nr, nr])
    ex = await rig.session.execute_tool("get_quote", {"symbol": "X"})
    assert ex.state == ExecState.FAILED
    assert ex.error is not None and ex.error.error_code == "NEGOTIATION_REQUIRED"
    assert len(rig.provider.calls("negotiate")) == 2  # initial + exactly one re-negotiation


async def test_revision_change_is_diffed_after_renegotiation() -> None:
    rig = v2_rig()
    first = await rig.session.list_tools()
    assert first.revision == "tools-42"
    tools = [t for t in default_v2_tools() if t["name"] != "get_quote"]
    create = next(t for t in tools if t["name"] == "create_alert")
    create["annotations"] = dict(create["annotations"], risk="high", confirmation="always")
    create["description"] = "Create an alert (now riskier)"
    tools.append({**default_v2_tools()[1], "name": "get_news"})
    rig.provider.set_tools(tools, "tools-43")  # invalidates the session token
    ex = await rig.session.execute_tool("export_history", {})
    assert ex.state == ExecState.SUCCEEDED
    diff = rig.session.last_diff
    assert diff is not None
    assert (diff.old_revision, diff.new_revision) == ("tools-42", "tools-43")
    assert diff.added == ["get_news"] and diff.removed == ["get_quote"]
    assert [c.name for c in diff.changed] == ["create_alert"]
    assert diff.changed[0].fields == ["annotations.confirmation", "annotations.risk",
                                      "description"]
    assert "added get_news" in diff.summary()
    await rig.session.close_result(ex)


def test_unchanged_revision_with_changed_tools_is_a_violation() -> None:
    old = parse_tool_list(fixture("spec_list_tools.json"))
    data = fixture("spec_list_tools.json")
    data["tools"][0]["scopes"] = ["alerts.write", "alerts.admin"]
    new = parse_tool_list(data)
    diff = diff_tool_lists(old, new)
    assert diff.changed[0].fields == ["scopes"] and not diff.revision_changed
    assert diff_tool_lists(old, old).tools_changed is False


async def test_same_revision_diff_is_flagged_on_exchange() -> None:
    rig = v2_rig()
    await rig.session.list_tools()
    rig.provider.tools = rig.provider.tools[:-1]  # silently drop a tool, same revision
    await rig.session.list_tools()
    assert "tools.revision_changes" in rule_ids(rig, "list_tools")


async def test_invalid_tool_is_flagged_and_others_kept() -> None:
    tools = default_v2_tools()
    tools[1] = dict(tools[1], annotations=dict(tools[1]["annotations"], effect="explode"))
    rig = v2_rig(tools=tools)
    listed = await rig.session.list_tools()
    assert len(listed.tools) == len(tools) - 1
    assert len(rig.session.tool_violations) == 1
    assert "unknown security enum value" in str(rig.session.tool_violations[0])
    assert any(i.startswith("wire.data.tools[1]") for i in rule_ids(rig, "list_tools"))


async def test_sync_or_async_without_async_negotiated_is_flagged() -> None:
    rig = v2_rig(EngineOptions(capabilities=("large_results",)))
    await rig.session.list_tools()
    assert "annotations.async_needs_capability" in rule_ids(rig, "list_tools")


async def test_provider_info_matches_spec_example() -> None:
    rig = v2_rig()
    info = await rig.session.get_provider_info()
    assert info.provider_id == "com.example.app"
    assert info.scopes[0].name == "alerts.write"
    assert info.scopes[0].sensitivity == "financial"


async def test_read_with_repeated_negotiation_required_is_not_looped() -> None:
    rig = v2_rig()

    class AlwaysExpired:
        """Negotiates fine, then calls every session invalid."""

        def call(self, method, extras, arg):
            if method == "negotiate":
                return rig.provider.call(method, extras, arg)
            return v2_error(extras.get("request_id"), "NEGOTIATION_REQUIRED", "expired", True)

    rig.relay.providers[rig.provider.authority] = AlwaysExpired()
    with pytest.raises(cerr.ProviderError, match="NEGOTIATION_REQUIRED"):
        await rig.session.get_provider_info()
    assert len(rig.provider.calls("negotiate")) == 2


async def test_expired_session_is_renegotiated_before_the_next_call() -> None:
    rig = v2_rig()
    first = await rig.session.list_tools()
    assert first.revision == "tools-42"
    session = rig.session.session
    assert session.expires_ms == 1_788_350_400_000  # 2026-09-02T12:00:00Z (spec example)
    rig.clock.advance(2 * 24 * 3600 * 1000)  # past expires_at
    await rig.session.execute_tool("get_quote", {"symbol": "X"})
    assert len(rig.provider.calls("negotiate")) == 2
    assert rig.session.session.token != session.token


async def test_already_expired_or_bad_expires_at_is_flagged_not_looped() -> None:
    rig = v2_rig(negotiate_override={"expires_at": "2020-01-01T00:00:00Z"})
    await rig.session.execute_tool("get_quote", {"symbol": "X"})
    await rig.session.execute_tool("get_quote", {"symbol": "Y"})
    assert len(rig.provider.calls("negotiate")) == 1
    assert "negotiate.expires_at" in rule_ids(rig, "negotiate")
    bad = v2_rig(negotiate_override={"expires_at": "next tuesday"})
    await bad.session.negotiate()
    assert "negotiate.expires_at" in rule_ids(bad, "negotiate")
