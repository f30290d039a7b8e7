"""Menus, toolbar and keyboard: the smaller things a person reaches for (issue 14)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QToolBar

from inspector.consumer.execution import Execution
from inspector.ui.composer import CallComposer
from inspector.ui.schema_form import SchemaForm
from inspector.ui.sessions_panel import BundleChoice, SessionsPanel
from inspector.ui.window_calls import save_name
from tests.ui.fixtures import Harness

pytestmark = pytest.mark.gui


@pytest.fixture
def journal_dir(tmp_path: Path) -> Path:
    return tmp_path / "journals"


def test_conformance_has_a_shortcut(harness: Harness):
    harness.open_provider()
    w = harness.window
    w.activateWindow()
    w.tabs.setFocus()
    harness.qtbot.keyClick(w.tabs, Qt.Key.Key_6, Qt.KeyboardModifier.ControlModifier)
    harness.wait(lambda: w.tabs.currentWidget() is w.conformance_holder)


def test_export_bug_report_is_in_the_file_menu_and_toolbar(harness: Harness, tmp_path: Path,
                                                           monkeypatch):
    w = harness.window
    file_menu = w.menuBar().actions()[0].menu()
    assert w.act_export_bundle in file_menu.actions()
    bar = w.findChild(QToolBar, "mainToolbar")
    assert w.act_export_bundle in bar.actions()
    target = tmp_path / "out.cetpbundle"
    monkeypatch.setattr(SessionsPanel, "_export_dialog",
                        lambda self, s: BundleChoice(path=str(target)))
    harness.open_provider()
    w.act_export_bundle.trigger()
    harness.wait(lambda: target.exists(), timeout=15_000)


def test_tab_leaves_the_json_editor_and_ctrl_tab_indents(qtbot):
    composer = CallComposer()
    qtbot.addWidget(composer)
    composer.show()
    composer.raw.setFocus()
    qtbot.waitUntil(composer.raw.hasFocus)
    composer.raw.setPlainText("{}")
    qtbot.keyClick(composer.raw, Qt.Key.Key_Tab, Qt.KeyboardModifier.ControlModifier)
    assert composer.raw.toPlainText() != "{}" and "\t" not in composer.raw.toPlainText()
    before = composer.raw.toPlainText()
    qtbot.keyClick(composer.raw, Qt.Key.Key_Tab)
    assert composer.raw.toPlainText() == before
    qtbot.waitUntil(lambda: not composer.raw.hasFocus())


def test_an_unchecked_required_boolean_says_false(qtbot):
    form = SchemaForm()
    qtbot.addWidget(form)
    form.set_schema({"type": "object", "required": ["on"],
                     "properties": {"on": {"type": "boolean"}}})
    box = form.field("on").box
    assert box.text() == "false" and form.value() == {"on": False}
    box.setChecked(True)
    assert box.text() == "true" and form.value() == {"on": True}


def test_the_extension_composer_names_what_exists(harness: Harness):
    view = harness.window.extension_view
    assert "Tools tab" not in view.composer.title.text()
    assert "function" in view.composer.title.text()


def test_the_default_save_name_has_tool_time_and_type():
    ex = Execution(request_id="r", tool_name="export_history", args_json="{}")
    ex.file = type("F", (), {"media_type": "text/csv; charset=utf-8"})()
    t = time.mktime((2026, 12, 1, 18, 30, 5, 0, 0, -1))
    assert save_name(ex, t) == "export_history-20261201-183005.csv"
    ex.file = None
    assert save_name(ex, t).endswith(".bin") and save_name(ex, t) != "result.bin"


def test_the_provider_traffic_is_the_dock_filtered_not_a_duplicate_tab(harness: Harness):
    harness.open_provider()
    w = harness.window
    assert "Traffic" not in [w.tabs.tabText(i) for i in range(w.tabs.count())]
    authority = w.controller.entry(w.current_key).declaration.authority
    w.traffic_dock.hide()
    harness.qtbot.keyClick(w.tabs, Qt.Key.Key_5, Qt.KeyboardModifier.ControlModifier)
    assert w.traffic_dock.isVisible()
    assert w.traffic.filter.text() == f"target:{authority}"
    model = w.traffic.model
    harness.wait(lambda: model.rowCount() > 0 and all(
        model.exchange_at(r).target == authority for r in range(model.rowCount())))
    assert model.rowCount() < model.total  # the virtual device's other traffic is hidden
