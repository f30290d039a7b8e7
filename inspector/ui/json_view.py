"""JSON display: a highlighted plain-text editor and a result view with a collapsible tree."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import QPlainTextEdit, QTabWidget, QTreeView, QWidget

from inspector.ui.highlight import JsonHighlighter, set_json_text
from inspector.ui.json_tree import JsonTreeModel
from inspector.ui.text import pretty_json


def mono_font() -> QFont:
    f = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    f.setPointSize(max(f.pointSize(), 9))
    return f


class JsonEditor(QPlainTextEdit):
    """Plain text only (never rich text), highlighted from pygments tokens."""

    def __init__(self, parent: QWidget | None = None, *, read_only: bool = False) -> None:
        super().__init__(parent)
        self.setFont(mono_font())
        self.setReadOnly(read_only)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setTabStopDistance(self.fontMetrics().horizontalAdvance(" ") * 2)
        self.highlighter = JsonHighlighter(self.document())

    def show_text(self, text: str) -> None:
        set_json_text(self, self.highlighter, text, f"highlight:{id(self):x}")

    def show_plain(self, text: str) -> None:
        """Text that is not JSON (unverified bytes, a hex dump): shown without colours."""
        self.highlighter.enabled = False
        self.setPlainText(text)

    def show_value(self, value: Any) -> None:
        self.show_text(pretty_json(value))


class JsonResultView(QTabWidget):
    """A JSON value as highlighted text and as a lazily built tree."""

    TREE_FIRST_BYTES = 64 * 1024  # open big results on the tree tab

    def __init__(
        self, parent: QWidget | None = None, placeholder: str = "No value yet."
    ) -> None:
        super().__init__(parent)
        self.text = JsonEditor(read_only=True)
        self.text.setPlaceholderText(placeholder)  # an empty pane says what will appear
        self.tree_model = JsonTreeModel()
        self.tree = QTreeView()
        self.tree.setModel(self.tree_model)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.addTab(self.text, "JSON")
        self.addTab(self.tree, "Tree")

    def show_value(self, value: Any) -> None:
        text = pretty_json(value)
        self.text.show_text(text)
        self.tree_model.set_value(value)
        self.tree.expandToDepth(0)
        self.tree.resizeColumnToContents(0)
        self.setCurrentIndex(1 if len(text) > self.TREE_FIRST_BYTES else 0)

    def clear(self) -> None:
        self.text.show_text("")
        self.tree_model.set_value(None)
