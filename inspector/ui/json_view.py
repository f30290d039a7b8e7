"""JSON display: a highlighted plain-text editor and a result view with a collapsible tree."""

from __future__ import annotations

from typing import Any

import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QTabWidget, QTreeView, QVBoxLayout, QWidget

from inspector.tasks import spawn
from inspector.ui.highlight import JsonHighlighter, set_json_text
from inspector.ui.json_tree import JsonTreeModel
from inspector.ui.text import pretty_json
from inspector.ui.workers import run_in_thread


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
        self.setTabChangesFocus(True)

    def keyPressEvent(self, event) -> None:
        """Tab moves the focus (keyboard users leave the editor); Ctrl+Tab indents."""
        ctrl = event.modifiers() & Qt.KeyboardModifier.ControlModifier
        if event.key() == Qt.Key.Key_Tab and ctrl:
            if not self.isReadOnly():
                self.insertPlainText("  ")
            return
        super().keyPressEvent(event)

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
        tree_page = QWidget()
        tl = QVBoxLayout(tree_page)
        tl.setContentsMargins(0, 0, 0, 0)
        self.tree_note = QLabel(self.NO_TREE)  # an empty tree says why
        self.tree_note.setObjectName("treeNote")
        self.tree_note.setTextFormat(Qt.TextFormat.PlainText)
        self.tree_note.setWordWrap(True)
        self.tree_note.setProperty("role", "muted")
        tl.addWidget(self.tree_note)
        tl.addWidget(self.tree, 1)
        self.addTab(tree_page, "Tree")

    NO_TREE = "No value yet."
    TEXT_ONLY = ("No tree: this result is text only (a preview of a file result, or not "
                 "JSON). Save the file to read all of it.")
    TEXT_CAP = 200_000  # characters in the JSON tab; the tree (and Save) have the rest
    SMALL_NODES = 2_000  # up to this many JSON nodes, render at once on the UI thread

    _value: Any = None
    _shown = False
    _generation = 0

    def show_value(self, value: Any) -> None:
        """Show `value`; the same object again is a no-op (executions are re-shown on every
        progress step). Big values are pretty-printed in a worker thread: a 6000-row
        result must not stall the window (the GUI tests' stall watchdog fails on that)."""
        if self._shown and value is self._value:
            return
        self._value, self._shown = value, True
        self._generation += 1
        if count_nodes(value, self.SMALL_NODES) <= self.SMALL_NODES:
            self._show(value, pretty_json(value, self.TEXT_CAP), small=True)
            return
        spawn(self._render(value, self._generation), f"json-view:{id(self):x}")

    async def _render(self, value: Any, generation: int) -> None:
        text = await run_in_thread(pretty_json, value, self.TEXT_CAP)
        if generation == self._generation and shiboken6.isValid(self):
            self._show(value, text, small=False)

    def _show(self, value: Any, text: str, *, small: bool) -> None:
        self.tree_note.setVisible(False)
        self.text.show_text(text)
        self.tree_model.set_value(value)
        self.tree.expandToDepth(0)
        if small:  # measuring every row of a big tree costs more than it helps
            self.tree.resizeColumnToContents(0)
        else:
            self.tree.setColumnWidth(0, 280)
        self.setCurrentIndex(1 if len(text) > self.TREE_FIRST_BYTES else 0)

    def clear(self) -> None:
        self._value, self._shown = None, False
        self._generation += 1
        self.text.show_text("")
        self.tree_model.set_value(None)
        self.show_tree_note(self.NO_TREE)

    def show_tree_note(self, text: str) -> None:
        """What the Tree tab says while it has no tree."""
        self.tree_note.setText(text)
        self.tree_note.setVisible(True)


def count_nodes(value: Any, cap: int) -> int:
    """JSON nodes in `value`, counting stops past `cap` (so the cost is bounded)."""
    n, stack = 0, [value]
    while stack and n <= cap:
        v = stack.pop()
        n += 1
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list | tuple):
            stack.extend(v)
    return n
