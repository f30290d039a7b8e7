"""The bug-report bundle viewer: everything in a bundle, read-only, no phone needed.

A bundle comes from someone else, so all of it is untrusted: `open_bundle` has already
checked member names, sizes and digests; here every value is shown as plain, bounded text
(item models, QPlainTextEdit), never as markup. The SUMMARY.md is shown as its source text.

Embedding (the main window wires it, e.g. from File ▸ Open bug report…):

    viewer = BundleViewer(parent=None)            # a top-level window or a tab
    viewer.replay_requested.connect(window.replay_bundle)   # BugReport → replay dialog
    viewer.open_path(path)                        # async load; `loaded` signal when done
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTableView,
    QTabWidget,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from inspector.conformance.model import ConformanceReport
from inspector.session.bundle_file import BugReport, BundleError, open_bundle
from inspector.ui import theme
from inspector.ui.conformance_panel import ConformanceResultsView, WidgetTasks, summary_text
from inspector.ui.json_tree import JsonTreeModel
from inspector.ui.json_view import JsonEditor, mono_font
from inspector.ui.row_table_model import RowTableModel
from inspector.ui.sessions_panel import device_text, when
from inspector.ui.text import PARAGRAPH_LIMIT, bound, pretty_json, set_plain, shrinkable
from inspector.ui.traffic_panel import TrafficPanel
from inspector.ui.workers import run_in_thread

_Index = QModelIndex | QPersistentModelIndex

# device facts shown first, in this order, with readable labels
_DEVICE_KEYS = (
    ("manufacturer", "Manufacturer"),
    ("model", "Model"),
    ("release", "Android version"),
    ("sdk_int", "SDK level"),
    ("serial", "Serial"),
    ("relay_version_name", "Relay version"),
    ("relay_version_code", "Relay build"),
    ("protocol_version", "Relay protocol"),
)


class KeyValueModel(RowTableModel[tuple[str, str]]):
    """Two plain-text columns (Fact, Value) over a flat list of pairs."""

    def __init__(self, headers: tuple[str, str] = ("Fact", "Value"),
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.headers = headers
        self.COLUMNS = headers

    def set_pairs(self, pairs: list[tuple[str, str]]) -> None:
        self.set_rows((bound(k, 120), bound(v, 600)) for k, v in pairs)

    def pairs(self) -> list[tuple[str, str]]:
        return self.rows()

    def row_data(self, row: tuple[str, str], index: _Index, role: int) -> Any:
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return row[index.column()]
        return None


def _plain(v: Any) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, list) and all(isinstance(x, str | int | float) for x in v):
        return ", ".join(str(x) for x in v)
    return pretty_json(v, 2_000).replace("\n", " ")


def device_pairs(device: dict[str, Any]) -> list[tuple[str, str]]:
    """Known facts first with readable labels, then the rest as recorded."""
    out = [(label, _plain(device[k])) for k, label in _DEVICE_KEYS if k in device]
    known = {k for k, _ in _DEVICE_KEYS}
    out += [(str(k), _plain(v)) for k, v in sorted(device.items(), key=lambda kv: str(kv[0]))
            if k not in known]
    return out


def providers_value(report: BugReport) -> dict[str, Any]:
    """Declarations and descriptors as one JSON value for the tree (decoded answers)."""
    desc: dict[str, Any] = {}
    for authority, methods in report.descriptors.items():
        if not isinstance(methods, dict):
            continue
        desc[str(authority)] = {
            str(m): (v.get("decoded") if isinstance(v, dict) and v.get("decoded") is not None
                     else v)
            for m, v in methods.items()
        }
    return {"manifest declarations": report.declarations, "descriptors": desc}


def resolve_pointer(value: Any, pointer: str) -> Any:
    """The part of `value` an RFC 6901 pointer names (None when it names nothing)."""
    if not pointer:
        return value
    for raw in pointer.lstrip("/").split("/"):
        key = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict):
            value = value.get(key)
        elif isinstance(value, list) and key.isdigit() and int(key) < len(value):
            value = value[int(key)]
        else:
            return None
    return value


def parse_conformance(value: Any) -> ConformanceReport | None:
    """The bundle's conformance member as a report, or None when it is not one."""
    if not isinstance(value, dict):
        return None
    try:
        return ConformanceReport.model_validate(value)
    except ValidationError:
        return None


