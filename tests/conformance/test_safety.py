"""Mutation safety and the plan: nothing mutating runs unless the user named the tool."""

from __future__ import annotations

import pytest

from inspector.conformance import ConformanceError, Outcome, plan_conformance, run_conformance
from inspector.conformance.presets import reference_setup
from inspector.consumer.recorder import Recorder
from inspector.protocol import cetp
from inspector.virtual.apps.pricealerts import TOOLS

PRICE = "com.example.pricealerts"
READS = {t.name for t in TOOLS if t.is_read} | {"cetp_inspector_no_such_tool"}


def _executed(rec: Recorder) -> set[str]:
    return {x.tool or "" for x in rec.exchanges if x.method == cetp.EXECUTE_TOOL}


async def test_without_permission_no_mutating_tool_is_called(client) -> None:
    rec = Recorder()
    setup = reference_setup(PRICE)  # scenarios name create_alert and sync_watchlist …
    report = await run_conformance(client, PRICE, setup=setup, recorder=rec)
    assert {"list_alerts", "get_quote", "export_history", "list_executions"} <= READS
    assert _executed(rec) <= READS  # … but they were never invoked
    for cid in ("idempotency.replay", "confirmation.approve", "async.accepted"):
        r = report.result(cid)
        assert r.outcome == Outcome.NEEDS_SETUP
        assert "--allow-mutations" in r.message
    assert not report.passed  # MUST checks that need setup did not pass


async def test_allowing_one_tool_allows_only_that_tool(client) -> None:
    rec = Recorder()
    setup = reference_setup(PRICE)
    report = await run_conformance(client, PRICE, setup=setup, recorder=rec,
                                   allow_mutations=["create_alert"])
    assert _executed(rec) <= READS | {"create_alert"}
    assert "create_alert" in _executed(rec)
    assert report.result("idempotency.replay").outcome == Outcome.PASS
    assert report.result("async.accepted").outcome == Outcome.NEEDS_SETUP


async def test_plan_makes_only_read_only_calls(client) -> None:
    rec = Recorder()
    plan = await plan_conformance(client, PRICE, setup=reference_setup(PRICE), recorder=rec,
                                  allow_mutations=["create_alert"])
    assert {x.method for x in rec.exchanges} <= {"negotiate", "get_provider_info",
                                                 "list_tools"}
    assert plan.mutating_tools == ["create_alert"]
    item = plan.item("idempotency.replay")
    assert item is not None and item.status == "run"
    assert any(c.mutating and c.tool == "create_alert" for c in item.calls)
    assert plan.item("async.accepted").status == "needs_setup"
    text = plan.text()
    assert "[MUTATES]" in text and "idempotency.replay" in text


async def test_blanket_permission_is_refused(client) -> None:
    with pytest.raises(ConformanceError, match="tool names"):
        await run_conformance(client, PRICE, allow_mutations=True)  # type: ignore[arg-type]


async def test_plan_can_be_declined(client) -> None:
    rec = Recorder()
    with pytest.raises(ConformanceError, match="not approved"):
        await run_conformance(client, PRICE, recorder=rec, approve_plan=lambda plan: False)
    assert {x.method for x in rec.exchanges} <= {"negotiate", "get_provider_info",
                                                 "list_tools"}


async def test_select_and_skip(client) -> None:
    report = await run_conformance(client, PRICE, select=["negotiate.*"],
                                   skip=["negotiate.token_unique"])
    ran = {r.check_id for r in report.results if r.outcome != Outcome.SKIPPED}
    assert ran and all(c.startswith("negotiate.") for c in ran)
    assert report.result("negotiate.token_unique").outcome == Outcome.SKIPPED
    assert report.passed
    with pytest.raises(ConformanceError, match="no check matches"):
        await run_conformance(client, PRICE, select=["no.such.check"])


async def test_unknown_provider(client) -> None:
    with pytest.raises(ConformanceError, match="no CETP provider"):
        await run_conformance(client, "com.example.nothing")
