"""Session-level behaviour: concurrency limits, shared negotiation, declarations."""

from __future__ import annotations

import asyncio

import pytest

from inspector.consumer import errors as cerr
from inspector.consumer.engine import ProviderSession, open_declaration
from inspector.consumer.execution import ExecState
from inspector.consumer.v1 import V1ProviderSession
from inspector.protocol.discovery import CetpDeclaration, Component
from tests.consumer.factories import v2_rig
from tests.consumer.fakes import FakeRelay, fixture


@pytest.mark.parametrize(("limit", "expected"), [(1, 1), (4, 3)])
async def test_max_concurrent_requests_is_honoured(limit: int, expected: int) -> None:
    limits = dict(fixture("spec_negotiate.json")["limits"], max_concurrent_requests=limit)
    rig = v2_rig(limits=limits)
    await rig.session.list_tools()
    rig.relay.max_in_flight = 0
    results = await asyncio.gather(*(rig.session.execute_tool("get_quote", {"symbol": s})
                                     for s in "ABC"))
    assert all(r.state == ExecState.SUCCEEDED for r in results)
    assert rig.relay.max_in_flight == expected


async def test_concurrent_first_calls_negotiate_once() -> None:
    rig = v2_rig()
    await asyncio.gather(*(rig.session.execute_tool("get_quote", {"symbol": s})
                           for s in "ABC"))
    assert len(rig.provider.calls("negotiate")) == 1
    assert len(rig.provider.calls("list_tools")) == 1


async def test_concurrent_negotiation_required_renegotiates_once() -> None:
    rig = v2_rig()
    await rig.session.list_tools()
    rig.provider.restart()
    results = await asyncio.gather(*(rig.session.execute_tool("get_quote", {"symbol": s})
                                     for s in "AB"))
    assert all(r.state == ExecState.SUCCEEDED for r in results)
    assert len(rig.provider.calls("negotiate")) == 2


def declaration(**kw) -> CetpDeclaration:
    base = dict(package="com.example.app", service=".cetp.ToolProviderService", exported=True,
                authority="com.example.app.clawseed.tools", versions=(2, 1),
                stack="dual_stack",
                provider=Component(kind="provider", name=".P", exported=True,
                                   authorities=["com.example.app.clawseed.tools"]))
    base.update(kw)
    return CetpDeclaration(**base)


def test_open_declaration_checks_the_same_package() -> None:
    relay = FakeRelay()
    assert isinstance(open_declaration(relay, declaration()), ProviderSession)
    assert isinstance(open_declaration(relay, declaration(versions=(1,), stack="v1_only")),
                      V1ProviderSession)
    foreign = declaration(provider=None, authority_owner="com.evil.app")
    with pytest.raises(cerr.RequestRefused) as err:
        open_declaration(relay, foreign)
    assert err.value.code == cerr.AUTHORITY_MISMATCH and "com.evil.app" in err.value.message
    assert isinstance(open_declaration(relay, foreign, allow_foreign_authority=True),
                      ProviderSession)
    with pytest.raises(cerr.RequestRefused):
        open_declaration(relay, declaration(authority=None))


# --------------------------------------------------------------- lost negotiations (transport)
async def test_negotiate_lost_to_a_disconnect_is_retried_once_and_the_call_goes_through() -> None:
    rig = v2_rig()
    rig.relay.fail_calls = [("negotiate", "DISCONNECTED")]
    ex = await rig.session.execute_tool("get_quote", {"symbol": "ACME"})
    assert ex.state == ExecState.SUCCEEDED, ex.message
    assert rig.relay.ops.count(f"call:{rig.provider.authority}:negotiate") == 2
    assert len(rig.provider.calls("negotiate")) == 1  # the first never reached it
    retried = [x for x in rig.recorder.exchanges if x.method == "negotiate"]
    assert len(retried) == 2 and retried[0].status.value == "transport_error"
    assert retried[1].parent_id == retried[0].id and "retried once" in retried[1].notes[0]


async def test_negotiate_lost_twice_is_a_transport_failure_not_a_provider_failure() -> None:
    rig = v2_rig()
    rig.relay.fail_calls = [("negotiate", "IPC_FAILED"), ("negotiate", "DISCONNECTED")]
    ex = await rig.session.execute_tool("get_quote", {"symbol": "ACME"})
    assert ex.state == ExecState.TRANSPORT_FAILED
    assert "DISCONNECTED" in ex.message and ex.request_id in ex.message
    assert not ex.state.is_final  # running it again is safe: nothing was sent
    assert rig.provider.calls("execute_tool") == [] and ex.attempts == []
    assert rig.relay.ops.count(f"call:{rig.provider.authority}:negotiate") == 2
    again = await rig.session.run(ex)  # same execution, same request id, connection back
    assert again.state == ExecState.SUCCEEDED and len(rig.provider.effects) == 1


async def test_negotiate_raises_transport_failure_after_the_one_retry() -> None:
    rig = v2_rig()
    rig.relay.fail_calls = [("negotiate", "DISCONNECTED")] * 2
    with pytest.raises(cerr.TransportFailure) as info:
        await rig.session.negotiate()
    assert info.value.relay_code == "DISCONNECTED"
    assert not isinstance(info.value, cerr.NegotiationFailed)


async def test_negotiate_is_not_retried_on_other_relay_errors() -> None:
    rig = v2_rig()
    rig.relay.fail_calls = [("negotiate", "SECURITY")]
    ex = await rig.session.execute_tool("get_quote", {"symbol": "ACME"})
    assert ex.state == ExecState.TRANSPORT_FAILED and "SECURITY" in ex.message
    assert rig.relay.ops.count(f"call:{rig.provider.authority}:negotiate") == 1
