"""A RESULT_CANCELED the relay classifies as `cancelled_new_task` is a provider bug, not the
user's "no" (Java relay outcome, docs/relay-protocol.md §4)."""

from __future__ import annotations

from inspector.consumer.execution import ExecState
from inspector.relay.api import ActivityResult
from tests.consumer.factories import v2_rig


async def _launch_with(outcome: str | None) -> tuple[object, list[object]]:
    rig = v2_rig()

    async def launch(handle: str, timeout_ms: int = 120_000) -> ActivityResult:
        return ActivityResult(0, None, outcome=outcome, elapsed_ms=30,
                              detail="RESULT_CANCELED after 30 ms")

    rig.relay.launch_pending_intent = launch  # type: ignore[method-assign]
    ex = await rig.session.execute_tool("delete_alert", {"alert_id": "a1"})
    ex = await rig.session.launch_resolution(ex)
    assert ex.state == ExecState.RESOLUTION_DECLINED and rig.provider.effects == []
    exchange = rig.session.recorder.by_id(ex.exchange_ids[-1])
    assert exchange is not None and exchange.decoded["outcome"] == outcome
    return ex, list(exchange.findings)


async def test_new_task_cancel_is_named_as_such_with_a_finding() -> None:
    ex, findings = await _launch_with("cancelled_new_task")
    assert ex.resolution_result == "cancelled_new_task"  # type: ignore[attr-defined]
    assert "new task" in ex.message and "not the user's no" in ex.message  # type: ignore[attr-defined]
    assert any(getattr(f, "rule_id", "") == "resolution.new_task" for f in findings)


async def test_a_user_cancel_stays_a_decline() -> None:
    ex, findings = await _launch_with("user_cancelled")
    assert ex.resolution_result == "declined"  # type: ignore[attr-defined]
    assert "denied" in ex.message  # type: ignore[attr-defined]
    assert not any(getattr(f, "rule_id", "") == "resolution.new_task" for f in findings)
