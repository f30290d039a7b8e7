"""The sessions panel: journaled sessions listed, opened, renamed, deleted, bundled.

Everything goes through `inspector.session.journal` / `bundle_file`; file work runs in a
worker thread (`inspector.ui.workers`) under `inspector.tasks.spawn`, so a 500 MB journal
never freezes the window. Session names and device facts come from journals (which may
come from anyone): shown as plain, bounded text.

Embedding (the main window wires it):

    panel = SessionsPanel(directory=None, parent=dialog_or_tab)  # None = the default folder
    panel.active_sessions = lambda: {w.session_id for w in controller.journals.values()}
    panel.session_opened.connect(window.show_session)     # JournalContents, read-only view
    panel.bundle_exported.connect(lambda path: window.statusBar().showMessage(path))
    panel.refresh()
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field
from PySide6.QtCore import (
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from inspector.session.bundle_extras import export_note, export_report
from inspector.session.bundle_file import BUNDLE_SUFFIX, BundleError, create_bundle
from inspector.session.journal import (
    DEFAULT_SECRET_KEYS,
    JournalContents,
    JournalError,
    SessionSummary,
    delete_session,
    list_sessions,
    open_session,
    rename_session,
)
from inspector.ui import theme
from inspector.ui.conformance_panel import WidgetTasks
from inspector.ui.row_table_model import RowTableModel
from inspector.ui.text import bound, human_bytes, tooltip
from inspector.ui.workers import run_in_thread

_Index = QModelIndex | QPersistentModelIndex
SUMMARY_ROLE = Qt.ItemDataRole.UserRole + 1
NAME_LIMIT = 200


def when(ms: float) -> str:
    """Local date and time of a journal timestamp (milliseconds since the epoch)."""
    try:
        return dt.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M")
    except (OverflowError, OSError, ValueError):
        return "?"


def device_text(device: dict[str, Any]) -> str:
    """"Pixel 8 (serial)" from a journal's device facts; the serial alone otherwise."""
    model = " ".join(str(device.get(k, "")) for k in ("manufacturer", "model")).strip()
    serial = str(device.get("serial", "") or "")
    if model and serial:
        return f"{model} ({serial})"
    return model or serial or "—"


class SessionsModel(RowTableModel[SessionSummary]):
    """Session summaries: Name, Created, Device, Exchanges, Size (plain strings)."""

    COLUMNS = ("Name", "Created", "Device", "Exchanges", "Size")

    def set_sessions(self, sessions: Iterable[SessionSummary]) -> None:
        self.set_rows(sessions)

    def row_data(self, s: SessionSummary, index: _Index, role: int) -> Any:
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if s.damaged:  # listed so one bad journal hides nothing (issue 12)
                return (f"⚠ damaged: {bound(s.session_id, 60)}", when(s.created_ms), "—", "—",
                        human_bytes(s.size_bytes))[col]
            return (
                bound(s.name or "(unnamed)", NAME_LIMIT),
                when(s.created_ms),
                bound(device_text(s.device), 120),
                str(s.exchange_count),
                human_bytes(s.size_bytes),
            )[col]
        if role == Qt.ItemDataRole.ToolTipRole:
            if s.damaged:
                return tooltip(f"This journal cannot be read: {s.damaged}\n{s.path}", 1000)
            return tooltip(f"{s.name or '(unnamed)'}\nid {s.session_id}\n{s.path}\n"
                           f"modified {when(s.modified_ms)} · format v{s.version}", 1000)
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (3, 4):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == SUMMARY_ROLE:
            return s
        return None

    def summary(self, row: int) -> SessionSummary | None:
        return self._rows[row] if 0 <= row < len(self._rows) else None

    def row_of(self, session_id: str) -> int | None:
        return next((i for i, s in enumerate(self._rows) if s.session_id == session_id), None)


class BundleChoice(BaseModel):
    """What the export dialog asked for."""

    path: str
    redact: bool = True
    note: str = ""
    secret_keys: list[str] = Field(default_factory=list)
    include_logs: bool = True  # the provider's log lines and crashes (issue 16)
    screenshots: bool = False  # confirmation screenshots taken while recording (issue 16)
    files: list[str] = Field(default_factory=list)  # file-result bytes to include (issue 16)


REDACT_OFF_WARNING = (
    "Secrets will be INCLUDED: live session tokens and resume tokens (and anything else you "
    "marked) go into the file as they are. Anyone who gets the bundle can read them. "
    "Only turn redaction off for a bundle that stays with you."
)


