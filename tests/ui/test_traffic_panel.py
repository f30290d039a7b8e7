"""History in the traffic log: a past call reopened in the composer and re-sent, and its
request, response, request_id and command line copied (issue 14)."""

from __future__ import annotations

import json
import shlex

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from inspector.consumer.execution import ExecState
from tests.ui.fixtures import PRICEALERTS, Harness

pytestmark = pytest.mark.gui


def select_call(h: Harness, request_id: str):
    panel = h.window.traffic
    h.wait(lambda: any(x.request_id == request_id and x.method == "execute_tool"
                       for x in h.controller.exchanges()))
    ex = next(x for x in h.controller.exchanges()
              if x.request_id == request_id and x.method == "execute_tool")
    h.wait(lambda: panel.select_exchange(ex.id))
    h.wait(lambda: panel.reopen.isEnabled())
    return panel


def test_a_past_call_is_reopened_and_sent_again(harness: Harness):
    w = harness.window
    harness.open_provider()
    harness.compose("get_quote", {"symbol": "ACME"})
    rid = harness.send()
    harness.wait(lambda: w.result.state.text() == "Success")
    harness.compose("list_alerts", {})
    panel = select_call(harness, rid)
    harness.qtbot.mouseClick(panel.reopen, Qt.MouseButton.LeftButton)
    assert w.composer.target.name == "get_quote" and harness.args() == {"symbol": "ACME"}
    assert w.tabs.currentIndex() == 2
    harness.wait(lambda: w.composer.send.isEnabled())
    again = harness.send()
    assert again != rid
    harness.wait(lambda: (ex := harness.execution(again)) is not None
                 and ex.state == ExecState.SUCCEEDED)


def test_the_parts_of_a_call_are_copied(harness: Harness):
    w = harness.window
    harness.open_provider()
    harness.compose("get_quote", {"symbol": "ACME"})
    rid = harness.send()
    harness.wait(lambda: w.result.state.text() == "Success")
    panel = select_call(harness, rid)
    clip = QApplication.clipboard()
    assert panel.copy_button.isEnabled()  # the Copy menu on the selected call
    panel.copy_id.trigger()
    assert clip.text() == rid
    panel.copy_request.trigger()
    assert "get_quote" in clip.text() and json.loads(clip.text())
    panel.copy_response.trigger()
    assert "success" in clip.text()
    panel.copy_command.trigger()
    argv = shlex.split(clip.text())
    assert argv[:4] == ["cetp-inspector", "call", PRICEALERTS, "get_quote"]
    assert json.loads(argv[argv.index("--args") + 1]) == {"symbol": "ACME"}
