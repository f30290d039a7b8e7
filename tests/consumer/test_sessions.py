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
