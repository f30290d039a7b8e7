"""Panels on their own: retry_after countdown, tool-list diff and v1 view, negotiation
input, and a v1-only provider called through the window."""

from __future__ import annotations

import pytest

from inspector.consumer.execution import ExecState, Execution
from inspector.consumer.negotiation import ToolChange, ToolListDiff
from inspector.protocol.cetp import ErrorInfo, ToolList, V1ToolList
from inspector.ui.overview_panel import parse_versions_text
from inspector.ui.result_panel import ResultPanel
from inspector.ui.tools_panel import ToolsPanel
from tests.ui.fixtures import Harness

pytestmark = pytest.mark.gui

ANN = {"effect": "read", "risk": "low", "idempotent": True, "confirmation": "never"}


def test_retry_after_countdown_holds_the_retry_button(qtbot, qloop):
    panel = ResultPanel()
    qtbot.addWidget(panel)
    retried: list[str] = []
    panel.retryRequested.connect(retried.append)
    ex = Execution(tool_name="t", args_json="{}", state=ExecState.FAILED,
                   error=ErrorInfo(error_code="RATE_LIMITED", error_message="slow down",
                                   retryable=True, retry_after_ms=400))
    panel.show_execution(ex)
    assert panel.err_code.text() == "RATE_LIMITED" and panel.err_retryable.text() == "true"
    assert not panel.retry.isEnabled() and "retry in" in panel.err_retry_after.text()
    qtbot.waitUntil(panel.retry.isEnabled, timeout=3_000)
    assert "elapsed" in panel.err_retry_after.text()
    panel.retry.click()
    assert retried == [ex.request_id]


def test_not_retryable_error_has_no_retry_button(qtbot, qloop):
    panel = ResultPanel()
    qtbot.addWidget(panel)
    panel.show_execution(Execution(tool_name="t", args_json="{}", state=ExecState.FAILED,
                                   error=ErrorInfo(error_code="INVALID_ARGS", retryable=False)))
    assert panel.retry.isHidden()


def _tools(revision: str, *names: str, effect: str = "read") -> ToolList:
    return ToolList.model_validate({"revision": revision, "tools": [
        {"name": n, "description": n, "input_schema": {"type": "object"},
         "annotations": {**ANN, "effect": effect}} for n in names]})


def test_tools_panel_shows_revision_diff_and_v1_side_effect_warning(qtbot, qloop):
    panel = ToolsPanel()
    qtbot.addWidget(panel)
    diff = ToolListDiff(old_revision="r1", new_revision="r2", added=["b"],
                        changed=[ToolChange(name="a", fields=["annotations.risk"])])
    v2 = _tools("r2", "a", "b", effect="create")
    v1 = V1ToolList.model_validate({"tools": [{"name": "a", "description": "old a"}]})
    panel.show_tools(v2, diff, v1)
    assert "revision r2" in panel.revision.text()
    assert "+ added: b" in panel.diff.text() and "annotations.risk" in panel.diff.text()
    assert panel.v1_list.topLevelItemCount() == 1
    assert "side-effecting" in panel.v1_note.text() and "§2.1" in panel.v1_note.text()
    composed: list = []
    panel.composeRequested.connect(lambda n, v: composed.append((n, v)))
    assert panel.select("b")
    assert "effect: create" in panel.badges.texts()
    panel.compose.click()
    assert composed == [("b", 2)]


def test_consumer_versions_input():
    assert parse_versions_text("1, 2") == (2, 1)
    with pytest.raises(ValueError, match="not a version"):
        parse_versions_text("2,x")


def test_v1_only_provider_is_called_over_v1(harness: Harness):
    harness.open_provider("com.example.finance")
    w = harness.window
    assert not w.overview.nego.isEnabled()
    harness.wait(lambda: w.tools.v1_list.topLevelItemCount() > 0)
    assert w.tools.select("get_portfolio_holdings", version=1)
    w.tools.compose.click()
    assert w.composer.target.annotations is None
    assert "no annotations" in w.composer.badges.texts()
    harness.wait(lambda: w.composer.send.isEnabled())
    rid = harness.send()
    harness.wait(lambda: (ex := harness.execution(rid)) is not None
                 and ex.state.is_final)
    assert harness.execution(rid).protocol_version == 1
    assert harness.execution(rid).state == ExecState.SUCCEEDED
    harness.wait(lambda: w.result.state.text() == "Success")
    assert w.traffic.model.total > 0


def test_every_execution_state_has_a_result_text() -> None:
    """The result pane names every engine state in words, never a raw enum value."""
    from inspector.consumer.execution import ExecState
    from inspector.ui.result_panel import _STATE_TEXT

    assert set(_STATE_TEXT) == set(ExecState)