class ExportBundleDialog(QDialog):
    """Where to save the bug-report bundle, a note, and redaction (on by default)."""

    def __init__(self, suggested: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export bug-report bundle")
        self.path = QLineEdit(suggested)
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        self.note = QPlainTextEdit()
        self.note.setPlaceholderText("What went wrong, in a sentence or two (goes into the "
                                     "bundle's summary)")
        self.note.setMaximumHeight(80)
        self.redact = QCheckBox("Redact secrets (session tokens, resume tokens)")
        self.redact.setChecked(True)
        self.extra_keys = QLineEdit()
        self.extra_keys.setPlaceholderText("more keys to redact, comma-separated (e.g. "
                                           "account_id, email)")
        self.warning = QLabel(REDACT_OFF_WARNING)
        self.warning.setTextFormat(Qt.TextFormat.PlainText)
        self.warning.setWordWrap(True)
        self.warning.setProperty("role", "error")
        self.warning.setVisible(False)
        self.redact.toggled.connect(self._redact_toggled)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save
                                        | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        row = QHBoxLayout()
        row.addWidget(self.path, 1)
        row.addWidget(browse)
        form = QFormLayout()
        form.addRow("File", row)
        form.addRow("Note", self.note)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addWidget(self.redact)
        lay.addWidget(self.extra_keys)
        lay.addWidget(self.warning)
        # issue 16: the provider's log (redacted like the rest) and confirmation screenshots
        self.include_logs = QCheckBox("Include the provider's log lines and crashes")
        self.include_logs.setChecked(True)
        self.screenshots = QCheckBox("Include screenshots of confirmation screens "
                                     "(not redacted)")
        lay.addWidget(self.include_logs)
        lay.addWidget(self.screenshots)
        from inspector.session.bundle_extras import DEFAULT_FILE_CAP_BYTES

        self.files: list[str] = []
        self.add_files = QPushButton("Add file-result bytes…")
        self.add_files.setToolTip("Files whose SHA-256 matches a recorded file result (e.g. "
                                  "what Save wrote) go into the bundle, so replay can serve "
                                  "them; they are not redacted")
        self.files_label = QLabel(f"No file-result bytes (cap {DEFAULT_FILE_CAP_BYTES:,} "
                                  "bytes each)")
        self.files_label.setTextFormat(Qt.TextFormat.PlainText)
        self.add_files.clicked.connect(self._pick_files)
        files_row = QHBoxLayout()
        files_row.addWidget(self.add_files)
        files_row.addWidget(self.files_label, 1)
        lay.addLayout(files_row)
        lay.addWidget(self.buttons)
        self.resize(560, 320)

    def _pick_files(self) -> None:
        from inspector.session.bundle_extras import DEFAULT_FILE_CAP_BYTES

        paths, _ = QFileDialog.getOpenFileNames(self, "File-result bytes to include")
        self.files = sorted(set(self.files) | set(paths))
        self.files_label.setText(f"{len(self.files)} file(s) to match against the recorded "
                                 f"file results (cap {DEFAULT_FILE_CAP_BYTES:,} bytes each)")

    def _redact_toggled(self, on: bool) -> None:
        self.warning.setVisible(not on)
        self.extra_keys.setEnabled(on)

    def _browse(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save bundle", self.path.text(),
                                              f"Bug-report bundle (*{BUNDLE_SUFFIX})")
        if path:
            self.path.setText(path)

    def choice(self) -> BundleChoice:
        keys = [k.strip() for k in self.extra_keys.text().split(",") if k.strip()]
        return BundleChoice(path=self.path.text().strip(), redact=self.redact.isChecked(),
                            note=self.note.toPlainText(), secret_keys=keys,
                            include_logs=self.include_logs.isChecked(),
                            screenshots=self.screenshots.isChecked(), files=list(self.files))


def export_bundle(summary: SessionSummary, choice: BundleChoice,
                  directory: Path | str | None = None, conformance: Any = None) -> Path:
    """Read the journal and write its bundle (blocking: run it in a worker thread)."""
    contents = open_session(summary.session_id, directory)
    shots = None
    if choice.screenshots and contents.path:
        from inspector.session.screenshots import saved_screenshots

        shots = saved_screenshots(contents.path)
    return create_bundle(choice.path, contents, note=choice.note, redact=choice.redact,
                         secret_keys=choice.secret_keys, conformance=conformance,
                         include_logs=choice.include_logs, screenshots=shots,
                         files=choice.files)


class SessionsPanel(QWidget):
    """List, open, rename, delete and bundle journaled sessions.

    Signals: `session_opened(object)` — the `JournalContents` of the opened session;
    `bundle_exported(str)` — the written bundle's path; `sessions_changed()`.
    `active_sessions() -> set[str]`: ids being journaled now, which delete refuses.
    Test hooks replace the dialogs: `ask_name(current) -> str | None`,
    `confirm_delete(summary) -> bool`, `ask_export(summary) -> BundleChoice | None`.
    """

    session_opened = Signal(object)
    bundle_exported = Signal(str)
    sessions_changed = Signal()

    def __init__(self, directory: Path | str | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.directory = directory
        self.error: str | None = None
        self.ask_name: Callable[[str], str | None] = self._ask_name_dialog
        self.confirm_delete: Callable[[SessionSummary], bool] = self._confirm_delete_dialog
        self.ask_export: Callable[[SessionSummary], BundleChoice | None] = self._export_dialog
        #: ids of sessions being recorded right now (they cannot be deleted)
        self.active_sessions: Callable[[], set[str]] = set
        self._busy: asyncio.Task[Any] | None = None
        self.tasks = WidgetTasks(self)

        self.model = SessionsModel(self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.setAlternatingRowColors(True)
        self.table.horizontalHeader().setStretchLastSection(False)
        self.table.setWordWrap(False)
        self.refresh_button = QPushButton(theme.icon("refresh"), "Refresh")
        self.open_button = QPushButton(theme.icon("eye"), "Open")
        self.rename_button = QPushButton("Rename…")
        self.delete_button = QPushButton(theme.icon("clear"), "Delete…")
        self.export_button = QPushButton(theme.icon("save"), "Export bug report…")
        self.status = QLabel("")
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setWordWrap(True)
        bar = QHBoxLayout()
        for b in (self.refresh_button, self.open_button, self.rename_button,
                  self.delete_button, self.export_button):
            bar.addWidget(b)
        bar.addStretch(1)
        lay = QVBoxLayout(self)
        lay.addLayout(bar)
        lay.addWidget(self.table, 1)
        lay.addWidget(self.status)

        self.refresh_button.clicked.connect(self.refresh)
        self.open_button.clicked.connect(self.open_selected)
        self.rename_button.clicked.connect(self.rename_selected)
        self.delete_button.clicked.connect(self.delete_selected)
        self.export_button.clicked.connect(self.export_selected)
        self.table.doubleClicked.connect(lambda _i: self.open_selected())
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._update_buttons())
        self._update_buttons()

    # ------------------------------------------------------------------ selection
    def selected(self) -> SessionSummary | None:
        rows = self.table.selectionModel().selectedRows()
        return self.model.summary(rows[0].row()) if rows else None

    def select(self, session_id: str) -> bool:
        row = self.model.row_of(session_id)
        if row is None:
            return False
        self.table.selectRow(row)
        return True

    def _update_buttons(self) -> None:
        has = self.selected() is not None
        idle = self._busy is None or self._busy.done()
        for b in (self.open_button, self.rename_button, self.delete_button,
                  self.export_button):
            b.setEnabled(has and idle)

    def _set_status(self, text: str, *, error: bool = False) -> None:
        self.error = text if error else None
        self.status.setText(text)
        self.status.setProperty("role", "error" if error else "")
        self.status.style().unpolish(self.status)
        self.status.style().polish(self.status)

    # ------------------------------------------------------------------ background work
    def _work(self, coro: Any, name: str) -> asyncio.Task[Any]:
        self._busy = self.tasks.spawn(coro, name)
        self._busy.add_done_callback(lambda _t: self._update_buttons())
        self._update_buttons()
        return self._busy

    def refresh(self) -> asyncio.Task[Any]:
        """Re-read the sessions folder (keeps the selection when the session still exists)."""
        keep = self.selected()

        async def go() -> None:
            try:
                sessions = await run_in_thread(list_sessions, self.directory)
            except OSError as exc:
                self._set_status(f"Cannot read the sessions folder: {exc}", error=True)
                return
            self.model.set_sessions(sessions)
            self.table.resizeColumnsToContents()
            self.table.setColumnWidth(0, min(max(self.table.columnWidth(0), 160), 360))
            self.table.horizontalHeader().setSectionResizeMode(  # no blank strip on the right
                0, QHeaderView.ResizeMode.Stretch
            )
            if keep is not None:
                self.select(keep.session_id)
            n = len(sessions)
            self._set_status(
                "No recorded sessions yet: every device session of the window is journaled "
                "here." if n == 0 else f"{n} session" + ("" if n == 1 else "s")
            )
            self._update_buttons()

        return self._work(go(), "sessions-refresh")

    def open_selected(self) -> asyncio.Task[Any] | None:
        s = self.selected()
        if s is None:
            return None

        async def go() -> None:
            try:
                contents: JournalContents = await run_in_thread(open_session, s.session_id,
                                                                self.directory)
            except (JournalError, OSError) as exc:
                self._set_status(f"Cannot open the session: {exc}", error=True)
                return
            note = ""
            if contents.damaged_lines:
                note = f" ({contents.damaged_lines} damaged line(s) skipped)"
            self._set_status(bound(f"Opened {contents.name or s.session_id}{note}", 300))
            self.session_opened.emit(contents)

        return self._work(go(), "sessions-open")

    def rename_selected(self) -> asyncio.Task[Any] | None:
        s = self.selected()
        if s is None:
            return None
        name = self.ask_name(s.name)
        if name is None or name.strip() == s.name:
            return None
        name = name.strip()[:NAME_LIMIT]

        async def go() -> None:
            try:
                await run_in_thread(rename_session, s.session_id, name, self.directory)
            except (JournalError, OSError) as exc:
                self._set_status(f"Cannot rename the session: {exc}", error=True)
                return
            self.sessions_changed.emit()
            await self.refresh()

        return self._work(go(), "sessions-rename")

    def delete_selected(self) -> asyncio.Task[Any] | None:
        s = self.selected()
        if s is None:
            return None
        if s.session_id in self.active_sessions():
            self._set_status("This session is being recorded right now; disconnect its "
                             "device (or quit) before deleting it.", error=True)
            return None
        if not self.confirm_delete(s):
            return None

        async def go() -> None:
            try:
                await run_in_thread(delete_session, s.session_id, self.directory)
            except (JournalError, OSError) as exc:
                self._set_status(f"Cannot delete the session: {exc}", error=True)
                return
            self.sessions_changed.emit()
            await self.refresh()
            self._set_status(bound(f"Deleted {s.name or s.session_id}", 300))

        return self._work(go(), "sessions-delete")

    def export_selected(self) -> asyncio.Task[Any] | None:
        s = self.selected()
        if s is None:
            return None
        choice = self.ask_export(s)
        if choice is None or not choice.path:
            return None

        async def go() -> None:
            try:
                path = await run_in_thread(export_bundle, s, choice, self.directory)
                extras = await run_in_thread(export_report, path)  # issue 16
            except (BundleError, JournalError, OSError) as exc:
                self._set_status(f"Cannot export the bundle: {exc}", error=True)
                return
            what = "secrets redacted" if choice.redact else "SECRETS INCLUDED"
            what += "; " + export_note(extras)
            self._set_status(bound(f"Saved {path} ({what})", 400))
            self.bundle_exported.emit(str(path))

        return self._work(go(), "sessions-export")

    # ------------------------------------------------------------------ default dialogs
    def _ask_name_dialog(self, current: str) -> str | None:
        name, ok = QInputDialog.getText(self, "Rename session", "Name:",
                                        QLineEdit.EchoMode.Normal, bound(current, NAME_LIMIT))
        return name if ok else None

    def _confirm_delete_dialog(self, s: SessionSummary) -> bool:
        box = QMessageBox(self)
        box.setIcon(QMessageBox.Icon.Warning)
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.setWindowTitle("Delete session?")
        box.setText(bound(f"Delete the session “{s.name or s.session_id}” "
                          f"({s.exchange_count} exchanges)?", 400)
                    + "\n\nIts journal file is removed; this cannot be undone.")
        box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
        box.setDefaultButton(QMessageBox.StandardButton.No)
        return box.exec() == QMessageBox.StandardButton.Yes

    def _export_dialog(self, s: SessionSummary) -> BundleChoice | None:
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in (s.name or s.session_id))
        suggested = str(Path.home() / f"{safe[:60] or 'session'}{BUNDLE_SUFFIX}")
        dlg = ExportBundleDialog(suggested, self)
        if dlg.exec() != QDialog.DialogCode.Accepted:
            return None
        return dlg.choice()


__all__ = [
    "DEFAULT_SECRET_KEYS",
    "REDACT_OFF_WARNING",
    "BundleChoice",
    "ExportBundleDialog",
    "SessionsModel",
    "SessionsPanel",
    "export_bundle",
]
