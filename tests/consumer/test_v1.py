"""CETP v1 against the finance tutorial provider, and waking a sleeping provider."""

from __future__ import annotations

import json

import pytest

from inspector.consumer import errors as cerr
from inspector.consumer.execution import ExecState
from inspector.consumer.options import EngineOptions
from inspector.protocol.exchange import ExchangeKind, ExchangeStatus
from tests.consumer.factories import v1_rig, v2_rig
from tests.consumer.fakes import V1_AUTHORITY, V1_PACKAGE, fixture


async def test_list_tools_sends_null_extras_and_reads_parameters() -> None:
    rig = v1_rig()
    tools = await rig.session.list_tools()
    assert rig.provider.received == [("list_tools", None)]
    assert [t.name for t in tools.tools] == ["get_portfolio_holdings", "get_transactions"]
    sample = fixture("cetp-v1-finance.list_tools.json")["tools"][1]["parameters"]
    assert tools.tool("get_transactions").parameters == sample


async def test_provider_info() -> None:
    rig = v1_rig()
    info = await rig.session.get_provider_info()
    assert info.provider_name == "MyFinance"
    assert [s.name for s in info.scopes] == ["holdings", "transactions"]


async def test_execute_sends_tool_name_args_and_request_id() -> None:
    rig = v1_rig()
    ex = await rig.session.execute_tool("get_transactions", {"start_date": "2026-01-01"})
    assert ex.state == ExecState.SUCCEEDED
    assert ex.value == {"transactions": [], "start_date": "2026-01-01"}
    _, extras = rig.provider.received[-1]
    assert set(extras) == {"tool_name", "args", "request_id"}
    assert json.loads(extras["args"]) == {"start_date": "2026-01-01"}
    assert extras["request_id"] == ex.request_id
    assert "protocol_version" not in extras


async def test_request_id_is_optional() -> None:
    rig = v1_rig()
    await rig.session.execute_tool("get_portfolio_holdings", {}, send_request_id=False)
    _, extras = rig.provider.received[-1]
    assert "request_id" not in extras


async def test_v1_errors() -> None:
    rig = v1_rig()
    missing = await rig.session.execute_tool("get_transactions", {})
    assert missing.state == ExecState.FAILED and missing.error.error_code == "INVALID_ARGS"
    unknown = await rig.session.execute_tool("sell_everything", {})
    assert unknown.error.error_code == "TOOL_NOT_FOUND"
    assert rig.recorder.by_id(unknown.exchange_ids[-1]).status == ExchangeStatus.PROVIDER_ERROR


async def test_authorize_intent_is_shown_never_launched() -> None:
    rig = v1_rig(auth_required=True)
    ex = await rig.session.execute_tool("get_portfolio_holdings", {})
    assert ex.state == ExecState.FAILED
    assert ex.error.authorize_intent == "com.example.finance.AUTHORIZE"
    assert "never started" in ex.message and "Open MyFinance" in ex.message
    assert rig.relay.launches == []


async def test_unknown_authority_without_wake_is_a_transport_failure() -> None:
    rig = v1_rig()
    rig.relay.asleep[V1_AUTHORITY] = "acquire"
    with pytest.raises(cerr.TransportFailure) as err:
        await rig.session.list_tools()
    assert err.value.code == "NOT_FOUND"
    x = rig.recorder.exchanges[-1]
    assert any("wake_and_retry" in n for n in x.notes)
    assert rig.relay.wake_calls == []


async def test_wake_and_retry_acquire() -> None:
    rig = v1_rig(EngineOptions(wake_and_retry=True, wake_delay_ms=400))
    rig.relay.asleep[V1_AUTHORITY] = "acquire"
    tools = await rig.session.list_tools()
    assert len(tools.tools) == 2
    assert rig.relay.wake_calls == [(V1_AUTHORITY, V1_PACKAGE, "acquire")]
    assert rig.clock.sleeps == [400]
    steps = [(x.kind, x.method, x.status) for x in rig.recorder.exchanges]
    assert steps == [
        (ExchangeKind.CETP, "list_tools", ExchangeStatus.TRANSPORT_ERROR),
        (ExchangeKind.RELAY, "wake_provider", ExchangeStatus.SUCCESS),
        (ExchangeKind.CETP, "list_tools", ExchangeStatus.SUCCESS),
    ]


async def test_wake_and_retry_falls_back_to_launch() -> None:
    rig = v1_rig(EngineOptions(wake_and_retry=True))
    rig.relay.asleep[V1_AUTHORITY] = "launch"
    ex = await rig.session.execute_tool("get_portfolio_holdings", {})
    assert ex.state == ExecState.SUCCEEDED
    assert [m for _, _, m in rig.relay.wake_calls] == ["acquire", "launch"]


async def test_wake_and_retry_gives_up() -> None:
    rig = v1_rig(EngineOptions(wake_and_retry=True))
    rig.relay.asleep[V1_AUTHORITY] = "never"
    with pytest.raises(cerr.TransportFailure):
        await rig.session.list_tools()
    assert [m for _, _, m in rig.relay.wake_calls] == ["acquire", "launch"]


async def test_wake_and_retry_works_for_v2_too() -> None:
    rig = v2_rig(EngineOptions(wake_and_retry=True))
    rig.relay.asleep[rig.provider.authority] = "acquire"
    session = await rig.session.negotiate()
    assert session.token


async def test_v1_execution_listener() -> None:
    rig = v1_rig()
    seen: list[str] = []
    rig.session.add_execution_listener(lambda e: seen.append(e.state.value))
    await rig.session.execute_tool("get_portfolio_holdings", {})
    await rig.session.execute_tool("get_transactions", {})
    assert seen == ["succeeded", "failed"]