class BundleViewer(QWidget):
    """A bug-report bundle, read-only: summary, device, providers, exchanges, conformance.

    Signals: `loaded(object)` — the `BugReport` now shown; `failed(str)` — why a bundle
    could not be opened; `replay_requested(object)` — the user wants to replay this
    bundle's session (the `BugReport`; the main window opens the replay dialog).
    """

    loaded = Signal(object)
    failed = Signal(str)
    replay_requested = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.report: BugReport | None = None
        self.conformance: ConformanceReport | None = None
        self.error: str | None = None
        self._task: asyncio.Task[Any] | None = None
        self.tasks = WidgetTasks(self)
        self.setWindowTitle("Bug report")

        self.title = QLabel("No bundle open")
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        self.title.setProperty("role", "heading")
        shrinkable(self.title)  # a report's long title must not widen the window (issue 14)
        self.meta = QLabel("")
        self.meta.setTextFormat(Qt.TextFormat.PlainText)
        self.meta.setWordWrap(True)
        self.meta.setProperty("role", "muted")
        shrinkable(self.meta)
        self.secrets = QLabel("")
        self.secrets.setTextFormat(Qt.TextFormat.PlainText)
        self.secrets.setWordWrap(True)
        shrinkable(self.secrets)
        self.replay_button = QPushButton(theme.icon("reconnect"), "Replay…")
        self.replay_button.setToolTip("Re-run this session against a device and compare")
        self.replay_button.setEnabled(False)
        self.replay_button.clicked.connect(self._replay_clicked)

        self.summary = QPlainTextEdit()
        self.summary.setReadOnly(True)
        self.summary.setFont(mono_font())
        self.device_model = KeyValueModel(parent=self)
        self.device_view = QTableView()
        self.device_view.setModel(self.device_model)
        self.device_view.verticalHeader().setVisible(False)
        self.device_view.horizontalHeader().setStretchLastSection(True)
        self.device_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.device_view.setWordWrap(False)
        self.providers_model = JsonTreeModel(None, self)
        self.providers_view = QTreeView()
        self.providers_view.setModel(self.providers_model)
        self.providers_view.setUniformRowHeights(True)
        self.providers_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.providers_text = JsonEditor(read_only=True)
        self.providers_view.selectionModel().currentChanged.connect(self._provider_node)
        prov = QSplitter(Qt.Orientation.Horizontal)
        prov.addWidget(self.providers_view)
        prov.addWidget(self.providers_text)
        prov.setStretchFactor(0, 3)
        prov.setStretchFactor(1, 2)
        self.traffic = TrafficPanel()
        self.traffic.clear_button.hide()  # a bundle is read-only
        self.results = ConformanceResultsView()
        self.results.set_exchange_lookup(self._exchange)
        self.results.evidence_requested.connect(self.show_exchange)
        self.conformance_summary = QLabel("")
        self.conformance_summary.setTextFormat(Qt.TextFormat.PlainText)
        self.conformance_summary.setWordWrap(True)
        self.conformance_raw = JsonEditor(read_only=True)
        self.conformance_stack = QStackedWidget()
        self.conformance_stack.addWidget(self.results)
        self.conformance_stack.addWidget(self.conformance_raw)
        conf = QWidget()
        cl = QVBoxLayout(conf)
        cl.addWidget(self.conformance_summary)
        cl.addWidget(self.conformance_stack, 1)

        self.tabs = QTabWidget()
        self.tabs.addTab(self.summary, "Summary")
        self.tabs.addTab(self.device_view, "Device")
        self.tabs.addTab(prov, "Providers")
        self.tabs.addTab(self.traffic, "Exchanges")
        self.tabs.addTab(conf, "Conformance")

        head = QHBoxLayout()
        col = QVBoxLayout()
        col.addWidget(self.title)
        col.addWidget(self.meta)
        col.addWidget(self.secrets)
        head.addLayout(col, 1)
        head.addWidget(self.replay_button, 0, Qt.AlignmentFlag.AlignTop)
        lay = QVBoxLayout(self)
        lay.addLayout(head)
        lay.addWidget(self.tabs, 1)

    # ------------------------------------------------------------------ loading
    def open_path(self, path: Path | str) -> asyncio.Task[Any]:
        """Open a bundle file in a worker thread; `loaded` or `failed` follows."""
        async def go() -> None:
            try:
                report = await run_in_thread(open_bundle, path)
            except BundleError as exc:
                self._show_failure(str(exc))
                return
            try:
                self.set_report(report)
            except Exception as exc:  # a bundle is someone else's file: say, never go blank
                self._show_failure(f"{path}: its content cannot be shown "
                                   f"({type(exc).__name__}: {bound(str(exc), 200)})")

        self._task = self.tasks.spawn(go(), "bundle-open")
        return self._task

    def _show_failure(self, message: str) -> None:
        self.error = message
        set_plain(self.title, "Cannot open the bundle")
        set_plain(self.meta, f"{message}. Check that the file is a CETP Inspector bug report "
                             "(.cetpbundle) and was copied whole.", 800)
        self.failed.emit(message)

    def set_report(self, report: BugReport) -> None:
        """Show an opened bundle."""
        self.report = report
        self.error = None
        m = report.manifest
        s = report.session
        name = s.name or m.name or s.header.session_id
        set_plain(self.title, f"Bug report: {name}", 200)
        self.setWindowTitle(bound(f"Bug report — {name}", 120))
        set_plain(self.meta, (
            f"{Path(report.path).name} · created {when(m.created_ms)} by {m.app} · session "
            f"{s.header.session_id} recorded {when(s.header.created_ms)} on "
            f"{device_text(report.device)} · {len(s.exchanges)} exchanges · read-only, "
            "no phone needed" + "".join(f"\n⚠ {w}" for w in report.warnings)), 1200)
        if m.redacted:
            set_plain(self.secrets, "Secrets redacted: " + ", ".join(m.redacted_keys), 400)
            self.secrets.setProperty("role", "ok")
        else:
            self.secrets.setText("This bundle was exported WITHOUT redaction: it may hold "
                                 "live session or resume tokens. Do not pass it on.")
            self.secrets.setProperty("role", "error")
        self.secrets.style().unpolish(self.secrets)
        self.secrets.style().polish(self.secrets)

        self.summary.setPlainText(bound(report.summary, 200_000, single_line=False))
        self.device_model.set_pairs(device_pairs(report.device))
        self.device_view.resizeColumnToContents(0)
        self.providers_model.set_value(providers_value(report))
        self.providers_view.expandToDepth(1)
        self.providers_view.resizeColumnToContents(0)
        self.providers_text.show_value(providers_value(report))
        self.traffic.model.clear()
        self.traffic.model.add_many(report.exchanges)
        self.traffic.model.flush()
        self._show_conformance(report.conformance)
        self.replay_button.setEnabled(bool(report.exchanges))
        self.loaded.emit(report)

    def _show_conformance(self, value: Any) -> None:
        self.conformance = parse_conformance(value)
        if self.conformance is not None:
            self.results.set_results(self.conformance.results)
            self.conformance_summary.setText(summary_text(self.conformance))
            self.conformance_stack.setCurrentWidget(self.results)
        elif value is None:
            self.results.set_results([])
            self.conformance_summary.setText("No conformance report in this bundle.")
            self.conformance_raw.clear()
            self.conformance_stack.setCurrentWidget(self.conformance_raw)
        else:
            self.results.set_results([])
            self.conformance_summary.setText("The bundle's conformance member is not a report "
                                             "this inspector understands; shown as data:")
            self.conformance_raw.show_value(value)
            self.conformance_stack.setCurrentWidget(self.conformance_raw)

    # ------------------------------------------------------------------ navigation
    def _exchange(self, exchange_id: str) -> Any:
        if self.report is None:
            return None
        return next((e for e in self.report.exchanges if e.id == exchange_id), None)

    def show_exchange(self, exchange_id: str) -> bool:
        """Switch to the Exchanges tab with this exchange selected."""
        self.tabs.setCurrentWidget(self.traffic)
        return self.traffic.select_exchange(exchange_id)

    def _provider_node(self, cur: QModelIndex, _prev: QModelIndex) -> None:
        if self.report is None or not cur.isValid():
            return
        value = resolve_pointer(providers_value(self.report),
                                self.providers_model.json_pointer(cur))
        self.providers_text.show_text(bound(pretty_json(value, PARAGRAPH_LIMIT * 50),
                                            PARAGRAPH_LIMIT * 60, single_line=False))

    def _replay_clicked(self) -> None:
        if self.report is not None:
            self.replay_requested.emit(self.report)


__all__ = ["BundleViewer", "KeyValueModel", "device_pairs", "parse_conformance",
           "providers_value"]
