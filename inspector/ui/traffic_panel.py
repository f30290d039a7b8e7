"""The traffic log panel: filter box, the exchange table and a detail pane.

The detail pane shows the raw typed Bundles both ways (their loss-free JSON form, with Java
types kept, e.g. `{"t": "int", "v": 2}`), the decoded payload, findings and notes, as plain text.
"""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QItemSelection, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QSplitter,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from inspector.protocol.exchange import Exchange
from inspector.session.redaction import masked
from inspector.tasks import spawn
from inspector.ui import theme
from inspector.ui.json_view import JsonEditor
from inspector.ui.provider_logs_view import describe_logs
from inspector.ui.text import bound, human_bytes, mask_secret, pretty_json
from inspector.ui.traffic_model import TrafficModel


def masked_exchange(ex: Exchange) -> Exchange:
    """A copy of `ex` whose session/resume tokens are masked where the protocol carries
    them (structural, as bug-report redaction): what screenshots and pasted logs show."""
    doc = masked(ex.model_dump(mode="json"), mask_secret)
    return Exchange.model_validate(doc)


def describe(ex: Exchange, *, reveal: bool = False) -> str:
    """The detail pane's text for one exchange (plain text, bounded); tokens masked
    unless `reveal`."""
    if not reveal:
        ex = masked_exchange(ex)
    dur = ex.duration_ms
    head = [
        f"// {ex.kind.value} {bound(ex.method, 80)} → {bound(ex.target, 120)}",
        f"// status: {ex.status.value}"
        + (f"  error: {bound(ex.error_code, 60)}" if ex.error_code else ""),
        f"// device: {bound(ex.device, 60)}  package: {bound(ex.package, 120)}",
        f"// request_id: {bound(ex.request_id or '—', 80)}  attempt: {ex.attempt}"
        + (f"  parent: {ex.parent_id}" if ex.parent_id else ""),
        f"// duration: {'pending' if dur is None else f'{dur:,.1f} ms'}  sent: "
        f"{human_bytes(ex.request_bytes)}  received: {human_bytes(ex.response_bytes)}",
    ]
    if ex.error_message:
        head.append(f"// error_message: {bound(ex.error_message, 600)}")
    for f in ex.findings:
        mark = "ok " if f.ok else "FAIL"
        head.append(f"// [{mark}] {f.level} {f.section} {f.rule_id}: {bound(f.message, 300)}")
    for n in ex.notes:
        head.append(f"// note: {bound(n, 300)}")
    head += describe_logs(ex)  # the provider's log lines and crash (issue 16)
    body = [
        "\n// ── request (typed Bundle) ──",
        pretty_json(ex.request, 500_000),
        "\n// ── response (typed Bundle) ──",
        pretty_json(ex.response, 1_000_000),
    ]
    if ex.decoded is not None:
        body += ["\n// ── decoded ──", pretty_json(ex.decoded, 1_000_000)]
    return "\n".join(head + body)


