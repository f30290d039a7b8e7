"""The conformance results view (results tree, detail, evidence), also used read-only by
the bundle viewer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from inspector.conformance.model import (
    CheckResult,
)
from inspector.ui import theme
from inspector.ui.conformance_models import (
    EXCHANGE_ROLE,
    EvidenceModel,
    ExchangeLookup,
    ResultsModel,
    result_detail,
)
from inspector.ui.json_view import mono_font

# --------------------------------------------------------------------------------------
# results view (also used read-only by the bundle viewer)


class ConformanceResultsView(QWidget):
    """Results grouped by section, the selected result's detail and its evidence.

    Signal `evidence_requested(str)`: the user asked to see an exchange in the traffic log.
    """

    evidence_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = ResultsModel(self)
        self.tree = QTreeView()
        self.tree.setModel(self.model)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.tree.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.tree.header().setStretchLastSection(True)
        self.problems_only = QCheckBox("Only checks that did not pass")
        self.problems_only.toggled.connect(lambda _on: self.apply_filter())
        self.detail = QPlainTextEdit()
        self.detail.setReadOnly(True)
        self.detail.setFont(mono_font())
        self.detail.setPlaceholderText("Select a check to see what it saw.")
        self.evidence_model = EvidenceModel(self)
        self.evidence = QTreeView()
        self.evidence.setModel(self.evidence_model)
        self.evidence.setRootIsDecorated(False)
        self.evidence.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.show_evidence = QPushButton(theme.icon("traffic"), "Show in traffic log")
        self.show_evidence.setEnabled(False)
        self.show_evidence.setToolTip("Select the chosen exchange in the traffic log")

        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.addWidget(self.detail, 3)
        rl.addWidget(self.evidence, 1)
        rl.addWidget(self.show_evidence)
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        ll.addWidget(self.problems_only)
        ll.addWidget(self.tree, 1)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left)
        split.addWidget(right)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(split)

        self.tree.selectionModel().currentRowChanged.connect(self._on_current)
        self.evidence.doubleClicked.connect(self._on_evidence_activated)
        self.evidence.selectionModel().currentRowChanged.connect(
            lambda cur, _prev: self.show_evidence.setEnabled(cur.isValid())
        )
        self.show_evidence.clicked.connect(self._emit_selected_evidence)

    def set_exchange_lookup(self, lookup: ExchangeLookup | None) -> None:
        """Name evidence rows by method/tool/status (e.g. from the session's recorder)."""
        self.evidence_model.lookup = lookup

    def set_embedded(self, exchanges: Sequence[dict[str, Any]]) -> None:
        """Exchanges carried by the report itself (looked up when the log has none)."""
        self.evidence_model.embedded = {str(x.get("id")): x for x in exchanges
                                        if isinstance(x, dict)}

    def set_results(self, results: Sequence[CheckResult]) -> None:
        self.model.set_results(results)
        self.tree.expandAll()
        self.apply_filter()
        self._resize()

    def add_result(self, r: CheckResult) -> None:
        self.model.add_result(r)
        parent = self.model.index_of(r.check_id).parent()
        if parent.isValid():
            self.tree.expand(parent)
        self.apply_filter()

    def apply_filter(self) -> None:
        """Hide passing / not applicable / skipped rows (and emptied sections) on demand."""
        only = self.problems_only.isChecked()
        root = QModelIndex()
        for g in range(self.model.rowCount()):
            gi = self.model.index(g, 0)
            shown = 0
            for c in range(self.model.rowCount(gi)):
                r = self.model.result_at(self.model.index(c, 0, gi))
                hide = only and r is not None and r.outcome.ok
                self.tree.setRowHidden(c, gi, hide)
                shown += 0 if hide else 1
            self.tree.setRowHidden(g, root, only and shown == 0)

    def visible_check_ids(self) -> list[str]:
        out = []
        for g in range(self.model.rowCount()):
            gi = self.model.index(g, 0)
            if self.tree.isRowHidden(g, QModelIndex()):
                continue
            for c in range(self.model.rowCount(gi)):
                r = self.model.result_at(self.model.index(c, 0, gi))
                if r is not None and not self.tree.isRowHidden(c, gi):
                    out.append(r.check_id)
        return out

    def _resize(self) -> None:
        self.tree.resizeColumnToContents(0)
        self.tree.setColumnWidth(0, min(self.tree.columnWidth(0), 380))
        self.tree.resizeColumnToContents(1)
        self.tree.resizeColumnToContents(2)

    def select(self, check_id: str) -> bool:
        idx = self.model.index_of(check_id)
        if not idx.isValid():
            return False
        self.tree.setCurrentIndex(idx)
        return True

    def current(self) -> CheckResult | None:
        return self.model.result_at(self.tree.currentIndex())

    def _on_current(self, cur: QModelIndex, _prev: QModelIndex) -> None:
        r = self.model.result_at(cur)
        if r is None:
            self.detail.clear()
            self.evidence_model.set_ids([])
            self.show_evidence.setEnabled(False)
            return
        self.detail.setPlainText(result_detail(r))
        self.evidence_model.set_ids(r.evidence.exchange_ids)
        self.evidence.resizeColumnToContents(0)
        if r.evidence.exchange_ids:
            self.evidence.setCurrentIndex(self.evidence_model.index(0, 0))
        self.show_evidence.setEnabled(bool(r.evidence.exchange_ids))

    def _on_evidence_activated(self, index: QModelIndex) -> None:
        x = self.evidence_model.data(index, EXCHANGE_ROLE)
        if isinstance(x, str):
            self.evidence_requested.emit(x)

    def _emit_selected_evidence(self) -> None:
        idx = self.evidence.currentIndex()
        if idx.isValid():
            self._on_evidence_activated(idx)
