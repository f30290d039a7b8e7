"""Async operations: one row per operation with state, progress, next poll and elapsed time;
a timeline of the states seen, cancel, and the final result.

Rows are keyed by request_id (the execution that created the operation), so they survive a
reconnect: the session keeps polling with the same ids and the rows just update.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from inspector.consumer.execution import ExecState, Execution
from inspector.ui import theme
from inspector.ui.json_view import JsonResultView
from inspector.ui.text import bound, shrinkable

COLUMNS = ("Operation", "Tool", "State", "Progress", "Message", "Next poll", "Elapsed")
_Index = QModelIndex | QPersistentModelIndex


@dataclass
class OpRow:
    execution: Execution
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None
    next_poll_at: float | None = None
    timeline: list[tuple[float, str]] = field(default_factory=list)

    @property
    def state(self) -> str:
        op = self.execution.operation
        if op is not None:
            return op.state.value
        return (
            "accepted"
            if self.execution.state == ExecState.ACCEPTED
            else (self.execution.state.value)
        )

    @property
    def final(self) -> bool:
        op = self.execution.operation
        return (op is not None and op.is_terminal) or self.execution.state.is_final


class OperationsModel(QAbstractTableModel):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.rows: list[OpRow] = []
        self._by_id: dict[str, int] = {}

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ):
        if (
            role == Qt.ItemDataRole.DisplayRole
            and orientation == Qt.Orientation.Horizontal
            and 0 <= section < len(COLUMNS)
        ):
            return COLUMNS[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return None
        r = self.rows[index.row()]
        ex = r.execution
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            prog = ex.operation.progress if ex.operation else None
            if col == 0:
                return bound(ex.operation_id or "—", 40)
            if col == 1:
                return bound(ex.tool_name, 64)
            if col == 2:
                return r.state
            if col == 3:
                f = prog.fraction if prog else None
                return "—" if f is None else f"{f * 100:.0f} %"
            if col == 4:
                return bound(prog.message if prog and prog.message else ex.message, 120)
            if col == 5:
                if r.final or r.next_poll_at is None:
                    return "—"
                return f"in {max(0.0, r.next_poll_at - time.monotonic()):.1f} s"
            if col == 6:
                end = r.ended if r.ended is not None else time.monotonic()
                return f"{end - r.started:.1f} s"
        if role == Qt.ItemDataRole.ForegroundRole and col == 2:
            st = r.state
            if st in ("failed",):
                return theme.color("error")
            if st in ("succeeded",):
                return theme.color("ok")
            if st in ("cancelled", "cancellation_requested"):
                return theme.color("warn")
        return None

    def upsert(self, ex: Execution) -> OpRow:
        i = self._by_id.get(ex.request_id)
        if i is None:
            row = OpRow(ex)
            self.beginInsertRows(QModelIndex(), len(self.rows), len(self.rows))
            self._by_id[ex.request_id] = len(self.rows)
            self.rows.append(row)
            self.endInsertRows()
        else:
            row = self.rows[i]
            row.execution = ex
        if not row.timeline or row.timeline[-1][1] != row.state:
            row.timeline.append((time.time(), row.state))
        if ex.poll_after_ms is not None and not row.final:
            row.next_poll_at = time.monotonic() + ex.poll_after_ms / 1000
        if row.final and row.ended is None:
            row.ended = time.monotonic()
        r = self._by_id[ex.request_id]
        self.dataChanged.emit(self.index(r, 0), self.index(r, len(COLUMNS) - 1))
        return row

    def clear(self) -> None:
        self.beginResetModel()
        self.rows.clear()
        self._by_id.clear()
        self.endResetModel()

    def row_for(self, request_id: str) -> OpRow | None:
        i = self._by_id.get(request_id)
        return None if i is None else self.rows[i]

    def tick(self) -> None:
        """Repaint the time columns of running operations."""
        for i, r in enumerate(self.rows):
            if not r.final:
                self.dataChanged.emit(self.index(i, 5), self.index(i, 6))


class OperationsPanel(QWidget):
    cancelRequested = Signal(str)  # request_id

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = OperationsModel(self)
        lay = QVBoxLayout(self)
        self.empty = QLabel(
            "No async operations yet. Tools with execution “sync_or_async” "
            "may answer “accepted”; their operations show up here and keep "
            "being polled across reconnects."
        )
        self.empty.setWordWrap(True)
        self.empty.setProperty("role", "muted")
        lay.addWidget(self.empty)
        split = QSplitter(Qt.Orientation.Vertical)
        self.table = QTableView()
        self.table.setObjectName("operationsTable")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        hh = self.table.horizontalHeader()
        hh.setStretchLastSection(False)
        hh.setSectionResizeMode(4, QHeaderView.ResizeMode.Stretch)  # the message gets the room
        for col, width in enumerate((190, 130, 90, 80, 0, 90, 80)):
            if width:
                self.table.setColumnWidth(col, width)
        self.table.setAlternatingRowColors(True)
        split.addWidget(self.table)
        detail = QWidget()
        dl = QVBoxLayout(detail)
        dl.setContentsMargins(0, 0, 0, 0)
        bar = QHBoxLayout()
        self.progress = QProgressBar()
        self.progress.setObjectName("operationProgress")
        bar.addWidget(self.progress, 1)
        self.cancel = QPushButton(theme.icon("cancel"), "Cancel operation")
        self.cancel.setObjectName("cancelOperation")
        self.cancel.setEnabled(False)
        bar.addWidget(self.cancel)
        dl.addLayout(bar)
        self.status = QLabel("")
        self.status.setObjectName("operationStatus")
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setWordWrap(True)
        shrinkable(self.status)  # a provider's status text may have no spaces (issue 14)
        dl.addWidget(self.status)
        low = QSplitter(Qt.Orientation.Horizontal)
        self.timeline = QListWidget()
        self.timeline.setObjectName("operationTimeline")
        low.addWidget(self.timeline)
        self.result = JsonResultView(
            placeholder="The final result appears here when the operation ends."
        )
        low.addWidget(self.result)
        low.setStretchFactor(1, 2)
        dl.addWidget(low, 1)
        split.addWidget(detail)
        lay.addWidget(split, 1)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._show_selected())
        self.cancel.clicked.connect(self._cancel)
        self.model.rowsInserted.connect(lambda *_: self.empty.setVisible(False))
        self._timer = QTimer(self)
        self._timer.setInterval(500)
        self._timer.timeout.connect(self.model.tick)
        self._timer.start()

    def show_executions(self, executions: list[Execution]) -> None:
        """Replace the rows (another provider was picked)."""
        self.model.clear()
        self.timeline.clear()
        self.result.clear()
        self.status.setText("")
        self.cancel.setEnabled(False)
        for ex in executions:
            self.update_execution(ex)
        self.empty.setVisible(self.model.rowCount() == 0)

    def update_execution(self, ex: Execution) -> None:
        if not ex.operation_id:
            return
        row = self.model.upsert(ex)
        if self.model.rowCount() == 1 or self.selected_request_id() == ex.request_id:
            self.table.selectRow(self.model._by_id[ex.request_id])
        if self.selected_request_id() == ex.request_id:
            self._show(row)

    def selected_request_id(self) -> str | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return None
        return self.model.rows[rows[0].row()].execution.request_id

    def _show_selected(self) -> None:
        rid = self.selected_request_id()
        row = self.model.row_for(rid) if rid else None
        if row is not None:
            self._show(row)

    def _show(self, row: OpRow) -> None:
        ex = row.execution
        prog = ex.operation.progress if ex.operation else None
        f = prog.fraction if prog else None
        if f is None and not row.final:
            self.progress.setRange(0, 0)
        else:
            self.progress.setRange(0, 100)
            self.progress.setValue(int((f if f is not None else 1.0) * 100))
        self.progress.setFormat(bound(prog.message, 80) if prog and prog.message else "%p%")
        self.timeline.clear()
        for ts, st in row.timeline:
            self.timeline.addItem(f"{time.strftime('%H:%M:%S', time.localtime(ts))}  {st}")
        msg = f"{bound(ex.tool_name, 64)} · {row.state}"
        if ex.cancel is not None:
            c = ex.cancel
            msg += " · cancel: " + (
                "confirmed cancelled"
                if c.confirmed_cancelled
                else "CONFLICT — already committed"
                if c.conflict
                else "acknowledged, waiting for a terminal state"
                if c.acknowledged
                else bound(c.message, 120)
            )
        if ex.error is not None:
            msg += f" · {bound(ex.error.error_code, 40)}: {bound(ex.error.error_message, 200)}"
        self.status.setText(msg)
        self.cancel.setEnabled(not row.final)
        if ex.has_value:
            self.result.show_value(ex.value)
        elif ex.operation is not None and ex.operation.result is not None:
            self.result.show_value(ex.operation.result.model_dump(mode="json"))
        else:
            self.result.clear()

    def _cancel(self) -> None:
        rid = self.selected_request_id()
        if rid:
            self.cancel.setEnabled(False)
            self.cancelRequested.emit(rid)
