"""The result panel shows values as people read them, never Python reprs (issue 14)."""

from __future__ import annotations

import pytest

from inspector.ui.result_panel import _short, plain_value

pytestmark = pytest.mark.gui


def test_values_are_json_not_python_reprs():
    assert plain_value({"size": 12, "ok": True}) == '{"size": 12, "ok": true}'
    assert plain_value(True) == "true" and plain_value(None) == "—"
    assert "'" not in _short({"size": 1}) and "True" not in _short([True])
    assert _short(1234567) == "1,234,567"
    assert _short("a" * 64) == f"{'a' * 12}…{'a' * 6}"


def test_an_empty_tree_tab_says_why(qtbot):
    from inspector.ui.json_view import JsonResultView

    view = JsonResultView()
    qtbot.addWidget(view)
    view.show()
    view.setCurrentIndex(1)
    assert view.tree_note.isVisible() and view.tree_note.text() == view.NO_TREE
    view.show_value({"a": [1, 2]})
    assert view.tree_note.isHidden()
    view.clear()
    view.show_tree_note(view.TEXT_ONLY)
    view.setCurrentIndex(1)
    assert "text only" in view.tree_note.text() and view.tree_note.isVisible()