class TrafficPanel(QWidget):
    """Every exchange of the session; Ctrl+F focuses the filter."""

    exchangeSelected = Signal(str)
    reopenRequested = Signal(str)  # exchange id: put this call back into the composer
    commandRequested = Signal(str)  # exchange id: copy it as a `cetp-inspector call` line

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = TrafficModel(self)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        bar = QHBoxLayout()
        self.filter = QLineEdit()
        self.filter.setObjectName("trafficFilter")
        self.filter.setPlaceholderText(
            "Filter traffic — words, or status:error method:execute_tool tool:… target:… kind:… "
            "logs:error"
        )
        self.filter.setClearButtonEnabled(True)
        self.filter.addAction(theme.icon("filter"), QLineEdit.ActionPosition.LeadingPosition)
        bar.addWidget(self.filter, 1)
        self.count = QLabel("0 exchanges")
        self.count.setProperty("role", "muted")
        bar.addWidget(self.count)
        self.reveal = QPushButton(theme.icon("eye"), "Reveal tokens")
        self.reveal.setObjectName("trafficRevealTokens")
        self.reveal.setCheckable(True)
        self.reveal.setToolTip("Session and resume tokens are masked in the detail and the "
                               "text export; reveal them here (they will show in "
                               "screenshots and pasted logs)")
        bar.addWidget(self.reveal)
        self.clear_button = QPushButton(theme.icon("clear"), "Clear")
        self.clear_button.setToolTip("Clear the traffic log (the session journal keeps it)")
        bar.addWidget(self.clear_button)
        lay.addLayout(bar)

        split = QSplitter(Qt.Orientation.Horizontal)
        self.table = QTableView()
        self.table.setObjectName("trafficTable")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setAlternatingRowColors(True)
        self.table.setShowGrid(False)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.table.verticalHeader().setDefaultSectionSize(22)
        hh = self.table.horizontalHeader()
        hh.setStretchLastSection(True)
        for col, width in enumerate((44, 92, 66, 112, 170, 110, 140, 72, 64, 72)):
            self.table.setColumnWidth(col, width)
        split.addWidget(self.table)
        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        self.history = QWidget()  # the selected call: reopen it, copy its parts
        hl = QHBoxLayout(self.history)  # one line: the dock stays short on small screens
        hl.setContentsMargins(0, 0, 0, 0)
        self.reopen = QPushButton(theme.icon("composer"), "Open in composer")
        self.reopen.setObjectName("reopenCall")
        self.reopen.setToolTip("Put this call's tool and arguments back into the composer")
        self.copy_button = QToolButton()
        self.copy_button.setText("Copy")
        self.copy_button.setObjectName("copyCall")
        self.copy_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.copy_button)
        self.copy_request = menu.addAction("Request (JSON)")
        self.copy_response = menu.addAction("Response (JSON)")
        self.copy_id = menu.addAction("request_id")
        self.copy_command = menu.addAction("As a `cetp-inspector call …` command")
        self.copy_button.setMenu(menu)
        for b in (self.reopen, self.copy_request, self.copy_response, self.copy_id,
                  self.copy_command):
            b.setEnabled(False)
        hl.addWidget(self.reopen)
        hl.addWidget(self.copy_button)
        hl.addStretch(1)
        rl.addWidget(self.history)
        self.detail = JsonEditor(read_only=True)
        self.detail.setObjectName("trafficDetail")
        self.detail.setPlaceholderText("Select an exchange to see the raw Bundles both ways.")
        rl.addWidget(self.detail, 1)
        split.addWidget(right)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setSizes([950, 450])  # every column fits at the default window width
        lay.addWidget(split, 1)

        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(120)
        self._debounce.timeout.connect(self._run_filter)
        self.filter.textChanged.connect(lambda _t: self._debounce.start())
        self.clear_button.clicked.connect(self.model.clear)
        self.table.selectionModel().selectionChanged.connect(self._selection)
        self.model.rowsInserted.connect(self._update_count)
        self.model.modelReset.connect(self._update_count)
        self.model.filterApplied.connect(lambda *_: self._update_count())
        self._follow = True
        self.model.rowsInserted.connect(self._autoscroll)
        self.selected: Exchange | None = None
        self.reveal.toggled.connect(self._reveal_toggled)
        self.reopen.clicked.connect(lambda: self._emit_selected(self.reopenRequested))
        self.copy_command.triggered.connect(lambda: self._emit_selected(self.commandRequested))
        self.copy_request.triggered.connect(lambda: self._copy_part("request"))
        self.copy_response.triggered.connect(lambda: self._copy_part("response"))
        self.copy_id.triggered.connect(
            lambda: copy_text(self.selected.request_id or "") if self.selected else None
        )

    def _emit_selected(self, signal: Any) -> None:
        if self.selected is not None:
            signal.emit(self.selected.id)

    def _copy_part(self, part: str) -> None:
        if self.selected is not None:
            value = getattr(self.selected, part)
            if value is not None and not self.reveal.isChecked():
                value = masked(value, mask_secret)  # tokens stay masked unless revealed
            copy_text(pretty_json(value, 2_000_000) if value is not None else "")

    def _run_filter(self) -> None:
        spawn(self.model.set_filter_async(self.filter.text()), "traffic-filter")

    def _update_count(self, *_: object) -> None:
        shown, total = self.model.rowCount(), self.model.total
        noun = "exchange" if total == 1 else "exchanges"
        self.count.setText(
            f"{total:,} {noun}" if shown == total else f"{shown:,} of {total:,} {noun}"
        )

    def _autoscroll(self, *_: object) -> None:
        bar = self.table.verticalScrollBar()
        if self._follow and bar.value() >= bar.maximum() - 2:
            QTimer.singleShot(0, self.table, self.table.scrollToBottom)

    def _selection(self, selected: QItemSelection, _deselected: QItemSelection) -> None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return
        ex = self.model.exchange_at(rows[0].row())
        if ex is not None:
            self.show_exchange(ex)
            self.exchangeSelected.emit(ex.id)

    def show_exchange(self, ex: Exchange) -> None:
        self.selected = ex
        self.detail.show_text(describe(ex, reveal=self.reveal.isChecked()))
        call = ex.method == "execute_tool" and bool(ex.tool)
        self.reopen.setEnabled(call)
        self.copy_command.setEnabled(call)
        self.copy_request.setEnabled(ex.request is not None)
        self.copy_response.setEnabled(ex.response is not None)
        self.copy_id.setEnabled(bool(ex.request_id))

    def _reveal_toggled(self, on: bool) -> None:
        self.reveal.setText("Hide tokens" if on else "Reveal tokens")
        if self.selected is not None:
            self.show_exchange(self.selected)

    def select_exchange(self, exchange_id: str) -> bool:
        row = self.model.row_of(exchange_id)
        if row is None:
            return False
        self.table.selectRow(row)
        self.table.scrollTo(self.model.index(row, 0))
        return True

    def export_text(self, *, reveal: bool | None = None) -> str:
        """The visible rows as JSON lines (for copy / bug reports); tokens masked unless
        revealed (the panel's Reveal button, or `reveal=True`)."""
        show = self.reveal.isChecked() if reveal is None else reveal
        out = []
        for r in range(self.model.rowCount()):
            ex = self.model.exchange_at(r)
            if ex is not None:
                doc = ex.model_dump(mode="json")
                out.append(json.dumps(doc if show else masked(doc, mask_secret),
                                      ensure_ascii=False))
        return "\n".join(out)


def copy_text(text: str) -> None:
    """Put plain text on the clipboard."""
    QApplication.clipboard().setText(text)
