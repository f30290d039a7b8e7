"""What came back from a call: envelope, timing, output-schema verdict, structured errors
with a retry_after countdown, the confirmation flow and the large-result checklist.

It renders the engine's `Execution` record; the buttons only emit signals (launch the
resolution, save the file, retry) which the window routes to the session.
"""

from __future__ import annotations

import json
import time

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector.consumer.execution import ExecState, Execution
from inspector.consumer.large_results import FileVerdict
from inspector.ui import theme
from inspector.ui.json_view import JsonResultView
from inspector.ui.text import bound, human_bytes, mask_secret, pretty_json, tooltip

_STATE_TEXT = {
    ExecState.NEW: ("Not sent yet", "muted"),
    ExecState.RUNNING: ("Running…", "muted"),
    ExecState.SUCCEEDED: ("Success", "ok"),
    ExecState.FAILED: ("Provider error", "error"),
    ExecState.NEEDS_RESOLUTION: ("Needs user action on the device", "warn"),
    ExecState.RESOLUTION_DECLINED: ("Denied on the device", "error"),
    ExecState.USER_CANCELLED: ("Denied: USER_CANCELLED", "error"),
    ExecState.ACCEPTED: ("Accepted: running as an async operation", "warn"),
    ExecState.CANCELLED: ("Cancelled (confirmed by the provider)", "warn"),
    ExecState.OUTCOME_UNKNOWN: ("Outcome unknown — retry with the same request_id", "warn"),
    ExecState.MALFORMED: ("Malformed reply (protocol violation)", "error"),
    ExecState.REFUSED: ("Not sent (refused by the inspector)", "error"),
    ExecState.TRANSPORT_FAILED: ("Not sent — the device or relay failed; retry", "error"),
}


def _label(text: str = "", role: str = "") -> QLabel:
    lbl = QLabel(text)
    lbl.setTextFormat(Qt.TextFormat.PlainText)
    lbl.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    lbl.setWordWrap(True)
    if role:
        lbl.setProperty("role", role)
    return lbl


def _restyle(w: QWidget, role: str) -> None:
    w.setProperty("role", role)
    w.style().unpolish(w)
    w.style().polish(w)


