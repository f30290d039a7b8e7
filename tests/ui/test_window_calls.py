"""Calls stay honest under real hands (issue 14): Escape denies, results never belong to
another call, Send is guarded while a call runs, closing asks, status/findings stay fresh."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from inspector.consumer.execution import ExecState
from inspector.protocol.exchange import ExchangeKind
from tests.ui.fixtures import Harness

pytestmark = pytest.mark.gui

WATCHLIST = {"symbols": ["ACME", "GLOBX", "INITECH", "UMBRL"], "step_ms": 1000}


def double_click_tool(h: Harness, name: str) -> None:
    """What a person does on the Tools tab: double-click the tool's row."""
    w = h.window
    w.tabs.setCurrentIndex(1)
    lst = w.tools.list
    item = next(
        lst.topLevelItem(i)
        for i in range(lst.topLevelItemCount())
        if lst.topLevelItem(i).data(0, Qt.ItemDataRole.UserRole) == name
    )
    lst.scrollToItem(item)
    cell = lst.visualRect(lst.indexFromItem(item, 0))  # the name cell, not the whole row:
    pos = cell.intersected(lst.viewport().rect()).center()  # a narrow list clips the row
    h.qtbot.mouseClick(lst.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    h.qtbot.mouseDClick(lst.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    h.wait(lambda: w.composer.target is not None and w.composer.target.name == name)


def executions_of(h: Harness, tool: str) -> set[str]:
    return {
        x.request_id
        for x in h.controller.exchanges()
        if x.method == "execute_tool" and x.tool == tool and x.request_id
    }


def test_escape_on_the_confirmation_screen_denies_at_once(harness: Harness):
    harness.open_provider()
    w = harness.window
    harness.compose("create_alert", {"symbol": "ACME", "price": 12.5})
    rid = harness.send()
    harness.wait(lambda: (ex := harness.execution(rid)) is not None
                 and ex.state == ExecState.NEEDS_RESOLUTION)
    w.result.launch.click()
    harness.wait(lambda: w.confirmation_dialog is not None and w.confirmation_dialog.isVisible())
    harness.qtbot.keyClick(w.confirmation_dialog, Qt.Key.Key_Escape)
    # the denial reaches the device now, not after the resolution's 120 s timeout
    harness.wait(
        lambda: harness.execution(rid).state
        in (ExecState.RESOLUTION_DECLINED, ExecState.USER_CANCELLED),
        timeout=5_000,
    )
    harness.wait(lambda: "Denied" in w.result.state.text())


def test_a_result_is_never_shown_under_another_tool(harness: Harness):
    harness.open_provider()
    w = harness.window
    harness.compose("get_quote", {"symbol": "ACME"})
    harness.send()
    harness.wait(lambda: w.result.state.text() == "Success")
    assert "get_quote" in w.result.call.text()
    double_click_tool(harness, "list_alerts")
    assert w.result.state.text() != "Success"
    assert "get_quote" not in w.result.call.text()
    assert w.result.value_view.text.toPlainText() == ""


def test_another_provider_leaves_no_form_of_the_previous_one(harness: Harness):
    harness.open_provider()
    w = harness.window
    harness.compose("get_quote", {"symbol": "ACME"})
    assert w.composer.form.field("symbol") is not None
    harness.open_provider("com.example.finance")
    assert w.composer.target is None
    assert w.composer.form.field("symbol") is None
    assert "ACME" not in w.composer.raw.toPlainText()
    assert not w.composer.send.isEnabled()


def test_another_extension_resets_the_composer_and_send_targets_it(harness: Harness):
    w = harness.window
    view = w.extension_view
    assert w.navigator.select("virtual", "hello_world")
    harness.wait(lambda: view.host is not None and view.functions.count() > 0
                 and view.functions.item(0).data(Qt.ItemDataRole.UserRole) is not None)
    fn = view.host.functions[0].name
    assert view.select_function(fn)
    harness.wait(lambda: view.composer.send.isEnabled())
    view.composer.confirm = lambda *_: True
    harness.qtbot.mouseClick(view.composer.send, Qt.MouseButton.LeftButton)
    harness.wait(lambda: view.outcome.text().startswith(("✓", "✗")))
    assert view.outcome.text().startswith(f"✓ result of {fn}")
    before = [x for x in harness.controller.exchanges() if x.kind == ExchangeKind.EXTENSION]

    assert w.navigator.select("virtual", "unit_converter")
    harness.wait(lambda: view.host is not None and view.host.decl.id == "unit_converter")
    assert view.composer.target is None and view.outcome.text() == "No call yet."
    assert not view.composer.send.isEnabled()
    harness.qtbot.mouseClick(view.composer.send, Qt.MouseButton.LeftButton)
    harness.qtbot.keyClick(
        view.composer.raw, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier
    )
    after = [x for x in harness.controller.exchanges() if x.kind == ExchangeKind.EXTENSION]
    assert len(after) == len(before)  # nothing of hello_world was sent again


def test_ten_clicks_on_send_make_one_call_which_cancel_stops(harness: Harness):
    harness.open_provider()
    w = harness.window
    harness.compose("sync_watchlist", WATCHLIST)
    w.composer.confirm = lambda *_: True
    for _ in range(10):
        harness.qtbot.mouseClick(w.composer.send, Qt.MouseButton.LeftButton)
    assert len(w.in_flight) == 1
    [rid] = w.in_flight
    assert w.composer.in_flight_bar.isVisible() and rid in w.composer.in_flight_text.text()
    assert not w.composer.send.isEnabled()
    harness.wait(lambda: executions_of(harness, "sync_watchlist") == {rid})
    harness.wait(lambda: harness.execution(rid).state == ExecState.ACCEPTED)
    harness.qtbot.mouseClick(w.composer.cancel_call, Qt.MouseButton.LeftButton)
    harness.wait(lambda: not w.in_flight, timeout=20_000)
    assert not w.composer.in_flight_bar.isVisible()
    ex = harness.execution(rid)
    assert ex.state == ExecState.CANCELLED or (ex.cancel and ex.cancel.confirmed_cancelled)
    assert executions_of(harness, "sync_watchlist") == {rid}
    assert w.composer.send.isEnabled()


def test_send_again_is_an_explicit_second_call(harness: Harness):
    harness.open_provider()
    w = harness.window
    harness.compose("sync_watchlist", WATCHLIST)
    w.composer.confirm = lambda *_: True
    harness.qtbot.mouseClick(w.composer.send, Qt.MouseButton.LeftButton)
    [first] = w.in_flight
    harness.qtbot.mouseClick(w.composer.send_again, Qt.MouseButton.LeftButton)
    assert len(w.in_flight) == 2 and first in w.in_flight
    harness.wait(lambda: len(executions_of(harness, "sync_watchlist")) == 2)


def test_closing_with_a_call_in_flight_asks_first(harness: Harness):
    harness.open_provider()
    w = harness.window
    harness.compose("sync_watchlist", WATCHLIST)
    rid = harness.send()
    asked: list[list[str]] = []
    w.confirm_close = lambda running: asked.append(running) or False
    w.close()
    assert asked == [[rid]] and w.isVisible()
    w.confirm_close = lambda running: True
    w.close()
    assert not w.isVisible()


def test_renegotiating_drops_the_earlier_negotiation_findings(harness: Harness):
    harness.open_provider()
    ov = harness.window.overview

    def findings() -> list[str]:
        return [ov.findings.item(i).text() for i in range(ov.findings.count())]

    assert any("async_operations requested and granted" in f for f in findings())
    ov.caps["async_operations"].setChecked(False)
    harness.qtbot.mouseClick(ov.negotiate, Qt.MouseButton.LeftButton)
    harness.wait(lambda: "async_operations" not in ov.n_caps.text() and ov.n_caps.text() != "—")
    harness.wait(
        lambda: not any("async_operations requested and granted" in f for f in findings())
    )
    assert any("large_results requested and granted" in f for f in findings())
    assert len(findings()) == len(set(findings()))


def test_a_failed_negotiation_message_goes_once_negotiation_succeeds(harness: Harness):
    harness.open_provider()
    w = harness.window
    ov = w.overview
    ov.versions.setText("7")
    harness.qtbot.mouseClick(ov.negotiate, Qt.MouseButton.LeftButton)
    harness.wait(lambda: w._status.text().startswith("Negotiation failed"))
    ov.versions.setText("2,1")
    harness.qtbot.mouseClick(ov.negotiate, Qt.MouseButton.LeftButton)
    harness.wait(lambda: "failed" not in w._status.text())
    assert w.last_error == ""
