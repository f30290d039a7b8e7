"""Provider overview: manifest declarations, negotiation, provider info, scopes, findings.

The negotiation box lets the user edit the consumer versions and capabilities, and shows
the result: selected version, provider id and name, the session token masked (with a
reveal button), an expiry countdown, capabilities and the limits beside their spec minimums.
"""

from __future__ import annotations

import datetime as dt

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QScrollArea,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector.consumer.negotiation import Session
from inspector.protocol.cetp import CAP_ASYNC, CAP_CANCEL, CAP_LARGE, LIMIT_MINIMUMS
from inspector.protocol.discovery import CetpDeclaration
from inspector.protocol.exchange import Finding
from inspector.ui import theme
from inspector.ui.flow_layout import FlowLayout
from inspector.ui.navigator import declaration_warnings
from inspector.ui.text import bound, mask_secret

CAPABILITIES = (CAP_ASYNC, CAP_CANCEL, CAP_LARGE)


def _value(text: str = "—") -> QLabel:
    lbl = QLabel(text)
    lbl.setTextFormat(Qt.TextFormat.PlainText)
    lbl.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    lbl.setWordWrap(True)
    return lbl


def parse_versions_text(text: str) -> tuple[int, ...]:
    """ "2, 1" -> (2, 1); raises ValueError with a readable message."""
    out: list[int] = []
    for part in text.replace(" ", "").split(","):
        if not part:
            continue
        if not part.isdigit():
            raise ValueError(f"{part!r} is not a version number; write e.g. 2,1")
        out.append(int(part))
    if not out:
        raise ValueError("offer at least one version, e.g. 2,1")
    return tuple(sorted(set(out), reverse=True))


