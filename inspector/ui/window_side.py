"""Side windows (sessions, bug reports, replays) and the lazily built Conformance tab."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFileDialog,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from inspector.ui import theme
from inspector.ui.text import bound
from inspector.ui.traffic_panel import TrafficPanel
from inspector.ui.window_names import BUG_REPORT_FILTER


class SideWindows:
    """Mixin of MainWindow: panels shown in their own windows, kept alive until closed."""

    def _tab_changed(self, index: int) -> None:
        if self.tabs.widget(index) is self.conformance_holder:
            self.show_conformance()

    def show_conformance(self) -> QWidget | None:
        """Build the conformance tab for the current provider (lazily, on first view)."""
        entry = self.controller.entry(self.current_key or "")
        if entry is None or entry.engine is None or self._conformance_key == entry.key:
            return self.conformance_panel
        try:
            from inspector.ui.conformance_binding import SessionConformanceBackend
            from inspector.ui.conformance_panel import ConformancePanel
        except ImportError as exc:  # the suite is optional for the rest of the window
            self.report("Conformance unavailable", str(exc))
            return None
        lay = self.conformance_holder.layout()
        while lay.count():  # the previous provider's panel (in its scroll area)
            item = lay.takeAt(0)
            if item is not None and item.widget() is not None:
                item.widget().deleteLater()
        backend = SessionConformanceBackend(
            self.controller.session(entry.serial), entry.declaration, entry.engine
        )
        label = entry.declaration.label or entry.declaration.package
        panel = ConformancePanel(backend, label)
        panel.evidence_requested.connect(self.select_exchange)
        journal = self.controller.journals.get(entry.serial)
        if journal is not None:  # exported bug reports then carry the conformance report
            panel.report_ready.connect(
                lambda r, w=journal: w.record("conformance", r.model_dump(mode="json"))
            )
        # a 700-px-high window scrolls the panel instead of growing taller (issue 14)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setWidget(panel)
        lay.addWidget(scroll)
        self.conformance_panel = panel
        self._conformance_key = entry.key
        tools = getattr(getattr(entry.engine, "tools", None), "tools", None)
        if isinstance(tools, list) and hasattr(panel, "set_tools"):
            panel.set_tools(tools)
        if hasattr(panel, "refresh_plan"):
            panel.refresh_plan()
        return panel

    # ------------------------------------------------------------------ side windows
    def _side(self, widget: QWidget, title: str) -> QWidget:
        """Show a panel as its own window, kept referenced until closed."""
        widget.setWindowTitle(title)
        widget.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        widget.resize(1100, 720)
        self.side_windows.append(widget)
        widget.destroyed.connect(
            lambda *_: self.side_windows.remove(widget) if widget in self.side_windows else None
        )
        widget.show()
        return widget

    def show_sessions(self) -> QWidget | None:
        try:
            from inspector.ui.sessions_panel import SessionsPanel
        except ImportError as exc:
            self.report("Sessions unavailable", str(exc))
            return None
        panel = SessionsPanel(directory=self.controller.journal_dir)
        panel.active_sessions = lambda: {  # never delete the journal being written
            w.session_id for w in self.controller.journals.values()
        }
        panel.session_opened.connect(self.show_recorded_session)
        panel.bundle_exported.connect(
            lambda path: self._status.setText(f"Bug report written: {bound(path, 200)}")
        )
        panel.refresh()
        return self._side(panel, "Recorded sessions — CETP Inspector")

    def export_bug_report(self) -> QWidget | None:
        """File ▸ Export bug report…: the sessions list with this window's own session
        selected, and its export dialog (redaction choice, file name)."""
        panel = self.show_sessions()
        if panel is None:
            return None
        journal = self.controller.journals.get(self.current_serial or "virtual")

        async def go() -> None:
            await panel.refresh()
            if journal is not None:
                panel.select(journal.session_id)
            panel.export_selected()

        self.run(go(), "export-bug-report", "Exporting a bug report")
        return panel

    def show_recorded_session(self, contents: Any) -> QWidget:
        """A journal, read-only: its exchanges in a traffic view, and Replay…"""
        box = QWidget()
        lay = QVBoxLayout(box)
        head = QLabel(bound(f"{contents.name} — {len(contents.exchanges)} exchanges", 200))
        head.setTextFormat(Qt.TextFormat.PlainText)
        head.setProperty("role", "heading")
        lay.addWidget(head)
        view = TrafficPanel()
        view.model.add_many(contents.exchanges)
        lay.addWidget(view, 1)
        replay = QPushButton(theme.icon("refresh"), "Replay against the current device…")
        replay.clicked.connect(lambda: self.replay(contents))
        lay.addWidget(replay, 0, Qt.AlignmentFlag.AlignRight)
        box.traffic = view  # type: ignore[attr-defined]
        return self._side(box, f"Session {bound(contents.name, 80)} — CETP Inspector")

    def open_bug_report(self, path: str | None = None) -> QWidget | None:
        try:
            from inspector.ui.bundle_viewer import BundleViewer
        except ImportError as exc:
            self.report("Bug reports unavailable", str(exc))
            return None
        if not path:
            path, _ = QFileDialog.getOpenFileName(
                self, "Open a bug report", "", BUG_REPORT_FILTER
            )
        if not path:
            return None
        viewer = BundleViewer()
        viewer.replay_requested.connect(lambda report: self.replay(report.session))
        viewer.failed.connect(lambda why: self.report("Cannot open the bug report", why))
        viewer.open_path(path)
        return self._side(viewer, "Bug report — CETP Inspector")

    def serve_bug_report(self, path: str | None = None) -> list[str]:
        """Replay as a virtual provider: the bundle's recorded providers answer from the
        virtual device (docs/sessions.md), so anyone can explore a reported behaviour."""
        from inspector.virtual.apps.replayed import ReplayLoadError, install_bundle

        if not path:
            path, _ = QFileDialog.getOpenFileName(
                self, "Serve a bug report on the virtual device", "", BUG_REPORT_FILTER
            )
        if not path:
            return []
        device = self.controller.virtual_device()
        before = {p: type(a) for p, a in device.apps.items()}
        try:
            packages = install_bundle(device, path)
        except ReplayLoadError as exc:
            self.report("Cannot serve the bug report", str(exc))
            return []
        self._status.setText(
            bound(f"Serving the recording of {', '.join(packages)} on the virtual device", 300)
        )
        self._remember_served(packages, before)
        return packages

    def replay(self, contents: Any) -> QWidget | None:
        try:
            from inspector.ui.replay_diff import ReplayPanel
        except ImportError as exc:
            self.report("Replay unavailable", str(exc))
            return None
        serial = self.current_serial or "virtual"
        relay = self.controller.session(serial).link
        return self._side(
            ReplayPanel(contents, relay=relay), f"Replay on {serial} — CETP Inspector"
        )

    def show_provider_traffic(self) -> None:
        """The traffic dock filtered to the open provider (its authority)."""
        entry = self.controller.entry(self.current_key or "")
        self.traffic_dock.show()
        if entry is not None:
            self.traffic.filter.setText(f"target:{entry.declaration.authority}")
        self.traffic.filter.setFocus()

    def select_exchange(self, exchange_id: str) -> None:
        self.traffic_dock.show()
        self.traffic.filter.clear()
        self.traffic.model.set_filter("")
        self.traffic.select_exchange(exchange_id)

