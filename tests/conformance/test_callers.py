"""Caller binding (`caller.*`): a second connection acting as another app. The stock
price-alert provider passes; a provider that ignores the caller in one place fails exactly
the check for that place; without a second caller the checks say what they need."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from typing import Any

import pytest

from inspector.conformance import Outcome, run_conformance
from inspector.conformance.context import NO_SECOND_CALLER
from inspector.conformance.runner import plan_conformance
from inspector.protocol.bundle import Bundle
from inspector.virtual import VirtualDevice
from inspector.virtual.app import CallContext, Caller
from inspector.virtual.apps.pricealerts import PriceAlertsProvider
from inspector.virtual.callers import CONSUMER_APPS, SECOND_CALLER, second_caller_connector
from inspector.virtual.cetp_provider import ToolCall
from tests.conformance.conftest import full_setup

PRICE = "com.example.pricealerts"
CALLER_CHECKS = {"caller.session_token_bound", "caller.operation_bound",
                 "caller.resume_token_bound", "caller.dedup_per_caller"}


def _as(call: ToolCall, uid: int) -> ToolCall:
    return replace(call, ctx=replace(call.ctx, caller=Caller(uid=uid)))


class OperationAnyCaller(PriceAlertsProvider):
    """Hands any caller an operation, given its id and request_id (ignores the UID)."""

    PACKAGE = "com.example.opanycaller"

    def _operation_for(self, ctx: CallContext, extras: Bundle, rid: str) -> sqlite3.Row:
        row = self.store.one("SELECT uid FROM operations WHERE operation_id=?",
                             extras.get("operation_id"))
        if row is not None:
            ctx = replace(ctx, caller=Caller(uid=row["uid"]))
        return super()._operation_for(ctx, extras, rid)


class ResumeAnyCaller(PriceAlertsProvider):
    """Accepts a resume_token from any caller (ignores the UID it was issued to)."""

    PACKAGE = "com.example.resumeanycaller"

    def consume_resume_token(self, call: ToolCall, token: str, kind: str = "confirm") -> bool:
        row = self.store.one("SELECT uid FROM confirmations WHERE resume_token=?", token)
        return super().consume_resume_token(_as(call, row["uid"]) if row else call, token, kind)


class DedupAnyCaller(PriceAlertsProvider):
    """Deduplicates by request_id alone: another caller gets the first caller's result."""

    PACKAGE = "com.example.dedupanycaller"

    def lookup_dedup(self, call: ToolCall) -> Bundle | None:
        row = self.store.one("SELECT uid FROM dedup WHERE provider_id=? AND request_id=?",
                             self.provider_id, call.request_id)
        return super().lookup_dedup(_as(call, row["uid"]) if row else call)


async def _callers(client: Any, device: VirtualDevice, package: str, **kw: Any) -> Any:
    report = await run_conformance(client, package, setup=full_setup(), select=["caller"],
                                   second_caller=second_caller_connector(device), **kw)
    return {r.check_id: r for r in report.results if r.check_id in CALLER_CHECKS}, report


async def test_price_alerts_passes_with_a_second_caller(device: VirtualDevice, client) -> None:
    results, report = await _callers(client, device, PRICE)
    assert {k: r.outcome for k, r in results.items()} == dict.fromkeys(CALLER_CHECKS,
                                                                       Outcome.PASS)
    assert report.passed
    second = CONSUMER_APPS[SECOND_CALLER].uid
    for r in results.values():
        assert r.evidence.observed["other_caller_uid"] == second
        assert r.evidence.observed["caller_uid"] != second
        assert r.evidence.exchange_ids, r.check_id
    assert results["caller.session_token_bound"].evidence.observed["other_caller_got"] == {
        "kind": "error", "code": "INVALID_REQUEST"}
    # caller B really executed its own create_alert (its own list_alerts shows it)
    assert results["caller.dedup_per_caller"].evidence.observed["effect_for_b"] == {
        "len(.alerts)": 1}
    # the second caller's exchanges are in the same recorded traffic as the first's
    ops = results["caller.operation_bound"].evidence.observed
    assert ops["other_get"]["code"] == ops["other_cancel"]["code"] == "INVALID_REQUEST"
    assert ops["first_caller_final"]["kind"] == "success"


async def test_without_a_second_caller_they_need_setup(device: VirtualDevice, client) -> None:
    plan = await plan_conformance(client, PRICE, setup=full_setup(), select=["caller"])
    assert {i.check_id: i.status for i in plan.items if i.check_id in CALLER_CHECKS} == (
        dict.fromkeys(CALLER_CHECKS, "needs_setup"))
    report = await run_conformance(client, PRICE, setup=full_setup(), select=["caller"])
    for cid in CALLER_CHECKS:
        r = report.result(cid)
        assert r.outcome == Outcome.NEEDS_SETUP and r.message == NO_SECOND_CALLER
    assert "phone" in NO_SECOND_CALLER


async def test_plan_lists_the_second_callers_calls(device: VirtualDevice, client) -> None:
    plan = await plan_conformance(client, PRICE, setup=full_setup(), select=["caller"],
                                  second_caller=second_caller_connector(device))
    item = plan.item("caller.dedup_per_caller")
    assert item.status == "run"
    assert [c.tool for c in item.calls if c.mutating] == ["create_alert", "create_alert"]


async def test_a_second_caller_with_the_same_uid_is_refused(device: VirtualDevice,
                                                             client) -> None:
    from inspector.virtual.inprocess import connect_virtual_device

    async def same() -> Any:
        return await connect_virtual_device(device)

    report = await run_conformance(client, PRICE, setup=full_setup(),
                                   select=["caller.session_token_bound"], second_caller=same)
    r = report.result("caller.session_token_bound")
    assert r.outcome == Outcome.NEEDS_SETUP and "same as the first" in r.message


@pytest.mark.parametrize(("provider", "broken"), [
    (OperationAnyCaller, "caller.operation_bound"),
    (ResumeAnyCaller, "caller.resume_token_bound"),
    (DedupAnyCaller, "caller.dedup_per_caller"),
])
async def test_ignoring_the_caller_fails_that_check(device: VirtualDevice, client,
                                                    provider: type, broken: str) -> None:
    device.install(provider(), notify=False)
    results, report = await _callers(client, device, provider.PACKAGE)
    failed = {k for k, r in results.items() if r.outcome == Outcome.FAIL}
    assert failed == {broken}
    assert all(r.outcome == Outcome.PASS for k, r in results.items() if k != broken)
    assert not report.passed
    assert "caller" in results[broken].message or "UID" in results[broken].message


async def test_gui_backend_gives_the_suite_a_second_caller(tmp_path: Any) -> None:
    """The conformance tab's backend on the in-process virtual device plans the caller.*
    checks to run (it passes the second-caller connector); the CLI does the same."""
    from inspector.session.devices import VirtualConfig, VirtualDeviceHost
    from inspector.session.session import Session
    from inspector.ui.conformance_binding import SessionConformanceBackend

    host = VirtualDeviceHost(VirtualConfig(state_dir=str(tmp_path / "gui")))
    session = Session("virtual", host.connect)
    try:
        await session.open()
        backend = SessionConformanceBackend(session, session.find_provider(PRICE), None)
        plan = await backend.plan(full_setup())
        assert {i.check_id: i.status for i in plan.items if i.check_id in CALLER_CHECKS} == (
            dict.fromkeys(CALLER_CHECKS, "run"))
    finally:
        await session.close()
        await host.close()
