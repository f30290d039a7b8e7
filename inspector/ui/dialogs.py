"""Dialogs: the About box and the virtual device's confirmation screen."""

from __future__ import annotations

import json
import platform
from importlib import metadata
from typing import Any

import PySide6
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from inspector.relay.api import HelloInfo
from inspector.relay.hello import permission_problems
from inspector.ui import theme
from inspector.ui.text import bound


def app_version() -> str:
    try:
        return metadata.version("cetp-inspector")
    except metadata.PackageNotFoundError:
        return "0.1.0 (source checkout)"


def _plain(text: str) -> QLabel:
    lbl = QLabel(text)
    lbl.setTextFormat(Qt.TextFormat.PlainText)
    lbl.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    lbl.setWordWrap(True)
    return lbl


class AboutDialog(QDialog):
    def __init__(self, hello: HelloInfo | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("About CETP Inspector")
        lay = QVBoxLayout(self)
        icon = QLabel()
        icon.setPixmap(theme.icon("app").pixmap(64, 64))
        lay.addWidget(icon, 0, Qt.AlignmentFlag.AlignHCenter)
        title = _plain("CETP Inspector")
        title.setProperty("role", "empty-title")
        lay.addWidget(title, 0, Qt.AlignmentFlag.AlignHCenter)
        lay.addWidget(
            _plain(
                "Inspect, call and verify on-device tool providers: CETP v1/v2 "
                "and AndyClaw extensions."
            )
        )
        form = QFormLayout()
        form.addRow("App version", _plain(app_version()))
        if hello is not None:
            form.addRow(
                "Relay",
                _plain(
                    f"{bound(hello.relay_version_name, 60)} (versionCode "
                    f"{hello.relay_version_code})"
                ),
            )
            form.addRow("Relay protocol", _plain(str(hello.protocol_version)))
            dev = hello.device or {}
            form.addRow(
                "Device",
                _plain(
                    bound(
                        " ".join(
                            str(dev.get(k, "")) for k in ("manufacturer", "model", "release")
                        ).strip()
                        or "—",
                        120,
                    )
                ),
            )
            for problem in permission_problems(hello):  # e.g. ACCESS_TOOLS not granted
                form.addRow("Relay permission", _plain(bound(problem, 400)))
        else:
            form.addRow("Relay", _plain("not connected"))
        form.addRow("Qt / PySide6", _plain(PySide6.__version__))
        form.addRow("Python", _plain(platform.python_version()))
        lay.addLayout(form)
        self.version_text = "\n".join(
            f"{form.itemAt(i, QFormLayout.ItemRole.LabelRole).widget().text()}: "
            f"{form.itemAt(i, QFormLayout.ItemRole.FieldRole).widget().text()}"
            for i in range(form.rowCount())
        )
        box = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        box.rejected.connect(self.reject)
        box.accepted.connect(self.accept)
        lay.addWidget(box)


class ConfirmationDialog(QDialog):
    """The virtual device's confirmation screen (what a provider's Activity would show)."""

    answered = Signal(str, bool)  # confirmation_id, approve

    def __init__(self, event: dict[str, Any], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.data = event
        self.confirmation_id = str(event.get("confirmation_id", ""))
        self.setWindowTitle("Confirmation requested on the device")
        self.setMinimumWidth(460)
        self.setModal(False)
        lay = QVBoxLayout(self)
        head = _plain(bound(event.get("title") or "Confirm this action", 200))
        head.setProperty("role", "heading")
        lay.addWidget(head)
        note = _plain(
            f"Shown by {bound(event.get('package', '?'), 120)} on the virtual device. "
            "On a phone this is the provider's own screen."
        )
        note.setProperty("role", "muted")
        lay.addWidget(note)
        form = QFormLayout()
        self.target = _plain(bound(event.get("target", "—"), 300))
        self.target.setObjectName("confirmTarget")
        self.action = _plain(bound(event.get("action", "—"), 300))
        self.action.setObjectName("confirmAction")
        form.addRow("Target", self.target)
        form.addRow("Action", self.action)
        cons = event.get("consequences")
        if cons:
            c = _plain(bound(cons, 1000, single_line=False))
            c.setProperty("role", "warn")
            form.addRow("Consequences", c)
        lay.addLayout(form)
        self.parameters = QPlainTextEdit()
        self.parameters.setObjectName("confirmParameters")
        self.parameters.setReadOnly(True)
        self.parameters.setPlainText(
            bound(
                json.dumps(event.get("parameters", {}), indent=2, ensure_ascii=False, default=str),
                20_000,
                single_line=False,
            )
        )
        self.parameters.setMaximumHeight(160)
        lay.addWidget(_plain("Parameters"))
        lay.addWidget(self.parameters)
        box = QDialogButtonBox()
        self.deny = QPushButton("Deny")
        self.deny.setObjectName("denyButton")
        self.approve = QPushButton("Approve")
        self.approve.setObjectName("approveButton")
        self.approve.setProperty("danger", True)
        box.addButton(self.deny, QDialogButtonBox.ButtonRole.RejectRole)
        box.addButton(self.approve, QDialogButtonBox.ButtonRole.AcceptRole)
        lay.addWidget(box)
        self.approve.clicked.connect(lambda: self._answer(True))
        self.deny.clicked.connect(lambda: self._answer(False))
        self._done = False

    def _answer(self, approve: bool) -> None:
        if not self._done:
            self._done = True
            self.answered.emit(self.confirmation_id, approve)
        self.accept() if approve else self.reject()

    def reject(self) -> None:
        """Escape (and Deny) end here without a closeEvent: backing out is a denial, sent
        to the device at once rather than leaving the call waiting for its timeout."""
        if not self._done:
            self._done = True
            self.answered.emit(self.confirmation_id, False)
        super().reject()

    def closeEvent(self, event) -> None:
        if not self._done:  # closing the screen is backing out
            self._done = True
            self.answered.emit(self.confirmation_id, False)
        super().closeEvent(event)
