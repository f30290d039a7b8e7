"""The "Bridge" view: watch a running MCP bridge (`cetp-inspector mcp`) live.

The bridge journals every call (inspector/mcp/feed.py); this view tails that journal, so it
attaches to a bridge running in another process: which client, which tool, what came back,
and pending confirmations. On the virtual device a pending confirmation is the device's
screen, answered here by the person at the desk (Approve / Deny write the answer file the
bridge waits for); on a phone it is answered on the phone. Folding records into rows is
`inspector.mcp.feed.BridgeState` (no protocol logic here); all text is bounded plain text.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector.mcp.feed import BridgeState, JournalTail, latest_bridge_journal, write_answer
from inspector.ui.text import PARAGRAPH_LIMIT, bound, shrinkable

COLUMNS = ("Time", "Client", "Tool", "State", "What came back")
POLL_MS = 300
MAX_BYTES_PER_POLL = 1024 * 1024  # bounded work per tick on the UI thread


class BridgeView(QWidget):
    """Calls of one bridge session, live; pending confirmations with Approve / Deny."""

    def __init__(self, journal: Path | str | None = None, parent: QWidget | None = None,
                 *, directory: Path | str | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Bridge (MCP)")
        self.directory = directory
        self.state = BridgeState()
        self.tail: JournalTail | None = None
        self._rows: dict[str, int] = {}

        self.source = QLabel("No bridge attached")
        self.source.setTextFormat(Qt.TextFormat.PlainText)
        self.source.setWordWrap(True)
        shrinkable(self.source)  # a long journal path must not widen the window (issue 14)
        self.attach_latest = QPushButton("Attach to latest bridge")
        self.attach_latest.clicked.connect(lambda: self.attach(None))
        self.attach_file = QPushButton("Attach to journal…")
        self.attach_file.clicked.connect(self._choose)
        top = QHBoxLayout()
        top.addWidget(self.source, 1)
        top.addWidget(self.attach_latest)
        top.addWidget(self.attach_file)

        self.summary = QLabel("")
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.summary.setWordWrap(True)
        shrinkable(self.summary)  # provider names without spaces cannot wrap

        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(
            len(COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)
        self.table.setColumnWidth(COLUMNS.index("Tool"), 260)
        self.table.itemSelectionChanged.connect(self._show_details)
        self.details = QPlainTextEdit()
        self.details.setReadOnly(True)
        self.details.setPlaceholderText("Select a call to see its arguments and answer")

        self.pending_label = QLabel("Pending confirmations")
        self.pending = QListWidget()
        self.pending.setWordWrap(True)
        self.pending.currentItemChanged.connect(lambda *_: self._update_buttons())
        self.approve = QPushButton("Approve")
        self.deny = QPushButton("Deny")
        self.approve.clicked.connect(lambda: self._answer(True))
        self.deny.clicked.connect(lambda: self._answer(False))
        buttons = QHBoxLayout()
        buttons.addWidget(self.approve)
        buttons.addWidget(self.deny)
        side = QWidget()
        side_l = QVBoxLayout(side)
        side_l.setContentsMargins(0, 0, 0, 0)
        side_l.addWidget(self.pending_label)
        side_l.addWidget(self.pending, 1)
        side_l.addLayout(buttons)
        side_l.addWidget(self.details, 2)

        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.table)
        split.addWidget(side)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)

        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.summary)
        layout.addWidget(split, 1)

        self.timer = QTimer(self)
        self.timer.setInterval(POLL_MS)
        self.timer.timeout.connect(self.poll)
        self._update_buttons()
        if journal is not None:
            self.attach(journal)

    # ------------------------------------------------------------------ attaching
    def attach(self, journal: Path | str | None) -> bool:
        """Follow `journal` (default: the latest bridge session)."""
        path = Path(journal) if journal is not None else latest_bridge_journal(self.directory)
        if path is None or not path.exists():
            self.source.setText("No bridge session found: start one with `cetp-inspector "
                                "mcp` (its journal is named mcp-bridge)")
            return False
        self.state = BridgeState()
        self._rows.clear()
        self.table.setRowCount(0)
        self.tail = JournalTail(path, max_bytes_per_poll=MAX_BYTES_PER_POLL)
        self.source.setText(f"Bridge journal: {bound(str(path), 300)}")
        self.poll()
        self.timer.start()
        return True

    def _choose(self) -> None:
        name, _ = QFileDialog.getOpenFileName(self, "Bridge journal", "",
                                              "Session journals (*.jsonl)")
        if name:
            self.attach(name)

    # ------------------------------------------------------------------ live updates
    def poll(self) -> None:
        if self.tail is None:
            return
        if self.state.apply(self.tail.poll()):
            self._render()

    def _render(self) -> None:
        s = self.state
        clients = ", ".join(bound(c, 80) for c in s.clients[-5:]) or "none yet"
        self.summary.setText(
            f"Device {bound(s.device, 60) or '?'} · {len(s.tools)} tools · clients: {clients}"
            f" · {len(s.calls)} calls · {s.exchanges} provider exchanges"
            + (f" · tools/list_changed sent {s.list_changed}×" if s.list_changed else ""))
        for cid, row in s.calls.items():
            r = self._rows.get(cid)
            if r is None:
                r = self.table.rowCount()
                self.table.insertRow(r)
                self._rows[cid] = r
            when = dt.datetime.fromtimestamp(row.at_ms / 1000).strftime("%H:%M:%S")
            values = (when, bound(row.client, 60), bound(row.tool, 80), row.state,
                      bound(row.summary, 300))
            for c, v in enumerate(values):
                item = self.table.item(r, c)
                if item is None:
                    item = QTableWidgetItem(v)
                    item.setData(Qt.ItemDataRole.UserRole, cid)
                    self.table.setItem(r, c, item)
                elif item.text() != v:
                    item.setText(v)
        self._render_pending()

    def _render_pending(self) -> None:
        want: list[tuple[str, str]] = []
        for conf, d in self.state.pending.items():
            text = (f"{bound(d.get('title') or d.get('action') or 'Confirmation', 120)} — "
                    f"{bound(d.get('package'), 80)}: {bound(d.get('target'), 120)}")
            if d.get("consequences"):
                text += f" ({bound(d.get('consequences'), 200)})"
            want.append((conf, text))
        for cid, tool in self.state.waiting_on_phone.items():
            want.append((f"phone:{cid}", f"{bound(tool, 80)}: confirm on the phone"))
        have = [self.pending.item(i).data(Qt.ItemDataRole.UserRole)
                for i in range(self.pending.count())]
        if have != [w[0] for w in want]:
            self.pending.clear()
            for key, text in want:
                item = QListWidgetItem(text)
                item.setData(Qt.ItemDataRole.UserRole, key)
                self.pending.addItem(item)
            if self.pending.count():
                self.pending.setCurrentRow(0)
        self.pending_label.setText(f"Pending confirmations ({len(want)})")
        self._update_buttons()

    def _selected_confirmation(self) -> str | None:
        item = self.pending.currentItem()
        key = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        return key if isinstance(key, str) and key in self.state.pending else None

    def _update_buttons(self) -> None:
        ok = self._selected_confirmation() is not None
        self.approve.setEnabled(ok)
        self.deny.setEnabled(ok)

    def _answer(self, approve: bool) -> None:
        """The virtual device's screen: the person here answers (never the bridge)."""
        conf = self._selected_confirmation()
        if conf is None or self.tail is None:
            return
        write_answer(self.tail.path, conf, approve)
        self.state.pending.pop(conf, None)
        self._render_pending()

    def _show_details(self) -> None:
        items = self.table.selectedItems()
        if not items:
            return
        row = self.state.calls.get(items[0].data(Qt.ItemDataRole.UserRole))
        if row is None:
            return
        try:
            args = json.dumps(row.arguments, indent=2, ensure_ascii=False)
        except (TypeError, ValueError):
            args = repr(row.arguments)
        self.details.setPlainText(
            f"tool: {bound(row.tool, 200)}\nclient: {bound(row.client, 200)}\n"
            f"request_id: {bound(row.request_id, 100)}\nstate: {row.state}\n\narguments:\n"
            f"{bound(args, PARAGRAPH_LIMIT, single_line=False)}\n\nanswer:\n"
            f"{bound(row.summary, PARAGRAPH_LIMIT, single_line=False)}")

    def closeEvent(self, event: Any) -> None:
        self.timer.stop()
        super().closeEvent(event)


def install_bridge_action(window: Any, menu: QMenu) -> QAction:
    """View > Bridge (MCP)…: opens the view attached to the latest bridge session."""
    action = QAction("Bridge (MCP)…", window)
    action.setShortcut(QKeySequence("Ctrl+Shift+B"))
    action.setToolTip("Watch a running `cetp-inspector mcp` bridge live (Ctrl+Shift+B)")

    def open_view() -> None:
        view = BridgeView(parent=None)
        view.attach(None)
        view.resize(1000, 600)
        keep = getattr(window, "side_windows", None)
        if isinstance(keep, list):
            keep.append(view)
        window.bridge_view = view
        view.show()

    action.triggered.connect(open_view)
    window.addAction(action)
    menu.addAction(action)
    return action