def plain_value(value: object) -> str:
    """A value as a person reads it: JSON for objects and lists, true/false, — for none
    (never a Python repr such as `{'size': 1}` or `True`)."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list | tuple):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def _short(value: object) -> str:
    """A checklist cell: long digests shortened (the tooltip has them whole)."""
    text = bound(plain_value(value), 200)
    if isinstance(value, str) and len(value) == 64:  # a sha256
        return f"{value[:12]}…{value[-6:]}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return text if len(text) <= 40 else text[:39] + "…"


class ResultPanel(QWidget):
    """One execution's outcome."""

    launchResolution = Signal(str)  # request_id
    saveFile = Signal(str)  # request_id
    retryRequested = Signal(str)  # request_id

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.execution: Execution | None = None
        self._retry_deadline: float | None = None
        lay = QVBoxLayout(self)
        lay.setContentsMargins(9, 6, 9, 4)  # aligned with the composer above
        self.call = _label("", "muted")  # the call this result belongs to (never another's)
        self.call.setObjectName("resultCall")
        lay.addWidget(self.call)
        head = QHBoxLayout()
        self.state = _label("No call yet — build one above and press Send.", "heading")
        self.state.setObjectName("resultState")
        head.addWidget(self.state, 1)
        self.timing = _label("", "muted")
        self.timing.setWordWrap(False)
        head.addWidget(self.timing)
        lay.addLayout(head)
        self.message = _label("", "muted")
        lay.addWidget(self.message)

        # envelope
        self.envelope = QGroupBox("Envelope")
        ef = QFormLayout(self.envelope)
        self.env_request_id = _label()
        self.env_kind = _label()
        self.env_attempts = _label()
        self.env_schema = _label()
        self.env_schema.setObjectName("outputSchemaVerdict")
        ef.addRow("request_id", self.env_request_id)
        ef.addRow("result", self.env_kind)
        ef.addRow("attempts", self.env_attempts)
        ef.addRow("output schema", self.env_schema)

        # structured error
        self.error_box = QGroupBox("Structured error")
        erf = QFormLayout(self.error_box)
        self.err_code = _label("", "error")
        self.err_code.setObjectName("errorCode")
        self.err_message = _label()
        self.err_retryable = _label()
        self.err_retry_after = _label()
        self.err_retry_after.setObjectName("retryAfter")
        self.err_details = _label("", "muted")
        erf.addRow("error_code", self.err_code)
        erf.addRow("error_message", self.err_message)
        erf.addRow("retryable", self.err_retryable)
        erf.addRow("retry_after", self.err_retry_after)
        erf.addRow("error_details", self.err_details)
        self.retry = QPushButton(theme.icon("refresh"), "Retry with the same request_id")
        self.retry.setObjectName("retryButton")
        erf.addRow("", self.retry)
        self.retry.clicked.connect(self._retry_clicked)

        # confirmation
        self.confirm_box = QGroupBox("Confirmation")
        cf = QFormLayout(self.confirm_box)
        self.conf_target = _label()
        self.conf_token = _label()
        self.conf_token.setObjectName("resumeToken")
        self.conf_state = _label()
        self.conf_state.setObjectName("confirmationState")
        self.launch = QPushButton(theme.icon("launch", "#ffffff"), "Launch on device")
        self.launch.setObjectName("launchResolution")
        self.launch.setProperty("primary", True)
        cf.addRow("resolution", self.conf_target)
        cf.addRow("resume_token", self.conf_token)
        cf.addRow("state", self.conf_state)
        cf.addRow("", self.launch)
        self.launch.clicked.connect(self._launch_clicked)

        # large result
        self.file_box = QGroupBox("Large result")
        fl = QVBoxLayout(self.file_box)
        self.file_progress = QProgressBar()
        self.file_progress.setObjectName("transferProgress")
        fl.addWidget(self.file_progress)
        self.checklist = QTableWidget(0, 4)
        self.checklist.setObjectName("fileChecklist")
        self.checklist.setHorizontalHeaderLabels(["Check", "Verdict", "Computed", "Declared"])
        self.checklist.horizontalHeader().setStretchLastSection(True)
        self.checklist.verticalHeader().setVisible(False)
        self.checklist.setMinimumHeight(150)
        fl.addWidget(self.checklist)
        self.file_verdict = _label()
        self.file_verdict.setObjectName("fileVerdict")
        fl.addWidget(self.file_verdict)
        self.save = QPushButton(theme.icon("save"), "Save to file…")
        self.save.setObjectName("saveFile")
        fl.addWidget(self.save, 0, Qt.AlignmentFlag.AlignLeft)
        self.save.clicked.connect(self._save_clicked)

        split = QSplitter(Qt.Orientation.Horizontal)
        cards_body = QWidget()
        cards = QVBoxLayout(cards_body)
        cards.setContentsMargins(0, 0, 4, 0)
        for box in (self.confirm_box, self.error_box, self.file_box, self.envelope):
            cards.addWidget(box)
        cards.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(cards_body)
        split.addWidget(scroll)
        self.value_view = JsonResultView(placeholder="The returned value appears here.")
        split.addWidget(self.value_view)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)
        lay.addWidget(split, 1)

        self._tick = QTimer(self)
        self._tick.setInterval(250)
        self._tick.timeout.connect(self._countdown)
        self.show_execution(None)

    # -- rendering ------------------------------------------------------------------------
    def show_execution(
        self,
        ex: Execution | None,
        *,
        started_ms: float | None = None,
        finished_ms: float | None = None,
    ) -> None:
        self.execution = ex
        for box in (self.envelope, self.error_box, self.confirm_box, self.file_box):
            box.setVisible(False)
        if ex is None:
            self.call.setText("")
            self.state.setText("No call yet — build one above and press Send.")
            _restyle(self.state, "heading")
            self.message.setText("")
            self.timing.setText("")
            self.value_view.clear()
            return
        self.call.setText(f"Result of {bound(ex.tool_name, 64)} · request_id {ex.request_id}")
        text, role = _STATE_TEXT.get(ex.state, (ex.state.value, "muted"))
        if ex.file_verdict is not None and not ex.file_verdict.ok:
            text, role = "Provider said success — the file FAILED verification", "error"
        self.state.setText(text)
        _restyle(
            self.state,
            {"ok": "heading-ok", "error": "heading-error", "warn": "heading-warn"}.get(
                role, "heading"
            ),
        )
        self.message.setText(bound(ex.message, 600, single_line=False))
        if started_ms is not None and finished_ms is not None:
            n = len(ex.exchange_ids)
            self.timing.setText(
                f"{finished_ms - started_ms:,.0f} ms over {n} exchange" + ("s" if n != 1 else "")
            )
        else:
            self.timing.setText("")
        self.envelope.setVisible(True)
        self.env_request_id.setText(ex.request_id)
        kind = "—"
        if ex.file is not None:
            kind = f"file · {bound(ex.file.media_type, 60)} · {human_bytes(ex.file.size_bytes)}"
        elif ex.has_value:
            kind = "inline"
        elif ex.operation_id:
            kind = f"operation {bound(ex.operation_id, 60)}"
        self.env_kind.setText(kind)
        self.env_attempts.setText(
            ", ".join(
                f"#{a.number}{' (resume)' if a.resumed else ''}: {bound(a.outcome, 40)}"
                for a in ex.attempts
            )
            or "—"
        )
        fails = [f for f in ex.output_findings if not f.ok]
        if not ex.output_findings:
            self.env_schema.setText("not checked (no output_schema or no value)")
            _restyle(self.env_schema, "muted")
        elif fails:
            self.env_schema.setText("✗ " + "; ".join(bound(f.message, 200) for f in fails[:3]))
            _restyle(self.env_schema, "error")
        else:
            self.env_schema.setText("✓ output matches output_schema")
            _restyle(self.env_schema, "ok")
        self._show_error(ex)
        self._show_confirmation(ex)
        self._show_file(ex)
        if ex.has_value:
            self.value_view.show_value(ex.value)
        elif ex.file_verdict is not None and ex.file_verdict.parsed:
            self.value_view.show_value(ex.file_verdict.value)
        elif ex.file_verdict is not None and ex.file_verdict.preview:
            text = unverified_text(ex.file_verdict)
            if text != self.value_view.text.toPlainText():  # not again on every step
                self.value_view.clear()  # unverified bytes are text only, never a value
                self.value_view.show_tree_note(self.value_view.TEXT_ONLY)
                self.value_view.setCurrentIndex(0)
                self.value_view.text.show_plain(text)
        else:
            self.value_view.clear()

    def show_pending(self, tool_name: str, request_id: str) -> None:
        """A call just sent: name it before any answer arrives."""
        self.call.setText(f"Result of {bound(tool_name, 64)} · request_id {request_id}")
        self.state.setText(f"Sending {bound(tool_name, 64)}…")

    def _show_error(self, ex: Execution) -> None:
        e = ex.error
        self._retry_deadline = None
        if e is None or ex.state == ExecState.SUCCEEDED:  # a resolved earlier attempt
            self._tick.stop()
            return
        self.error_box.setVisible(True)
        self.err_code.setText(bound(e.error_code, 64))
        self.err_message.setText(bound(e.error_message, 1000, single_line=False))
        self.err_retryable.setText("—" if e.retryable is None else str(e.retryable).lower())
        self.err_details.setText(
            bound(pretty_json(e.error_details), 600, single_line=False)
            if e.error_details is not None
            else "—"
        )
        self.retry.setVisible(bool(e.retryable))
        if e.retry_after_ms:
            self._retry_deadline = time.monotonic() + e.retry_after_ms / 1000
            self._tick.start()
            self._countdown()
        else:
            self.err_retry_after.setText("—")
            self.retry.setEnabled(True)
            self._tick.stop()

    def _countdown(self) -> None:
        if self._retry_deadline is None:
            self._tick.stop()
            return
        left = self._retry_deadline - time.monotonic()
        if left <= 0:
            self.err_retry_after.setText("elapsed — you may retry now")
            self.retry.setEnabled(True)
            self._tick.stop()
        else:
            self.err_retry_after.setText(f"retry in {left:0.1f} s (the spec says honour it)")
            self.retry.setEnabled(False)

    def _show_confirmation(self, ex: Execution) -> None:
        if ex.resolution is None and ex.resume_token is None and ex.resolution_result is None:
            return
        self.confirm_box.setVisible(True)
        r = ex.resolution
        target = "—"
        if r is not None:
            imm = r.immutable
            mut = (
                "immutable"
                if imm
                else "MUTABLE (spec requires immutable)"
                if imm is False
                else "mutability unknown"
            )
            target = f"PendingIntent from {bound(r.creator_package or '?', 80)}\n{mut}"
            self.conf_target.setToolTip(tooltip(f"handle {bound(r.id, 80)}"))
        self.conf_target.setText(target or "PendingIntent")
        self.conf_token.setText(mask_secret(ex.resume_token))
        states = {
            None: "waiting for you to launch it",
            "approved": "approved — resumed with the same request_id",
            "declined": "denied on the device",
        }
        st = states.get(ex.resolution_result, bound(ex.resolution_result, 40))
        if ex.state == ExecState.USER_CANCELLED:
            st = "denied — the provider answered USER_CANCELLED"
        self.conf_state.setText(st)
        self.launch.setEnabled(ex.state == ExecState.NEEDS_RESOLUTION)
        self.launch.setVisible(ex.state == ExecState.NEEDS_RESOLUTION)

    def _show_file(self, ex: Execution) -> None:
        v = ex.file_verdict
        if ex.file is None and v is None:
            return
        self.file_box.setVisible(True)
        declared = ex.file.size_bytes if ex.file else 0
        if v is None:
            self.file_progress.setRange(0, 0)
            self.checklist.setRowCount(0)
            self.file_verdict.setText("transferring…")
            self.save.setEnabled(False)
            return
        self.set_transfer_progress(v.bytes_read, declared or v.bytes_read)
        self.checklist.setRowCount(len(v.checks))
        for row, c in enumerate(v.checks):
            mark = {"pass": "✓ pass", "fail": "✗ FAIL", "skipped": "– skipped"}.get(
                c.status.value, c.status.value
            )
            cells = [c.name, mark, _short(c.computed), _short(c.declared)]
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
                item.setToolTip(tooltip(
                    f"{c.message}\ncomputed: {plain_value(c.computed)}\n"
                    f"declared: {plain_value(c.declared)}", 600))
                if col == 1:
                    item.setForeground(
                        theme.color(
                            "error"
                            if c.status.value == "fail"
                            else "ok"
                            if c.status.value == "pass"
                            else "muted"
                        )
                    )
                self.checklist.setItem(row, col, item)
        self.checklist.resizeColumnsToContents()
        for col in (2, 3):
            self.checklist.setColumnWidth(col, min(self.checklist.columnWidth(col), 190))
        if v.ok:
            self.file_verdict.setText(
                f"✓ verified: {human_bytes(v.bytes_read)}, sha256 {bound(v.sha256, 64)}"
            )
            _restyle(self.file_verdict, "ok")
        else:
            names = ", ".join(c.name for c in v.failed())
            self.file_verdict.setText(f"✗ corrupted or non-conformant: {names} failed")
            _restyle(self.file_verdict, "error")
        self.save.setEnabled(bool(v.content_path))

    def set_transfer_progress(self, done: int, total: int) -> None:
        self.file_progress.setRange(0, max(total, 1))
        self.file_progress.setValue(min(done, max(total, 1)))
        self.file_progress.setFormat(f"{human_bytes(done)} / {human_bytes(total)}")

    # -- buttons ----------------------------------------------------------------------------
    def _launch_clicked(self) -> None:
        if self.execution is not None:
            self.launch.setEnabled(False)
            self.conf_state.setText("launched — waiting for the device…")
            self.launchResolution.emit(self.execution.request_id)

    def _save_clicked(self) -> None:
        if self.execution is not None:
            self.saveFile.emit(self.execution.request_id)

    def _retry_clicked(self) -> None:
        if self.execution is not None:
            self.retryRequested.emit(self.execution.request_id)


def unverified_text(v: FileVerdict) -> str:
    """A file result's bytes as shown: verified → the text preview; unverified (size or
    SHA-256 failed) → labelled hex dump plus text, never a parsed value (issue 12)."""
    text = bound(v.preview, 64_000, single_line=False)
    if v.verified:
        return text
    return ("UNVERIFIED BYTES — the size/SHA-256 check failed, so the content is not "
            "interpreted. First bytes:\n\n" + v.preview_hex + "\n\nAs text (lossy):\n"
            + bound(v.preview, 16_000, single_line=False))
