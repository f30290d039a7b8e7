"""AUTH_REQUIRED / USER_ACTION_REQUIRED: resolution, resume with the same id, denial."""

from __future__ import annotations

import pytest

from inspector.consumer import errors as cerr
from inspector.consumer.execution import ExecState
from inspector.protocol.bundle import PendingIntentHandle
from tests.consumer.factories import v2_rig


async def test_confirmation_approved_resumes_with_same_id_and_token() -> None:
    rig = v2_rig()
    ex = await rig.session.execute_tool("delete_alert", {"alert_id": "a1"})
    assert ex.state == ExecState.NEEDS_RESOLUTION
    assert isinstance(ex.resolution, PendingIntentHandle)
    token = ex.resume_token
    assert token and token.startswith("resume-")
    assert rig.provider.effects == []  # nothing before confirmation
    ex = await rig.session.launch_resolution(ex)
    assert rig.relay.launches == [ex.resolution.id]
    assert ex.state == ExecState.SUCCEEDED and ex.value == {"deleted": True}
    assert ex.resolution_result == "approved"
    first, second = rig.provider.calls("execute_tool")
    assert first["request_id"] == second["request_id"] == ex.request_id
    assert second["resume_token"] == token and first["args"] == second["args"]
    assert rig.provider.effects == [(ex.request_id, "delete_alert")]
    assert ex.resume_token is None  # single use


async def test_confirmation_is_not_looped_automatically() -> None:
    rig = v2_rig()
    ex = await rig.session.execute_tool("delete_alert", {"alert_id": "a1"})
    assert ex.state == ExecState.NEEDS_RESOLUTION
    assert len(rig.provider.calls("execute_tool")) == 1
    assert rig.relay.launches == []


async def test_denied_in_provider_ui_is_reported_and_not_resumed() -> None:
    rig = v2_rig()
    rig.relay.user_response = "deny"
    ex = await rig.session.execute_tool("delete_alert", {"alert_id": "a1"})
    ex = await rig.session.launch_resolution(ex)
    assert ex.state == ExecState.RESOLUTION_DECLINED
    assert "denied" in ex.message
    assert len(rig.provider.calls("execute_tool")) == 1
    assert rig.provider.effects == []


async def test_provider_user_cancelled_is_reported() -> None:
    rig = v2_rig()
    rig.relay.user_response = "deny_ok"  # activity returns OK but the user said no
    ex = await rig.session.execute_tool("delete_alert", {"alert_id": "a1"})
    ex = await rig.session.launch_resolution(ex)
    assert ex.state == ExecState.USER_CANCELLED
    assert ex.error is not None and ex.error.error_code == "USER_CANCELLED"
    assert rig.provider.effects == []


async def test_resolution_without_pending_intent_is_flagged() -> None:
    rig = v2_rig(execute_errors=[{"code": "AUTH_REQUIRED", "retryable": False}])
    ex = await rig.session.execute_tool("get_quote", {"symbol": "X"})
    assert ex.state == ExecState.NEEDS_RESOLUTION
    failed = [f for f in rig.recorder.by_id(ex.exchange_ids[-1]).findings if not f.ok]
    assert [f.rule_id for f in failed] == ["error.resolution_fields"]
    assert "missing resolution, resume_token" in failed[0].message
    with pytest.raises(cerr.RequestRefused):
        await rig.session.launch_resolution(ex)
    with pytest.raises(cerr.RequestRefused):
        await rig.session.resume(ex)


async def test_mutable_pending_intent_is_flagged() -> None:
    rig = v2_rig()
    rig.relay.pending_flags = PendingIntentHandle.IMMUTABLE_KNOWN  # known, not immutable
    ex = await rig.session.execute_tool("delete_alert", {"alert_id": "a1"})
    ex = await rig.session.launch_resolution(ex)
    first = rig.recorder.by_id(ex.exchange_ids[0])
    assert [f.rule_id for f in first.findings if not f.ok] == ["error.resolution_immutable"]
    assert ex.state == ExecState.SUCCEEDED
