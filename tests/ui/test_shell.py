"""The application shell: layout saved, themes, About box, shortcuts, empty state,
plain-text handling of hostile provider text and big documents off the UI thread."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QLabel

from inspector.ui import theme
from inspector.ui.controller import Controller
from inspector.ui.dialogs import ConfirmationDialog
from inspector.ui.highlight import BIG_DOCUMENT
from inspector.ui.json_view import JsonEditor
from inspector.ui.main_window import TABS, MainWindow
from inspector.ui.qt_compat import guard_against_none_leak, none_leaks_per_void_call
from inspector.ui.text import bound, mask_secret
from tests.ui.fixtures import Harness

pytestmark = pytest.mark.gui


def test_layout_and_theme_are_saved_and_restored(qtbot, qloop, tmp_path, qapp):
    path = str(tmp_path / "s.ini")
    w = MainWindow(Controller(), QSettings(path, QSettings.Format.IniFormat), autostart=False)
    qtbot.addWidget(w)
    w.show()
    w.traffic_dock.hide()
    w.toggle_theme()
    assert theme.current() == "dark"
    w.close()
    saved = QSettings(path, QSettings.Format.IniFormat)
    assert saved.value("geometry") is not None and saved.value("windowState") is not None
    w2 = MainWindow(Controller(), QSettings(path, QSettings.Format.IniFormat), autostart=False)
    qtbot.addWidget(w2)
    w2.show()
    assert theme.current() == "dark" and w2.act_theme.text() == "Light theme"
    assert not w2.traffic_dock.isVisible()  # the dock layout came back
    w2.toggle_theme()
    assert theme.current() == "light"


def test_shortcuts_exist_and_switch_tabs(harness: Harness):
    w = harness.window
    keys = {a.shortcut().toString() for a in w.actions()}
    assert {"F5", "Ctrl+R", "Ctrl+N", "Ctrl+F", "Ctrl+K", "F1", "Ctrl+Q"} <= keys
    assert {f"Ctrl+{i + 1}" for i in range(len(TABS))} <= keys
    harness.open_provider()
    tab_action = next(a for a in w.actions() if a.shortcut().toString() == "Ctrl+4")
    tab_action.trigger()
    assert w.tabs.currentIndex() == 3


def test_about_box_shows_app_and_relay_versions(harness: Harness):
    dlg = harness.window.show_about()
    assert "App version" in dlg.version_text and "Relay" in dlg.version_text
    assert "not connected" not in dlg.version_text  # the virtual device answered hello
    dlg.close()


def test_empty_state_offers_the_virtual_device(harness: Harness):
    w = harness.window
    assert w.stack.currentWidget() is w.empty
    assert "virtual device" in w.empty.text.text()
    w.empty.button.click()
    harness.wait(lambda: w.current_key is not None and w.stack.currentWidget() is w.tabs)


def test_hostile_provider_text_stays_plain_and_bounded(qtbot, qloop):
    evil = "<b>bold</b><img src=x>" + "\u202e" + "A" * 50_000
    dlg = ConfirmationDialog({"confirmation_id": "c1", "title": evil, "target": evil,
                              "action": "x", "parameters": {"k": evil}})
    qtbot.addWidget(dlg)
    labels = [lb for lb in dlg.findChildren(QLabel) if "bold" in lb.text()]
    assert labels and all(lb.textFormat() == Qt.TextFormat.PlainText for lb in labels)
    assert all(len(lb.text()) < 1000 and "\u202e" not in lb.text() for lb in labels)
    answers = []
    dlg.answered.connect(lambda cid, ok: answers.append((cid, ok)))
    dlg.close()  # backing out of the screen is a denial
    assert answers == [("c1", False)]
    assert mask_secret("abcdefghijklmnop").startswith("abcd") and "ijkl" not in mask_secret(
        "abcdefghijklmnop")
    assert bound("x" * 10, 5).startswith("xxxxx…")


def test_big_document_is_highlighted_in_the_background(qtbot, qloop, idle):
    ed = JsonEditor(read_only=True)
    qtbot.addWidget(ed)
    doc = json.dumps([{"key": i, "value": "v" * 40} for i in range(6000)], indent=1)
    assert len(doc) > BIG_DOCUMENT
    ed.show_text(doc)
    assert ed.toPlainText() == doc  # the text is there at once, colours follow
    idle()
    qtbot.waitUntil(lambda: not ed.highlighter.busy, timeout=20_000)
    block = ed.document().findBlockByNumber(ed.document().blockCount() - 3)
    assert block.layout().formats()  # the last lines got their colours too


def test_the_installed_binding_does_not_leak_none(qloop):
    """The pinned PySide6 must not drop None references (6.12.0 does, and aborts)."""
    assert none_leaks_per_void_call() == 0
    assert guard_against_none_leak() is False  # nothing to neutralise
