"""The call composer: schema form ⇄ raw JSON, live validation, request id and deadline.

The form and the raw editor stay in sync both ways; validation runs on every change
(documents over 64 KB in a worker thread) and lists each error with its JSON pointer. The
composer owns no protocol logic: it emits a `CallRequest` and the window hands it to the
session.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from inspector.protocol.cetp import Annotations, new_request_id
from inspector.tasks import spawn
from inspector.ui import theme
from inspector.ui.badges import BadgeRow, annotation_badges, is_dangerous
from inspector.ui.flow_layout import FlowLayout
from inspector.ui.json_view import JsonEditor
from inspector.ui.schema_form import SchemaForm
from inspector.ui.text import PARAGRAPH_LIMIT, bound, human_bytes, shrinkable, tooltip
from inspector.ui.validation import Issue, Verdict, validate_text
from inspector.ui.workers import run_in_thread

REQUEST_ID_RULE = (
    "request_id identifies one logical execution and is its idempotency key (CETP §4.1, §6). "
    "After a timeout or a lost connection, retry a side-effecting or asynchronous call with "
    "the SAME id — never a new one to guess the outcome; the provider returns the same "
    "terminal outcome for the idempotency window. Reusing an id with different arguments is "
    "INVALID_REQUEST."
)


def _row(*widgets: QWidget) -> QWidget:
    """Widgets that stay together on one line when the composer's controls wrap."""
    box = QWidget()
    row = QHBoxLayout(box)
    row.setContentsMargins(0, 0, 0, 0)
    for w in widgets:
        row.addWidget(w)
    return box


class CallRequest(BaseModel):
    """What the composer asks the session to send."""

    tool_name: str
    args_text: str
    request_id: str
    deadline_ms: int
    bridge: str | None = None  # AndyClaw bridge, None for CETP


class ToolTarget(BaseModel):
    """The tool the composer is aimed at (CETP v2/v1 tool or extension function)."""

    name: str
    title: str = ""
    description: str = ""
    input_schema: dict[str, Any] = {}
    annotations: Annotations | None = None
    max_request_bytes: int | None = None
    bridges: list[str] = []  # AndyClaw bridges offering this function
    requires_approval: bool = False  # AndyClaw requiresApproval


