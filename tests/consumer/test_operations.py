"""Async operations: polling with poll_after_ms, progress, terminal states, cancellation."""

from __future__ import annotations

import pytest

from inspector.consumer import errors as cerr
from inspector.consumer.execution import ExecState, Execution
from inspector.consumer.options import EngineOptions
from inspector.protocol.exchange import ExchangeStatus
from tests.consumer.factories import v2_rig


async def accepted(rig) -> Execution:
    ex = await rig.session.execute_tool("sync_portfolio", {})
    assert ex.state == ExecState.ACCEPTED and ex.operation_id
    return ex


async def test_poll_honours_poll_after_ms_and_reports_progress() -> None:
    rig = v2_rig(op_polls=2, op_poll_after_ms=750)
    ex = await accepted(rig)
    seen: list[tuple[str, float | None]] = []

    def progress(e: Execution) -> None:
        p = e.operation.progress if e.operation else None
        seen.append((e.operation.state.value, p.fraction if p else None))

    ex = await rig.session.wait_operation(ex, progress)
    assert ex.state == ExecState.SUCCEEDED and ex.value == {"synced": 3}
    assert rig.clock.sleeps == [750, 750, 750]
    assert seen == [("running", 1 / 3), ("running", 2 / 3), ("succeeded", None)]
    for extras in rig.provider.calls("get_operation"):
        assert extras["request_id"] == ex.request_id
        assert extras["operation_id"] == ex.operation_id
    assert [f.rule_id for f in ex.output_findings] == ["result.output_schema"]


async def test_default_poll_interval_when_provider_gives_none() -> None:
    rig = v2_rig(EngineOptions(default_poll_ms=1234), op_polls=0)
    ex = await accepted(rig)
    ex.poll_after_ms = None
    await rig.session.wait_operation(ex)
    assert rig.clock.sleeps == [1234]


async def test_a_poll_after_beyond_the_auto_wait_stops_the_wait() -> None:
    """A hostile poll_after_ms of 2^63 used to sleep forever (issue 12)."""
    rig = v2_rig(EngineOptions(max_auto_wait_ms=5_000), op_polls=3)
    ex = await accepted(rig)
    ex.poll_after_ms = 2**63
    ex = await rig.session.wait_operation(ex)
    assert ex.state == ExecState.ACCEPTED and rig.clock.sleeps == []
    assert "poll again after 9223372036854775808 ms" in (ex.message or "")


async def test_an_operation_that_never_ends_is_waited_for_a_bounded_total() -> None:
    rig = v2_rig(EngineOptions(max_wait_total_ms=2_000), op_polls=10, op_poll_after_ms=750)
    ex = await rig.session.wait_operation(await accepted(rig))
    assert ex.state == ExecState.ACCEPTED
    assert rig.clock.sleeps == [750, 750]  # a third would pass 2 000 ms in all
    assert "after waiting 1500 ms" in (ex.message or "")
    assert "same request id" in (ex.message or "")


async def test_failed_operation_carries_structured_error() -> None:
    rig = v2_rig(op_fail=True, op_polls=1)
    ex = await rig.session.wait_operation(await accepted(rig))
    assert ex.state == ExecState.FAILED
    assert ex.error is not None and ex.error.error_code == "UNAVAILABLE"


async def test_cancel_ack_then_queried_cancelled() -> None:
    rig = v2_rig(op_polls=5)
    ex = await accepted(rig)
    out = await rig.session.cancel_operation(ex)
    assert out.acknowledged and out.confirmed_cancelled
    assert out.final_state == "cancelled"
    assert ex.state == ExecState.CANCELLED
    cancel_extras = rig.provider.calls("cancel_operation")[0]
    assert cancel_extras["request_id"] == ex.request_id
    assert rig.provider.effects == []


async def test_acknowledgement_alone_is_not_cancelled() -> None:
    rig = v2_rig(op_polls=5)
    ex = await accepted(rig)
    out = await rig.session.cancel_operation(ex, confirm=False)
    assert out.acknowledged and not out.confirmed_cancelled
    assert "not yet cancelled" in out.message
    assert ex.state == ExecState.ACCEPTED


async def test_acknowledged_but_completed_is_not_cancelled() -> None:
    rig = v2_rig(op_polls=1, ack_cancel_but_complete=True)
    ex = await accepted(rig)
    out = await rig.session.cancel_operation(ex)
    assert out.acknowledged and not out.confirmed_cancelled
    assert out.final_state == "succeeded"
    assert out.message.startswith("not cancelled")
    assert ex.state == ExecState.SUCCEEDED


async def test_conflict_after_commit_is_not_cancelled() -> None:
    rig = v2_rig(op_polls=3, conflict_on_cancel=True)
    ex = await accepted(rig)
    out = await rig.session.cancel_operation(ex)
    assert out.conflict and not out.acknowledged and not out.confirmed_cancelled
    assert out.final_state == "succeeded"
    assert "not cancelled" in out.message and "CONFLICT" in out.message


async def test_cancel_without_negotiated_cancellation_is_refused() -> None:
    rig = v2_rig(EngineOptions(capabilities=("async_operations",)))
    ex = await accepted(rig)
    with pytest.raises(cerr.RequestRefused) as err:
        await rig.session.cancel_operation(ex)
    assert err.value.code == cerr.CAPABILITY_NOT_NEGOTIATED
    assert rig.provider.calls("cancel_operation") == []
    assert rig.recorder.by_id(err.value.exchange_id).status == ExchangeStatus.REFUSED


async def test_accepted_without_async_negotiated_is_flagged_and_not_polled() -> None:
    rig = v2_rig(EngineOptions(capabilities=("large_results",)), force_async=True)
    ex = await rig.session.execute_tool("sync_portfolio", {})
    assert ex.state == ExecState.ACCEPTED
    x = rig.recorder.by_id(ex.exchange_ids[-1])
    failed = [f for f in x.findings if not f.ok]
    assert [f.rule_id for f in failed] == ["execute.accepted_needs_capability"]
    assert "async_operations was not negotiated" in failed[0].message
    with pytest.raises(cerr.RequestRefused):
        await rig.session.refresh_operation(ex)
    assert rig.provider.calls("get_operation") == []


async def test_sync_tool_returning_accepted_is_flagged() -> None:
    rig = v2_rig()
    tools = rig.provider.tools
    sp = next(t for t in tools if t["name"] == "sync_portfolio")
    sp["annotations"]["execution"] = "sync"
    ex = await rig.session.execute_tool("sync_portfolio", {})
    x = rig.recorder.by_id(ex.exchange_ids[-1])
    failed = [f for f in x.findings if not f.ok]
    assert [f.rule_id for f in failed] == ["execute.accepted_needs_capability"]
    assert "declares execution=sync" in failed[0].message


async def test_poll_renegotiates_after_provider_restart() -> None:
    rig = v2_rig(op_polls=1)
    ex = await accepted(rig)
    rig.provider.restart()
    ex = await rig.session.wait_operation(ex)
    assert ex.state == ExecState.SUCCEEDED
    assert len(rig.provider.calls("negotiate")) == 2
