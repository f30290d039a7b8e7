"""An AndyClaw extension: declaration, bridges, functions, and calls through a chosen bridge.

The composer is the same one CETP tools use (form from the function's inputSchema, raw
JSON, validation); a bridge selector picks service / provider / broadcast / activity.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFormLayout,
    QGroupBox,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from inspector.consumer.andyclaw_host import ExtensionHost
from inspector.protocol import andyclaw as ac
from inspector.ui import theme
from inspector.ui.composer import CallComposer, ToolTarget
from inspector.ui.controller import ExtensionCall
from inspector.ui.json_view import JsonResultView
from inspector.ui.text import bound, shrinkable, tooltip


def _label(text: str = "—", role: str = "") -> QLabel:
    lbl = QLabel(text)
    lbl.setTextFormat(Qt.TextFormat.PlainText)
    lbl.setWordWrap(True)
    lbl.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if role:
        lbl.setProperty("role", role)
    return shrinkable(lbl)  # a provider's 5,000-character word must not widen the window


class ExtensionView(QWidget):
    callRequested = Signal(str, str, str, bool)  # function, params JSON, bridge, approved

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.host: ExtensionHost | None = None
        lay = QVBoxLayout(self)
        split = QSplitter(Qt.Orientation.Horizontal)
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        left.setMinimumWidth(130)  # the declaration and functions stay readable (issue 14)
        self.info = QGroupBox("Extension")
        f = QFormLayout(self.info)
        # a narrow pane (1024 px with the Device screen open): values go under their names
        f.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        self.i_name = _label()
        self.i_name.setObjectName("extensionName")
        self.i_id = _label()
        self.i_bridges = _label()
        self.i_bridges.setObjectName("extensionBridges")
        self.i_problems = _label("", "warn")
        f.addRow("name", self.i_name)
        f.addRow("id", self.i_id)
        f.addRow("bridges", self.i_bridges)
        f.addRow("", self.i_problems)
        ll.addWidget(self.info)
        self.functions = QListWidget()
        self.functions.setObjectName("extensionFunctions")
        ll.addWidget(QLabel("Functions"))
        ll.addWidget(self.functions, 1)
        split.addWidget(left)
        right = QSplitter(Qt.Orientation.Vertical)
        self.composer = CallComposer()
        self.composer.EMPTY_TITLE = "Pick a function on the left to build a call."
        self.composer.title.setText(self.composer.EMPTY_TITLE)
        self.composer.setObjectName("extensionComposer")
        right.addWidget(self.composer)
        res = QWidget()
        rl = QVBoxLayout(res)
        rl.setContentsMargins(0, 0, 0, 0)
        self.outcome = _label("No call yet.", "heading")
        self.outcome.setObjectName("extensionOutcome")
        rl.addWidget(self.outcome)
        self.detail = _label("", "muted")
        rl.addWidget(self.detail)
        self.result = JsonResultView(placeholder="The function's result appears here.")
        rl.addWidget(self.result, 1)
        res_scroll = QScrollArea()  # a short window scrolls the outcome, not the window
        res_scroll.setWidgetResizable(True)
        res_scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        res_scroll.setWidget(res)
        right.addWidget(res_scroll)
        split.addWidget(right)
        split.setStretchFactor(1, 3)
        lay.addWidget(split)
        self.functions.currentItemChanged.connect(self._pick)
        self.composer.sendRequested.connect(self._send)

    def show_host(self, host: ExtensionHost) -> None:
        if host is not self.host:  # another extension: nothing of the previous one stays
            self.composer.set_target(None)
            self._role(self.outcome, "heading")
            self.outcome.setText("No call yet.")
            self.detail.setText("")
            self.result.clear()
        self.host = host
        d = host.decl
        self.i_name.setText(bound(d.name, 120))
        self.i_id.setText(bound(f"{d.id} · {d.package}", 200))
        chosen = d.bridge.value if d.bridge else "none"
        self.i_bridges.setText(
            ", ".join(b.bridge.value for b in d.bridges) + f"  (host picks: {chosen})"
        )
        self.i_problems.setText(
            "\n".join(
                f"⚠ {bound(p, 200)}"
                for p in d.problems + [f.message for f in host.findings if not f.ok]
            )
        )
        self.functions.clear()
        for fn in host.functions:
            it = QListWidgetItem(theme.icon("tool"), bound(fn.name, 64))
            it.setData(Qt.ItemDataRole.UserRole, fn.name)
            it.setToolTip(tooltip(fn.description, 300))
            self.functions.addItem(it)
        if not host.functions:
            self.functions.addItem("No functions: the manifest could not be read.")

    def _pick(self, item: QListWidgetItem | None, _prev: QListWidgetItem | None = None) -> None:
        if item is None or self.host is None:
            return
        fn = self.host.function(item.data(Qt.ItemDataRole.UserRole) or "")
        if fn is None:
            return
        bridges = [b.bridge.value for b in self.host.decl.bridges]
        chosen = self.host.decl.bridge
        if chosen is not None and chosen.value in bridges:
            bridges.remove(chosen.value)
            bridges.insert(0, chosen.value)
        self.composer.set_target(
            ToolTarget(
                name=fn.name,
                description=fn.description
                + ("  [requiresApproval]" if fn.requiresApproval else ""),
                input_schema=fn.inputSchema,
                bridges=bridges,
                requires_approval=fn.requiresApproval,
            )
        )

    def select_function(self, name: str) -> bool:
        for i in range(self.functions.count()):
            it = self.functions.item(i)
            if it.data(Qt.ItemDataRole.UserRole) == name:
                self.functions.setCurrentItem(it)
                return True
        return False

    def set_bridge(self, bridge: str) -> None:
        i = self.composer.bridge.findText(bridge)
        if i >= 0:
            self.composer.bridge.setCurrentIndex(i)

    def _send(self, req) -> None:
        fn = self.host.function(req.tool_name) if self.host else None
        approved = False
        if fn is not None and fn.requiresApproval:
            approved = self.composer.confirm(
                "Approve this extension call?",
                f"{bound(fn.name, 64)} is marked requiresApproval: the AndyClaw host asks the "
                "user before every call. Run it?",
            )
            if not approved:
                self.outcome.setText(
                    f"Not sent: you did not approve {bound(req.tool_name, 64)} "
                    "(requiresApproval). Send again to be asked again."
                )
                self._role(self.outcome, "warn")
                self.detail.setText("")
                return
        self._role(self.outcome, "heading")
        self.outcome.setText(f"Calling {bound(req.tool_name, 64)} via {req.bridge}…")
        self.detail.setText("")
        self.result.clear()
        self.composer.set_in_flight(req)
        self.callRequested.emit(req.tool_name, req.args_text, req.bridge or "", approved)

    def call_stopped(self) -> None:
        self.composer.set_in_flight(None)
        self._role(self.outcome, "warn")
        self.outcome.setText(
            "Stopped waiting — the bridge call may still run on the device."
        )

    def show_call(self, call: ExtensionCall) -> None:
        self.composer.set_in_flight(None)
        self.detail.setToolTip(f"{call.function} via {call.bridge}")
        r = call.reply
        if r is None:
            self.outcome.setText(f"✗ {bound(call.error, 400)}")
            self._role(self.outcome, "error")
            self.detail.setText("")
            self.result.clear()
            return
        verdict = "✓ result" if r.ok else f"✗ {r.outcome}"
        self.outcome.setText(f"{verdict} of {bound(call.function, 64)} via {r.bridge.value}")
        self._role(self.outcome, "ok" if r.ok else "error")
        bits = []
        if r.error:
            bits.append(f"error: {bound(r.error, 300)}")
        if r.in_band_error:
            bits.append(f"error inside a successful reply: {bound(r.in_band_error, 300)}")
        if r.exception_class:
            bits.append(
                f"exception {bound(r.exception_class, 100)}: {bound(r.exception_message, 300)}"
            )
        if r.launched is not None:
            started = "started" if r.launched else "NOT started"
            bits.append(f"activity {started}: {bound(r.component or '—', 120)}")
        for p in r.problems:
            bits.append(f"⚠ {bound(p, 200)}")
        self.detail.setText("\n".join(bits))
        if r.result_is_json:
            self.result.show_value(r.decoded)
        else:
            self.result.clear()  # not JSON: text only
            self.result.show_tree_note(self.result.TEXT_ONLY)
            self.result.text.show_text(bound(r.result or "", 200_000, single_line=False))

    @staticmethod
    def _role(w: QWidget, role: str) -> None:
        w.setProperty("role", role)
        w.style().unpolish(w)
        w.style().polish(w)


BRIDGES = [b.value for b in ac.Bridge]