class CallComposer(QWidget):
    """Builds one call; Ctrl+Enter sends."""

    sendRequested = Signal(object)  # CallRequest
    validated = Signal(object)  # Verdict
    EMPTY_TITLE = "Pick a tool on the Tools tab to build a call."
    cancelRequested = Signal(str)  # request_id of the call in flight

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.target: ToolTarget | None = None
        self.verdict: Verdict | None = None
        self._syncing = False
        self._generation = 0
        self._sent_args: str | None = None
        #: the call sent from here that has not ended yet: Send waits for it (issue 14)
        self.in_flight: CallRequest | None = None
        self.confirm: Callable[[str, str], bool] = self._ask_user

        lay = QVBoxLayout(self)
        head = QHBoxLayout()
        self.title = QLabel(self.EMPTY_TITLE)
        self.title.setProperty("role", "heading")
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        shrinkable(self.title)  # provider names: clipped, never a wider window (issue 14)
        head.addWidget(self.title)
        head.addStretch(1)
        self.bridge = QComboBox()
        self.bridge.setToolTip("AndyClaw bridge used for the call")
        # "provider", "broadcast": never cut to "provide", "broadca"
        self.bridge.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.bridge.setVisible(False)
        head.addWidget(self.bridge)
        lay.addLayout(head)
        self.badges = BadgeRow()
        lay.addWidget(self.badges)
        self.description = QLabel("")
        self.description.setTextFormat(Qt.TextFormat.PlainText)
        self.description.setWordWrap(True)
        self.description.setProperty("role", "muted")
        shrinkable(self.description)
        lay.addWidget(self.description)

        split = QSplitter(Qt.Orientation.Horizontal)
        self.form = SchemaForm()
        self.form.setObjectName("composerForm")
        split.addWidget(self.form)
        self.raw = JsonEditor()
        self.raw.setObjectName("composerRaw")
        self.raw.setPlaceholderText("{ }")
        split.addWidget(self.raw)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        lay.addWidget(split, 3)

        self.issues = QListWidget()
        self.issues.setObjectName("composerIssues")
        self.issues.setMaximumHeight(72)
        lay.addWidget(self.issues, 1)

        # the controls wrap onto a second line in a narrow window instead of widening it
        bar = QWidget()
        bar.setObjectName("composerControls")
        controls = FlowLayout(bar, spacing=8)
        self.size = QLabel("0 B")
        self.size.setProperty("role", "muted")
        self.size.setMinimumWidth(90)  # may clip in a narrow window rather than widen it
        controls.addWidget(self.size)
        id_label = QLabel("request_id")  # hover it (or the id, or its mode) for the spec rule
        id_label.setToolTip(REQUEST_ID_RULE)
        self.request_id = QLineEdit(new_request_id())
        self.request_id.setObjectName("requestId")
        self.request_id.setReadOnly(True)
        uuid_px = self.request_id.fontMetrics().horizontalAdvance("0" * 36) + 20
        self.request_id.setMinimumWidth(uuid_px)  # the whole UUID; the controls wrap instead
        self.request_id.setToolTip(REQUEST_ID_RULE)
        controls.addWidget(_row(id_label, self.request_id))
        self.id_mode = QComboBox()
        self.id_mode.addItems(["new id per call", "reuse (retry)"])
        self.id_mode.setToolTip(REQUEST_ID_RULE)
        self.new_id = QPushButton("New id")
        self.new_id.setToolTip("Start a new logical execution")
        controls.addWidget(_row(self.id_mode, self.new_id))
        self.deadline = QSpinBox()
        self.deadline.setRange(1, 3600)
        self.deadline.setValue(30)
        self.deadline.setSuffix(" s")
        self.deadline.setToolTip(
            "deadline_at_ms = now + this; the provider checks it before starting a side effect"
        )
        controls.addWidget(_row(QLabel("deadline"), self.deadline))
        self.send = QPushButton(theme.icon("send", "#ffffff"), "Send")
        self.send.setToolTip("Send the call (Ctrl+Enter)")
        self.send.setObjectName("sendButton")
        self.send.setProperty("primary", True)
        self.send.setEnabled(False)
        controls.addWidget(self.send)
        lay.addWidget(bar)
        self.retry_note = QLabel("")
        self.retry_note.setProperty("role", "warn")
        self.retry_note.setWordWrap(True)
        shrinkable(self.retry_note)
        lay.addWidget(self.retry_note)
        self._build_in_flight(lay)

        self._raw_timer = QTimer(self)
        self._raw_timer.setSingleShot(True)
        self._raw_timer.setInterval(200)
        self._raw_timer.timeout.connect(self._raw_to_form)
        self._validate_timer = QTimer(self)
        self._validate_timer.setSingleShot(True)
        self._validate_timer.setInterval(150)
        self._validate_timer.timeout.connect(self._start_validation)

        self.form.changed.connect(self._form_to_raw)
        self.raw.textChanged.connect(self._raw_edited)
        self.new_id.clicked.connect(self.fresh_request_id)
        self.id_mode.currentIndexChanged.connect(self._mode_changed)
        self.send.clicked.connect(self.submit)
        self.issues.itemActivated.connect(self._jump_to_issue)
        for seq in ("Ctrl+Return", "Ctrl+Enter"):
            sc = QShortcut(QKeySequence(seq), self)
            sc.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            sc.activated.connect(self.submit)

    # -- the call in flight --------------------------------------------------------------
    def _build_in_flight(self, lay: QVBoxLayout) -> None:
        """A bar naming the call that is still running, with Cancel and an explicit
        "Send again": ten clicks on Send must not make ten executions."""
        self.in_flight_bar = QFrame()
        self.in_flight_bar.setObjectName("inFlight")
        self.in_flight_bar.setProperty("role", "card")
        row = QHBoxLayout(self.in_flight_bar)
        row.setContentsMargins(6, 2, 6, 2)
        self.in_flight_text = QLabel("")
        self.in_flight_text.setTextFormat(Qt.TextFormat.PlainText)
        self.in_flight_text.setProperty("role", "warn")
        shrinkable(self.in_flight_text)  # a long tool name must not widen the window
        row.addWidget(self.in_flight_text, 1)
        self.cancel_call = QPushButton(theme.icon("cancel"), "Cancel")
        self.cancel_call.setObjectName("cancelCall")
        self.cancel_call.setToolTip(
            "Stop waiting for this call (an async operation is cancelled on the provider)"
        )
        row.addWidget(self.cancel_call)
        self.send_again = QPushButton("Send again")
        self.send_again.setObjectName("sendAgain")
        self.send_again.setToolTip("Send another call while this one is still running")
        row.addWidget(self.send_again)
        self.in_flight_bar.setVisible(False)
        lay.addWidget(self.in_flight_bar)
        self.cancel_call.clicked.connect(
            lambda: self.cancelRequested.emit(self.in_flight.request_id)
            if self.in_flight is not None
            else None
        )
        self.send_again.clicked.connect(lambda: self.submit(again=True))

    def set_in_flight(self, req: CallRequest | None) -> None:
        """Show (or clear) the call sent from here that is still running."""
        self.in_flight = req
        self.in_flight_bar.setVisible(req is not None)
        if req is not None:
            self.in_flight_text.setText(
                f"⏳ {bound(req.tool_name, 64)} is running — request_id {req.request_id}"
            )
            self.in_flight_text.setToolTip(tooltip(self.in_flight_text.text()))
        self.send.setEnabled(self._sendable())

    def _sendable(self, *, again: bool = False) -> bool:
        v = self.verdict
        return (
            (self.in_flight is None or again)
            and self.target is not None
            and v is not None
            and v.parsed
            and not any(i.kind == "size" for i in v.issues)
        )

    # -- target -------------------------------------------------------------------------
    def set_target(self, target: ToolTarget | None) -> None:
        self.target = target
        if target is None:  # nothing selected: no form, no arguments of an earlier target
            self.title.setText(self.EMPTY_TITLE)
            self.badges.set_badges([])
            self.description.setText("")
            self.bridge.clear()
            self.bridge.setVisible(False)
            self._generation += 1  # a validation still running belongs to the old target
            self.form.set_schema({})
            self._syncing = True
            try:
                self.raw.show_text("")
            finally:
                self._syncing = False
            self._validate_timer.stop()
            self._raw_timer.stop()
            self.verdict = None
            self.issues.clear()
            self.set_in_flight(None)
            return
        self.title.setText(
            bound(target.title or target.name, 100)
            + (f"  ({bound(target.name, 64)})" if target.title else "")
        )
        self.description.setText(bound(target.description, PARAGRAPH_LIMIT, single_line=False))
        if target.bridges:  # an AndyClaw function: no CETP annotations exist
            self.badges.set_badges(
                [("AndyClaw function", "badge", "Called through an extension bridge")]
                + (
                    [("requires approval", "badge-warn", "The host asks before every call")]
                    if target.requires_approval
                    else []
                )
            )
        else:
            self.badges.set_badges(annotation_badges(target.annotations))
        self.bridge.clear()
        self.bridge.addItems([bound(b, 40) for b in target.bridges])
        self.bridge.setVisible(bool(target.bridges))
        self.set_in_flight(None)  # a new target: the earlier call is no longer this one's
        self.form.set_schema(target.input_schema)
        self.fresh_request_id()
        self._form_to_raw()

    def set_args(self, value: Any) -> None:
        """Fill the raw editor (and through it the form)."""
        self.raw.setPlainText(json.dumps(value, indent=2, ensure_ascii=False))
        self._raw_to_form()

    def args_text(self) -> str:
        return self.raw.toPlainText()

    # -- syncing --------------------------------------------------------------------------
    def _form_to_raw(self) -> None:
        if self._syncing:
            return
        self._syncing = True
        try:
            self.raw.show_text(json.dumps(self.form.value(), indent=2, ensure_ascii=False))
        finally:
            self._syncing = False
        self._validate_timer.start()

    def _raw_edited(self) -> None:
        if self._syncing:
            return
        self._raw_timer.start()
        self._validate_timer.start()

    def _raw_to_form(self) -> None:
        try:
            value = json.loads(self.raw.toPlainText() or "{}")
        except ValueError:
            return  # the issue list says why
        self._syncing = True
        try:
            self.form.set_value(value)
        finally:
            self._syncing = False

    # -- validation -----------------------------------------------------------------------
    def _start_validation(self) -> None:
        spawn(self.validate_now(), "composer-validate")

    async def validate_now(self) -> Verdict:
        """Validate the raw text in a worker thread (provider schemas are hostile: never on
        the UI thread, issue 12); the newest result wins."""
        self._generation += 1
        gen = self._generation
        text = self.raw.toPlainText()
        schema = self.target.input_schema if self.target else {"type": "object"}
        limit = self.target.max_request_bytes if self.target else None
        verdict = await run_in_thread(validate_text, text, schema, limit)
        if gen == self._generation:
            self._show_verdict(verdict)
        return verdict

    def _show_verdict(self, v: Verdict) -> None:
        self.verdict = v
        self.issues.clear()
        for issue in v.issues:
            item = QListWidgetItem(
                theme.icon("error"),
                f"{issue.pointer or '(document)'} — {bound(issue.message, 300)}",
            )
            item.setData(Qt.ItemDataRole.UserRole, issue.pointer)
            self.issues.addItem(item)
        if not v.issues:
            self.issues.addItem(
                QListWidgetItem(theme.icon("ok"), "Arguments match the input schema.")
            )
        limit = self.target.max_request_bytes if self.target else None
        self.size.setText(
            f"{human_bytes(v.size_bytes)}"
            + (f" / {human_bytes(limit)} max_request_bytes" if limit else "")
        )
        self.size.setToolTip(self.size.text())  # the whole text, should the label be clipped
        self.size.setProperty("role", "error" if limit and v.size_bytes > limit else "muted")
        self.size.style().polish(self.size)
        self._mark_fields(v.issues)
        rows = min(len(v.issues), 3)  # up to three rows; more scroll, the form keeps its room
        self.issues.setFixedHeight(30 if not rows else 8 + 26 * rows)
        self.send.setEnabled(self._sendable())
        self._update_retry_note()
        self.validated.emit(v)

    def _mark_fields(self, issues: list[Issue]) -> None:
        """Red border on the form fields an issue points at."""
        bad = {i.pointer.strip("/").replace("/", ".") for i in issues if i.pointer}
        for path, editor in self.form.editors():
            flag = path in bad
            if bool(editor.property("invalid")) != flag:
                editor.setProperty("invalid", flag)
                editor.style().unpolish(editor)
                editor.style().polish(editor)

    def issue_list(self) -> list[Issue]:
        return list(self.verdict.issues) if self.verdict else []

    def _jump_to_issue(self, item: QListWidgetItem) -> None:
        pointer = item.data(Qt.ItemDataRole.UserRole) or ""
        field = self.form.field(".".join(p for p in pointer.split("/") if p))
        if field is not None:
            field.setFocus()

    # -- request id -----------------------------------------------------------------------
    def fresh_request_id(self) -> None:
        self.request_id.setText(new_request_id())
        self.request_id.setCursorPosition(0)
        self._sent_args = None
        self._update_retry_note()

    def _mode_changed(self) -> None:
        self._update_retry_note()

    @property
    def reuse(self) -> bool:
        return self.id_mode.currentIndex() == 1

    def set_reuse(self, on: bool) -> None:
        self.id_mode.setCurrentIndex(1 if on else 0)

    def _update_retry_note(self) -> None:
        if self.reuse and self._sent_args is not None and self._sent_args != self._canonical():
            self.retry_note.setText(
                "The arguments changed since this request_id was sent: a "
                "retry with the same id and different arguments is "
                "INVALID_REQUEST. Use “New id” for a new execution."
            )
        elif self.reuse:
            self.retry_note.setText(
                "Retry mode: the next send reuses this request_id, so the "
                "provider deduplicates it instead of acting twice."
            )
        else:
            self.retry_note.setText("")

    def _canonical(self) -> str:
        try:
            return json.dumps(json.loads(self.raw.toPlainText() or "{}"), sort_keys=True)
        except ValueError:
            return self.raw.toPlainText()

    # -- sending --------------------------------------------------------------------------
    def _ask_user(self, title: str, text: str) -> bool:
        box = QMessageBox(
            QMessageBox.Icon.Warning, title, text, QMessageBox.StandardButton.Cancel, self
        )
        box.setTextFormat(Qt.TextFormat.PlainText)
        go = box.addButton("Send anyway", QMessageBox.ButtonRole.AcceptRole)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        return box.clickedButton() is go

    def submit(self, *, again: bool = False) -> CallRequest | None:
        """Check, warn if dangerous, then emit sendRequested. Returns what was sent.
        While a call is in flight only an explicit `again` (the "Send again" button) sends."""
        if self.in_flight is not None and not again:
            return None
        if self.target is None or not self._sendable(again=again):
            return None
        a = self.target.annotations
        if is_dangerous(a):
            assert a is not None
            why = ", ".join(
                t
                for t, _r, _tip in annotation_badges(a)
                if t.startswith(("effect", "risk", "destructive"))
            )
            if not self.confirm(
                "Send a risky call?",
                f"“{bound(self.target.name, 64)}” is declared {why}.\n\nIt may change or "
                "delete real data. The provider should still ask for confirmation on the "
                "device, but annotations are not a security boundary.\n\nSend it?",
            ):
                return None
        if not self.reuse and self._sent_args is not None:
            self.request_id.setText(new_request_id())
        self.request_id.setCursorPosition(0)
        req = CallRequest(
            tool_name=self.target.name,
            args_text=self.raw.toPlainText() or "{}",
            request_id=self.request_id.text(),
            deadline_ms=self.deadline.value() * 1000,
            bridge=self.bridge.currentText() if self.target.bridges else None,
        )
        self._sent_args = self._canonical()
        self._update_retry_note()
        self.sendRequested.emit(req)
        return req
