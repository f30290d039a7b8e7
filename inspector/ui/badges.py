"""Small pill labels: protocol versions, tool annotations, warnings."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

from inspector.protocol.cetp import Annotations, Confirmation, Effect, Execution, Risk
from inspector.ui.flow_layout import FlowLayout
from inspector.ui.text import bound, tooltip

Badge = tuple[str, str, str]  # text, role (badge / badge-warn / badge-danger / badge-ok), tooltip


#: 60 characters without a space are ~500 px: a narrow detail pane would widen the window
BADGE_MAX_WIDTH = 260


def annotation_badges(a: Annotations | None) -> list[Badge]:
    """The §3.4 annotations as badges, risky ones coloured."""
    if a is None:
        return [("no annotations", "badge-warn", "v1 tool: no annotations; treat as unknown risk")]
    out: list[Badge] = []
    eff_role = (
        "badge-ok"
        if a.effect == Effect.READ
        else ("badge-danger" if a.effect in (Effect.DELETE, Effect.TRANSACTION) else "badge-warn")
    )
    out.append((f"effect: {a.effect.value}", eff_role, "Primary effect on persistent state"))
    risk_role = {Risk.LOW: "badge-ok", Risk.MODERATE: "badge-warn", Risk.HIGH: "badge-danger"}
    out.append((f"risk: {a.risk.value}", risk_role[a.risk], "Impact of accidental invocation"))
    if a.destructive:
        out.append(("destructive", "badge-danger", "Irreversible data or asset loss is possible"))
    out.append(
        (
            "idempotent" if a.idempotent else "not idempotent",
            "badge",
            "Whether repeating an equivalent call has the same effect",
        )
    )
    if a.open_world:
        out.append(("open world", "badge-warn", "Reads or affects systems outside the provider"))
    conf_role = "badge-warn" if a.confirmation == Confirmation.ALWAYS else "badge"
    out.append((f"confirm: {a.confirmation.value}", conf_role, "Provider-side confirmation policy"))
    out.append(
        (
            "sync or async" if a.execution == Execution.SYNC_OR_ASYNC else "sync",
            "badge",
            "May return a background operation"
            if a.execution == Execution.SYNC_OR_ASYNC
            else "Always answers synchronously",
        )
    )
    if a.defaulted:
        out.append(
            (
                "defaults: " + ", ".join(sorted(a.defaulted)),
                "badge",
                "These annotations were absent; their spec defaults are shown",
            )
        )
    return out


def version_badge(versions: tuple[int, ...] | list[int]) -> Badge:
    vs = sorted(set(versions))
    if not vs:
        return ("no version", "badge-warn", "The manifest declares no protocol version")
    text = "+".join(f"v{v}" for v in vs)
    return (text, "badge-ok" if 2 in vs else "badge", "Protocol versions in the manifest")


def is_dangerous(a: Annotations | None) -> bool:
    """Calls that get a warning dialog before sending."""
    if a is None:
        return False
    return a.destructive or a.risk == Risk.HIGH or a.effect in (Effect.DELETE, Effect.TRANSACTION)


class BadgeRow(QWidget):
    """A row of badges (plain text, bounded)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._lay = FlowLayout(self, spacing=4)  # wraps instead of widening the pane
        policy = self.sizePolicy()
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)

    def set_badges(self, badges: list[Badge]) -> None:
        while self._lay.count():
            item = self._lay.takeAt(0)
            if item is not None and item.widget() is not None:
                item.widget().deleteLater()
        for text, role, tip in badges:
            lbl = QLabel(bound(text, 60))
            lbl.setTextFormat(Qt.TextFormat.PlainText)
            lbl.setProperty("role", role)
            lbl.setToolTip(tooltip(tip, 300))
            lbl.setMaximumWidth(BADGE_MAX_WIDTH)  # clipped, not a wider window (issue 14)
            self._lay.addWidget(lbl)
        self._lay.invalidate()

    def texts(self) -> list[str]:
        out = []
        for i in range(self._lay.count()):
            w = self._lay.itemAt(i).widget()
            if isinstance(w, QLabel):
                out.append(w.text())
        return out