class OverviewPanel(QScrollArea):
    negotiateRequested = Signal(tuple, tuple)  # versions, capabilities

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        body = QWidget()
        self.setWidget(body)
        grid = QGridLayout(body)

        # manifest
        self.manifest = QGroupBox("Manifest declaration")
        mf = QFormLayout(self.manifest)
        self.m_package = _value()
        self.m_service = _value()
        self.m_authority = _value()
        self.m_versions = _value()
        self.m_permission = _value()
        self.m_exported = _value()
        self.m_checks = _value()
        self.m_checks.setObjectName("manifestChecks")
        for name, w in (
            ("package", self.m_package),
            ("service", self.m_service),
            ("authority", self.m_authority),
            ("versions", self.m_versions),
            ("permission", self.m_permission),
            ("exported", self.m_exported),
            ("checks", self.m_checks),
        ):
            mf.addRow(name, w)
        grid.addWidget(self.manifest, 0, 0)

        # negotiation
        self.nego = QGroupBox("Negotiation")
        nl = QVBoxLayout(self.nego)
        req_box = QWidget()
        req = FlowLayout(req_box, spacing=8)  # wraps in a narrow window: Negotiate stays seen
        req.addWidget(QLabel("consumer_versions"))
        self.versions = QLineEdit("2,1")
        self.versions.setObjectName("consumerVersions")
        self.versions.setMaximumWidth(80)
        req.addWidget(self.versions)
        self.caps: dict[str, QCheckBox] = {}
        for cap in CAPABILITIES:
            cb = QCheckBox(cap)
            cb.setChecked(True)
            cb.setObjectName(f"cap:{cap}")
            self.caps[cap] = cb
            req.addWidget(cb)
        self.negotiate = QPushButton(theme.icon("negotiate", "#ffffff"), "Negotiate")
        self.negotiate.setObjectName("negotiateButton")
        self.negotiate.setProperty("primary", True)
        req.addWidget(self.negotiate)
        nl.addWidget(req_box)
        self.n_error = _value("")
        self.n_error.setProperty("role", "error")
        self.n_error.setObjectName("negotiationError")
        nl.addWidget(self.n_error)
        nf = QFormLayout()
        self.n_selected = _value()
        self.n_selected.setObjectName("selectedVersion")
        self.n_provider = _value()
        tok = QHBoxLayout()
        self.n_token = _value()
        self.n_token.setObjectName("sessionToken")
        tok.addWidget(self.n_token, 1)
        self.reveal = QPushButton(theme.icon("eye"), "Reveal")
        self.reveal.setCheckable(True)
        self.reveal.setObjectName("revealToken")
        tok.addWidget(self.reveal)
        self.n_expiry = _value()
        self.n_expiry.setObjectName("tokenExpiry")
        self.n_caps = _value()
        self.n_caps.setObjectName("negotiatedCapabilities")
        nf.addRow("selected_version", self.n_selected)
        nf.addRow("provider", self.n_provider)
        nf.addRow("session_token", tok)
        nf.addRow("expires", self.n_expiry)
        nf.addRow("capabilities", self.n_caps)
        nl.addLayout(nf)
        self.limits = QTableWidget(0, 3)
        self.limits.setObjectName("limitsTable")
        self.limits.setHorizontalHeaderLabels(["Limit", "Negotiated", "Spec minimum"])
        self.limits.verticalHeader().setVisible(False)
        self.limits.horizontalHeader().setStretchLastSection(True)
        self.limits.setMaximumHeight(150)
        nl.addWidget(self.limits)
        grid.addWidget(self.nego, 0, 1)

        # provider info
        self.info = QGroupBox("Provider info")
        il = QVBoxLayout(self.info)
        self.i_desc = _value()
        self.i_desc.setObjectName("providerDescription")
        il.addWidget(self.i_desc)
        self.scopes = QTableWidget(0, 4)
        self.scopes.setObjectName("scopesTable")
        self.scopes.setHorizontalHeaderLabels(["Scope", "Access", "Sensitivity", "Description"])
        self.scopes.verticalHeader().setVisible(False)
        self.scopes.horizontalHeader().setStretchLastSection(True)
        il.addWidget(self.scopes)
        grid.addWidget(self.info, 1, 0)

        # findings
        self.find_box = QGroupBox("Spec findings")
        fl = QVBoxLayout(self.find_box)
        self.findings = QListWidget()
        self.findings.setObjectName("findingsList")
        fl.addWidget(self.findings)
        grid.addWidget(self.find_box, 1, 1)
        grid.setColumnStretch(0, 1)
        grid.setColumnStretch(1, 1)
        self._grid = grid
        self._columns = 2

        self._token = ""
        self._expires: dt.datetime | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(1000)
        self._timer.timeout.connect(self._tick)
        self.reveal.toggled.connect(self._show_token)
        self.negotiate.clicked.connect(self._negotiate_clicked)
        self.show_session(None)

    ONE_COLUMN_BELOW = 860  # px of viewport: narrower, the boxes stack (negotiation first)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        columns = 1 if self.viewport().width() < self.ONE_COLUMN_BELOW else 2
        if columns != self._columns:
            self._columns = columns
            self._place_boxes()

    def _place_boxes(self) -> None:
        g = self._grid
        for box in (self.nego, self.manifest, self.info, self.find_box):
            g.removeWidget(box)
        if self._columns == 1:
            for row, box in enumerate((self.nego, self.manifest, self.find_box, self.info)):
                g.addWidget(box, row, 0)
            g.setColumnStretch(1, 0)
        else:
            g.addWidget(self.manifest, 0, 0)
            g.addWidget(self.nego, 0, 1)
            g.addWidget(self.info, 1, 0)
            g.addWidget(self.find_box, 1, 1)
            g.setColumnStretch(1, 1)

    # -- manifest -------------------------------------------------------------------------
    def show_declaration(self, d: CetpDeclaration) -> None:
        self.m_package.setText(
            bound(f"{d.package}  (uid {d.uid}, versionCode {d.version_code})", 200)
        )
        self.m_service.setText(bound(d.service, 200) + ("" if d.enabled else "  (disabled)"))
        self.m_authority.setText(bound(d.authority or "— missing —", 200))
        raw = f"versions={d.versions_raw!r} version={d.version_raw!r}"
        self.m_versions.setText(
            bound(f"{'+'.join(f'v{v}' for v in d.versions)} · {d.stack} ({raw})", 300)
        )
        self.m_permission.setText(bound(d.permission or "none", 200))
        self.m_exported.setText("yes" if d.exported else "NO — consumers cannot bind it")
        warns = declaration_warnings(d)
        same = {
            True: "✓ service and provider in the same package",
            False: "✗ authority belongs to another package",
            None: "? owner unknown",
        }
        self.m_checks.setText(
            "\n".join([same[d.same_package]] + [f"⚠ {bound(w, 200)}" for w in warns])
        )
        self.m_checks.setProperty("role", "warn" if warns else "ok")
        self.m_checks.style().polish(self.m_checks)
        self.nego.setEnabled(d.supports_v2)
        if not d.supports_v2:
            self.n_error.setText("v1-only provider: no negotiation (v1 has no session).")

    # -- negotiation ----------------------------------------------------------------------
    def _negotiate_clicked(self) -> None:
        try:
            versions = parse_versions_text(self.versions.text())
        except ValueError as exc:
            self.n_error.setText(str(exc))
            return
        self.n_error.setText("")
        caps = tuple(c for c, cb in self.caps.items() if cb.isChecked())
        self.negotiateRequested.emit(versions, caps)

    def show_error(self, text: str) -> None:
        self.n_error.setText(bound(text, 800, single_line=False))

    def show_session(self, s: Session | None) -> None:
        self.limits.setRowCount(0)
        if s is None:
            for w in (self.n_selected, self.n_provider, self.n_expiry, self.n_caps):
                w.setText("—")
            self._token = ""
            self._expires = None
            self._show_token(False)
            self._timer.stop()
            return
        r = s.result
        self.n_selected.setText(str(r.selected_version))
        self.n_provider.setText(bound(f"{r.provider_id} · {r.provider_name or '(no name)'}", 200))
        self._token = r.session_token
        self._show_token(self.reveal.isChecked())
        self.n_caps.setText(", ".join(bound(c, 40) for c in r.capabilities) or "none")
        self._expires = None
        if r.expires_at:
            try:
                self._expires = dt.datetime.fromisoformat(r.expires_at.replace("Z", "+00:00"))
            except ValueError:
                self.n_expiry.setText(f"unparseable: {bound(r.expires_at, 60)}")
        if self._expires is not None:
            self._tick()
            self._timer.start()
        elif not r.expires_at:
            self.n_expiry.setText("no expiry given")
        lim = r.limits.model_dump()
        self.limits.setRowCount(len(LIMIT_MINIMUMS))
        for row, (name, minimum) in enumerate(LIMIT_MINIMUMS.items()):
            value = lim.get(name)
            ok = isinstance(value, int) and value >= minimum
            cells = [
                name,
                f"{value:,}" if isinstance(value, int) else "—",
                f"≥ {minimum:,}" + ("" if ok else "  ✗ below minimum"),
            ]
            for col, text in enumerate(cells):
                it = QTableWidgetItem(text)
                it.setFlags(it.flags() & ~Qt.ItemFlag.ItemIsEditable)
                if col == 2:
                    it.setForeground(theme.color("ok" if ok else "error"))
                self.limits.setItem(row, col, it)
        self.limits.resizeColumnsToContents()

    def _show_token(self, reveal: bool) -> None:
        self.n_token.setText(bound(self._token, 300) if reveal else mask_secret(self._token))
        self.reveal.setText("Hide" if reveal else "Reveal")

    def _tick(self) -> None:
        if self._expires is None:
            return
        now = dt.datetime.now(dt.UTC)
        exp = self._expires if self._expires.tzinfo else self._expires.replace(tzinfo=dt.UTC)
        left = (exp - now).total_seconds()
        stamp = exp.strftime("%Y-%m-%d %H:%M:%S UTC")
        if left <= 0:
            self.n_expiry.setText(f"{stamp} — expired; the next call renegotiates")
        else:
            h, rem = divmod(int(left), 3600)
            m, s = divmod(rem, 60)
            self.n_expiry.setText(f"{stamp} — in {h}h {m:02d}m {s:02d}s")

    # -- info -----------------------------------------------------------------------------
    def show_info(self, info: object | None) -> None:
        self.scopes.setRowCount(0)
        if info is None:
            self.i_desc.setText("—")
            return
        desc = getattr(info, "description", "")
        name = getattr(info, "provider_name", "") or getattr(info, "provider_id", "")
        dialect = getattr(info, "schema_dialect", None)
        text = f"{name}\n{desc}" + (f"\nschema dialect: {dialect}" if dialect else "")
        self.i_desc.setText(bound(text, 2000, single_line=False))
        scopes = list(getattr(info, "scopes", []) or [])
        self.scopes.setRowCount(len(scopes))
        for row, sc in enumerate(scopes):
            access = getattr(sc, "access", None)
            sens = getattr(sc, "sensitivity", None)
            cells = [
                sc.name,
                getattr(access, "value", "—"),
                getattr(sens, "value", "—"),
                getattr(sc, "title", "") or getattr(sc, "description", ""),
            ]
            for col, t in enumerate(cells):
                it = QTableWidgetItem(bound(t, 200))
                it.setFlags(it.flags() & ~Qt.ItemFlag.ItemIsEditable)
                if col == 2 and t in ("financial", "health", "personal"):
                    it.setForeground(theme.color("warn"))
                self.scopes.setItem(row, col, it)
        self.scopes.resizeColumnsToContents()

    def show_findings(self, findings: list[Finding]) -> None:
        self.findings.clear()
        for f in findings:
            mark = "✓" if f.ok else "✗"
            self.findings.addItem(
                f"{mark} {f.level} {f.section} {bound(f.rule_id, 60)}: {bound(f.message, 300)}"
            )
        if not findings:
            self.findings.addItem("No findings yet.")
