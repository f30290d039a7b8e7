"""The main window: devices and providers on the left, the provider view in the centre
(Overview, Tools, Call composer, Operations, Traffic), the traffic log at the bottom.
"""

from __future__ import annotations

import json
from collections.abc import Coroutine
from typing import Any

from PySide6.QtCore import QByteArray, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from inspector.consumer.engine import ProviderSession
from inspector.consumer.execution import Execution
from inspector.protocol.exchange import Exchange
from inspector.session.confirmations import ConfirmationRequest
from inspector.tasks import spawn
from inspector.ui import theme
from inspector.ui.composer import CallComposer, CallRequest, ToolTarget
from inspector.ui.controller import UNPLUGGED, Controller, describe_error
from inspector.ui.dialogs import AboutDialog, ConfirmationDialog
from inspector.ui.extension_view import ExtensionView
from inspector.ui.navigator import NavigatorPanel, add_finding_warnings
from inspector.ui.operations_panel import OperationsPanel
from inspector.ui.overview_panel import OverviewPanel
from inspector.ui.result_panel import ResultPanel
from inspector.ui.text import bound
from inspector.ui.tools_panel import ToolsPanel
from inspector.ui.traffic_panel import TrafficPanel

TABS = ("Overview", "Tools", "Call composer", "Operations", "Traffic")
HOTPLUG_MS = 3000
SETTINGS_ORG = "cetp-inspector"
SETTINGS_APP = "CETP Inspector"


class EmptyState(QWidget):
    """What the centre shows before a provider is picked."""

    exploreVirtual = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.addStretch(2)
        icon = QLabel()
        icon.setPixmap(theme.icon("app").pixmap(72, 72))
        lay.addWidget(icon, 0, Qt.AlignmentFlag.AlignHCenter)
        self.title = QLabel("Pick a provider on the left")
        self.title.setProperty("role", "empty-title")
        lay.addWidget(self.title, 0, Qt.AlignmentFlag.AlignHCenter)
        self.text = QLabel(
            "Connect an Android phone with USB debugging on and its CETP providers and "
            "AndyClaw extensions appear here.\nNo phone? Explore the virtual device: it hosts "
            "reference providers and extensions, confirmations, async operations and large "
            "results."
        )
        self.text.setWordWrap(True)
        self.text.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.text.setProperty("role", "muted")
        self.text.setFixedWidth(560)
        self.text.setMinimumHeight(self.text.heightForWidth(560))
        lay.addWidget(self.text, 0, Qt.AlignmentFlag.AlignHCenter)
        self.button = QPushButton(theme.icon("virtual", "#ffffff"), "Explore the virtual device")
        self.button.setObjectName("exploreVirtual")
        self.button.setProperty("primary", True)
        lay.addWidget(self.button, 0, Qt.AlignmentFlag.AlignHCenter)
        lay.addStretch(3)
        self.button.clicked.connect(self.exploreVirtual)


BUG_REPORT_FILTER = "Bug reports (*.cetpbundle);;Session journals (*.jsonl);;All files (*)"


class MainWindow(QMainWindow):
    closed = Signal()  # the user closed the window (the app shuts down)

    def __init__(
        self,
        controller: Controller | None = None,
        settings: QSettings | None = None,
        *,
        autostart: bool = True,
    ) -> None:
        super().__init__()
        self.controller = controller or Controller(parent=self)
        self.settings = settings or QSettings(SETTINGS_ORG, SETTINGS_APP)
        self.current_key: str | None = None
        self.current_serial: str | None = None
        self.current_request_id: str | None = None
        self.confirmation_dialog: ConfirmationDialog | None = None
        self.last_error = ""
        self.setWindowTitle("CETP Inspector")
        self.setWindowIcon(theme.icon("app"))
        self.resize(1360, 860)
        self.setDockOptions(
            QMainWindow.DockOption.AnimatedDocks | QMainWindow.DockOption.AllowTabbedDocks
        )

        # left: navigator
        self.navigator = NavigatorPanel()
        self.nav_dock = QDockWidget("Devices && providers", self)
        self.nav_dock.setObjectName("navigatorDock")
        self.nav_dock.setWidget(self.navigator)
        self.nav_dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.nav_dock)

        # bottom: traffic log
        self.traffic = TrafficPanel()
        self.traffic_dock = QDockWidget("Traffic log", self)
        self.traffic_dock.setObjectName("trafficDock")
        self.traffic_dock.setWidget(self.traffic)
        self.traffic_dock.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetMovable
            | QDockWidget.DockWidgetFeature.DockWidgetClosable
        )
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.traffic_dock)

        # centre
        self.stack = QStackedWidget()
        self.empty = EmptyState()
        self.stack.addWidget(self.empty)
        self.tabs = QTabWidget()
        self.tabs.setObjectName("providerTabs")
        self.tabs.setDocumentMode(True)
        self.overview = OverviewPanel()
        self.tools = ToolsPanel()
        self.composer = CallComposer()
        self.result = ResultPanel()
        comp = QSplitter(Qt.Orientation.Vertical)
        comp.setObjectName("composerSplit")
        comp.addWidget(self.composer)
        comp.addWidget(self.result)
        comp.setStretchFactor(0, 3)  # the form needs the room; the result scrolls
        comp.setStretchFactor(1, 2)
        comp.setSizes([590, 410])
        self.composer_split = comp
        self.operations = OperationsPanel()
        self.provider_traffic = TrafficPanel()
        for w, name, icon in (
            (self.overview, TABS[0], "negotiate"),
            (self.tools, TABS[1], "tool"),
            (comp, TABS[2], "composer"),
            (self.operations, TABS[3], "operation"),
            (self.provider_traffic, TABS[4], "traffic"),
        ):
            self.tabs.addTab(w, theme.icon(icon), name)
        self.conformance_holder = QWidget()
        self.conformance_holder.setObjectName("conformanceHolder")
        QVBoxLayout(self.conformance_holder).setContentsMargins(0, 0, 0, 0)
        self.conformance_panel: QWidget | None = None
        self._conformance_key: str | None = None
        self.tabs.addTab(self.conformance_holder, theme.icon("ok"), "Conformance")
        self.tabs.currentChanged.connect(self._tab_changed)
        self.stack.addWidget(self.tabs)
        self.extension_view = ExtensionView()
        self.stack.addWidget(self.extension_view)
        self.current_extension: str | None = None
        self.setCentralWidget(self.stack)

        self._build_actions()
        self._status = QLabel("Starting…")
        self.statusBar().addWidget(self._status, 1)
        self._link_label = QLabel("")
        self.statusBar().addPermanentWidget(self._link_label)
        self._wire()
        self.navigator.setMinimumWidth(300)
        self.resizeDocks([self.nav_dock], [330], Qt.Orientation.Horizontal)
        self.resizeDocks([self.traffic_dock], [200], Qt.Orientation.Vertical)
        self.restore_layout()
        # adb devices come and go (cable pulls): poll the list while the window is open
        self._hotplug = QTimer(self)
        self._hotplug.setInterval(HOTPLUG_MS)
        self._hotplug.timeout.connect(self._poll_devices)
        self._polling = False
        if autostart:
            QTimer.singleShot(0, self.start)
            self._hotplug.start()

    # ------------------------------------------------------------------ actions
    def _action(
        self,
        text: str,
        icon: str,
        shortcut: str | QKeySequence.StandardKey | None,
        slot: Any,
        tip: str = "",
    ) -> QAction:
        a = QAction(theme.icon(icon), text, self)
        if shortcut is not None:
            a.setShortcut(QKeySequence(shortcut))
        a.setToolTip(f"{tip or text}" + (f" ({a.shortcut().toString()})" if shortcut else ""))
        a.triggered.connect(slot)
        self.addAction(a)
        return a

    def _build_actions(self) -> None:
        self.act_rescan = self._action(
            "Rescan", "refresh", "F5", self.rescan, "Rescan devices and packages"
        )
        self.act_reconnect = self._action(
            "Reconnect",
            "reconnect",
            "Ctrl+R",
            self.reconnect,
            "Reconnect the relay; sessions and operations stay",
        )
        self.act_negotiate = self._action(
            "Negotiate",
            "negotiate",
            "Ctrl+N",
            self.overview._negotiate_clicked,
            "Negotiate again with the overview's settings",
        )
        self.act_theme = self._action(
            "Dark theme", "theme", "Ctrl+Shift+L", self.toggle_theme, "Switch light/dark theme"
        )
        self.act_about = self._action("About", "about", "F1", self.show_about)
        self.act_quit = self._action("Quit", "cancel", "Ctrl+Q", self.close)
        self._action("Filter traffic", "filter", "Ctrl+F", self._focus_traffic_filter)
        self._action(
            "Filter providers", "filter", "Ctrl+K", lambda: self.navigator.filter.setFocus()
        )
        for i in range(len(TABS)):
            self._action(
                TABS[i], "tool", f"Ctrl+{i + 1}", lambda _=False, i=i: self.tabs.setCurrentIndex(i)
            )
        self.act_sessions = self._action(
            "Sessions…",
            "operation",
            "Ctrl+Shift+S",
            self.show_sessions,
            "Recorded sessions (journals)",
        )
        self.act_open_bundle = self._action(
            "Open bug report…",
            "save",
            QKeySequence.Open,
            self.open_bug_report,
            "Open a bug-report bundle",
        )
        self.act_serve_bundle = self._action(
            "Serve bug report on the virtual device…",
            "reconnect",
            "Ctrl+Shift+O",
            self.serve_bug_report,
            "Replay a bug report as a virtual provider: its recorded provider answers from "
            "the virtual device",
        )
        self.act_wake = self._action(
            "Wake providers that are not running",
            "launch",
            None,
            lambda on: self.controller.set_wake_and_retry(bool(on)),
            "On 'Unknown authority', acquire the provider's client, then launch its app, "
            "and retry with the same request_id (each step shows in the traffic log)",
        )
        self.act_wake.setCheckable(True)
        menu = self.menuBar().addMenu("&File")
        for a in (self.act_sessions, self.act_open_bundle, self.act_serve_bundle):
            menu.addAction(a)
        menu.addSeparator()
        menu.addAction(self.act_quit)
        view = self.menuBar().addMenu("&View")
        for a in (self.act_rescan, self.act_reconnect, self.act_negotiate, self.act_theme):
            view.addAction(a)
        view.addAction(self.act_wake)
        view.addAction(self.traffic_dock.toggleViewAction())
        view.addAction(self.nav_dock.toggleViewAction())
        # --- issue 16 hook: the Device screen pane (inspector/ui/screen_pane.py) ---
        from inspector.ui.screen_pane import install_screen_pane

        install_screen_pane(self, view)
        # --- end issue 16 hook ---
        self.menuBar().addMenu("&Help").addAction(self.act_about)
        self.side_windows: list[QWidget] = []  # sessions, bug reports, replays (kept alive)
        # --- issue 15: MCP bridge view (View > Bridge (MCP)…, inspector/ui/bridge_view.py) ---
        from inspector.ui.bridge_view import install_bridge_action

        self.act_bridge = install_bridge_action(self, view)
        # --- end issue 15 ---
        bar = QToolBar("Main")
        bar.setObjectName("mainToolbar")
        bar.setMovable(False)
        bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        for a in (self.act_rescan, self.act_reconnect, self.act_negotiate):
            bar.addAction(a)
        spacer = QWidget()
        spacer.setSizePolicy(
            spacer.sizePolicy().horizontalPolicy().Expanding,
            spacer.sizePolicy().verticalPolicy().Preferred,
        )
        bar.addWidget(spacer)
        bar.addAction(self.act_theme)
        bar.addAction(self.act_about)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, bar)

    def _focus_traffic_filter(self) -> None:
        self.traffic_dock.show()
        self.traffic.filter.setFocus()
        self.traffic.filter.selectAll()

    # ------------------------------------------------------------------ wiring
    def _wire(self) -> None:
        c = self.controller
        c.devicesChanged.connect(self._devices_changed)
        c.linkStateChanged.connect(self._link_state)
        c.discoveryChanged.connect(self._discovery_changed)
        c.providerChanged.connect(self._provider_changed)
        c.executionChanged.connect(self._execution_changed)
        c.exchangeRecorded.connect(self._exchange)
        c.confirmationRequested.connect(self._confirmation)
        c.transferProgress.connect(self._transfer)
        self.navigator.providerActivated.connect(self.open_provider)
        self.navigator.extensionActivated.connect(self.open_extension)
        self.navigator.deviceActivated.connect(self.connect_device)
        c.extensionChanged.connect(self._extension_changed)
        self.extension_view.callRequested.connect(self._call_extension)
        self.navigator.rescan.clicked.connect(self.rescan)
        self.empty.exploreVirtual.connect(self.explore_virtual)
        self.overview.negotiateRequested.connect(self._negotiate)
        self.tools.composeRequested.connect(self.compose)
        self.composer.sendRequested.connect(self._send)
        self.result.launchResolution.connect(self._launch)
        self.result.saveFile.connect(self._save_file)
        self.result.retryRequested.connect(self._retry)
        self.operations.cancelRequested.connect(self._cancel)

    def run(self, coro: Coroutine[Any, Any, Any], name: str, what: str) -> None:
        """Spawn a controller coroutine; failures become a readable status message."""

        async def guarded() -> None:
            try:
                await coro
            except Exception as exc:
                self.report(f"{what} failed", describe_error(exc))

        spawn(guarded(), name)

    def report(self, title: str, message: str) -> None:
        self.last_error = f"{title}: {message}"
        self._status.setText(bound(self.last_error, 300))
        self._status.setToolTip(bound(self.last_error, 2000, single_line=False))

    # ------------------------------------------------------------------ flows
    def start(self) -> None:
        async def boot() -> None:
            await self.controller.refresh_devices()
            await self.controller.connect("virtual")
            self._status.setText("Ready — pick a provider, or press F5 to rescan.")

        self.run(boot(), "startup", "Starting the virtual device")

    def _poll_devices(self) -> None:
        if self._polling or not self.controller.devices_manager._use_adb:
            return
        self._polling = True

        async def go() -> None:
            try:
                await self.controller.refresh_devices()
            finally:
                self._polling = False

        self.run(go(), "hotplug", "Listing adb devices")

    def connect_device(self, serial: str) -> None:
        e = self.controller.device(serial)
        if e is not None and (e.session is None or not e.session.link.connected):
            if not e.info.usable:
                self.report(f"{serial} is not usable", e.info.message or e.info.state)
                return
            self.current_serial = serial
            self.run(
                self.controller.connect(serial), f"connect:{serial}", f"Connecting to {serial}"
            )

    def explore_virtual(self) -> None:
        async def go() -> None:
            d = self.controller.discovery("virtual") or await self.controller.rescan("virtual")
            if d.cetp:
                self.navigator.select("virtual", d.cetp[0].key)

        self.run(go(), "explore-virtual", "Opening the virtual device")

    def rescan(self) -> None:
        async def go() -> None:
            await self.controller.refresh_devices()
            for serial, e in list(self.controller.devices.items()):
                if e.session is not None and e.state != UNPLUGGED:
                    await self.controller.rescan(serial)

        self.run(go(), "rescan", "Rescan")

    def reconnect(self) -> None:
        serial = self.current_serial or "virtual"
        self.run(self.controller.reconnect(serial), f"reconnect:{serial}", "Reconnect")

    def toggle_theme(self) -> None:
        name = "light" if theme.current() == "dark" else "dark"
        app = QApplication.instance()
        if isinstance(app, QApplication):
            theme.apply_theme(app, name)
        self.act_theme.setText("Light theme" if name == "dark" else "Dark theme")
        for ed in (
            self.traffic.detail,
            self.composer.raw,
            self.provider_traffic.detail,
            self.result.value_view.text,
            self.operations.result.text,
        ):
            ed.highlighter.reload_theme()
            ed.highlighter.rehighlight()
        self.settings.setValue("theme", name)

    def show_about(self) -> AboutDialog:
        hello = None
        e = self.controller.device(self.current_serial or "virtual")
        if e is not None and e.session is not None and e.session.link.connected:
            hello = e.session.link.hello_info
        dlg = AboutDialog(hello, self)
        dlg.open()
        return dlg

    # ------------------------------------------------------------------ controller events
    def _devices_changed(self, devices: list) -> None:
        states = {s: e.state for s, e in self.controller.devices.items()}
        self.navigator.model.set_devices(devices, states)
        phones = [d for d in devices if d.kind == "adb"]
        if not phones:
            self.empty.title.setText("No phone connected")
        else:
            self.empty.title.setText("Pick a provider on the left")

    def _link_state(self, serial: str, state: str, detail: str) -> None:
        self.navigator.model.set_link_state(serial, state)
        if serial == (self.current_serial or "virtual"):
            self._link_label.setText(
                f"{serial}: {state}" + (f" — {bound(detail, 80)}" if detail else "")
            )

    def _discovery_changed(self, serial: str) -> None:
        d = self.controller.discovery(serial)
        if d is not None:
            self.navigator.model.set_discovery(serial, d)
            self.navigator.tree.expandAll()
            self.navigator.fit_columns()
        if self.current_key and self.current_serial == serial and d is not None:
            entry = self.controller.entry(self.current_key)
            if entry is not None:
                found = [x for x in d.cetp if x.key == entry.declaration.key]
                if found:
                    entry.declaration = found[0]
                    self.overview.show_declaration(found[0])

    def open_provider(self, serial: str, decl_key: str) -> None:
        d = self.controller.discovery(serial)
        decl = next((x for x in (d.cetp if d else []) if x.key == decl_key), None)
        if decl is None:
            return
        entry = self.controller.open(serial, decl)
        self.current_key = entry.key
        self.current_extension = None
        self.current_serial = serial
        self.stack.setCurrentWidget(self.tabs)
        self.overview.show_declaration(decl)
        self.composer.set_target(None)
        self.current_request_id = None
        self.result.show_execution(None)
        self.operations.show_executions([x for x in entry.executions.values() if x.operation_id])
        self.provider_traffic.model.clear()
        self.provider_traffic.model.add_many(
            x for x in self.controller.exchanges() if x.target == decl.authority
        )
        if entry.loaded:
            self._provider_changed(entry.key)
        else:
            self.overview.show_session(None)
            self.overview.show_info(None)
            self.tools.show_tools(None)
            self.run(self.controller.load(entry.key), f"load:{entry.key}", "Loading the provider")

    def open_extension(self, serial: str, ext_id: str) -> None:
        d = self.controller.discovery(serial)
        decl = next((e for e in (d.extensions if d else []) if e.id == ext_id), None)
        if decl is None:
            return
        key, host = self.controller.extension_host(serial, decl)
        self.current_extension = key
        self.current_key = None
        self.current_serial = serial
        self.extension_view.show_host(host)
        self.stack.setCurrentWidget(self.extension_view)
        if not host.functions:
            self.run(self.controller.load_extension(key), f"ext:{key}", "Reading the manifest")

    def _extension_changed(self, key: str) -> None:
        if key == self.current_extension:
            _serial, host = self.controller.extensions[key]
            self.extension_view.show_host(host)

    def _call_extension(self, function: str, params: str, bridge: str, approved: bool) -> None:
        key = self.current_extension
        if key is None:
            return

        async def go() -> None:
            call = await self.controller.call_extension(key, function, params, bridge, approved)
            if key == self.current_extension:
                self.extension_view.show_call(call)

        self.run(go(), f"ext-call:{function}", f"Calling {function}")

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
        if self.conformance_panel is not None:
            lay.removeWidget(self.conformance_panel)
            self.conformance_panel.deleteLater()
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
        lay.addWidget(panel)
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
        try:
            packages = install_bundle(self.controller.virtual_device(), path)
        except ReplayLoadError as exc:
            self.report("Cannot serve the bug report", str(exc))
            return []
        self._status.setText(
            bound(f"Serving the recording of {', '.join(packages)} on the virtual device", 300)
        )
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

    def select_exchange(self, exchange_id: str) -> None:
        self.traffic_dock.show()
        self.traffic.filter.clear()
        self.traffic.model.set_filter("")
        self.traffic.select_exchange(exchange_id)

    def _provider_changed(self, key: str) -> None:
        if key != self.current_key:
            return
        entry = self.controller.entry(key)
        if entry is None or entry.engine is None:
            return
        if self.tabs.currentWidget() is self.conformance_holder:
            self.show_conformance()
        eng = entry.engine
        self.overview.show_error(entry.error)
        session = getattr(eng, "session", None)
        self.overview.show_session(session)
        self.overview.show_info(getattr(eng, "info", None))
        findings = list(getattr(eng, "findings", []))
        self.overview.show_findings(findings)
        broken = [
            f"{f.section} {f.rule_id}: {f.message}"
            for f in findings
            if not f.ok and f.level == "MUST"
        ]
        add_finding_warnings(self.navigator.model, entry.serial, entry.declaration.key, broken)
        v1 = entry.v1_engine.tools if entry.v1_engine is not None else None
        if isinstance(eng, ProviderSession):
            invalid = [str(v) for v in eng.tool_violations]
            self.tools.show_tools(eng.tools, eng.last_diff, v1, invalid)
        else:
            self.tools.show_tools(None, None, eng.tools)

    def compose(self, tool_name: str, version: int) -> None:
        entry = self.controller.entry(self.current_key or "")
        if entry is None or entry.engine is None:
            return
        eng = entry.engine
        if version == 2 and isinstance(eng, ProviderSession):
            t = eng.tool(tool_name)
            if t is None:
                return
            target = ToolTarget(
                name=t.name,
                title=t.title,
                description=t.description,
                input_schema=t.input_schema,
                annotations=t.annotations,
                max_request_bytes=eng.session.max_request_bytes if eng.session else None,
            )
        else:
            tools = (entry.v1_engine or eng).tools if version == 1 else eng.tools
            t1 = tools.tool(tool_name) if tools else None
            if t1 is None:
                return
            target = ToolTarget(
                name=t1.name, description=t1.description, input_schema=t1.parameters
            )
        self.composer.set_target(target)
        self.tabs.setCurrentIndex(2)

    def _negotiate(self, versions: tuple, caps: tuple) -> None:
        if self.current_key:
            self.run(
                self.controller.negotiate(self.current_key, versions, caps),
                f"negotiate:{self.current_key}",
                "Negotiation",
            )

    def _send(self, req: CallRequest) -> None:
        key = self.current_key
        if key is None:
            return
        self.current_request_id = req.request_id
        self.result.show_execution(None)
        self.result.state.setText("Sending…")
        self.run(
            self.controller.execute(
                key, req.tool_name, req.args_text, req.request_id, req.deadline_ms
            ),
            f"execute:{req.request_id}",
            f"Calling {req.tool_name}",
        )

    def _execution_changed(self, serial: str, ex: Execution) -> None:
        if (
            self.current_key is None
            or self.controller.execution(self.current_key, ex.request_id) is not ex
        ):
            return
        if ex.operation_id:
            self.operations.update_execution(ex)
        if ex.request_id == self.current_request_id:
            t = self.controller.timing(serial, ex)
            self.result.show_execution(
                ex, started_ms=t[0] if t else None, finished_ms=t[1] if t else None
            )

    def _launch(self, request_id: str) -> None:
        if self.current_key:
            self.run(
                self.controller.launch_resolution(self.current_key, request_id),
                f"resolution:{request_id}",
                "Launching the confirmation",
            )

    def _retry(self, request_id: str) -> None:
        ex = self.controller.execution(self.current_key or "", request_id)
        if ex is not None and self.current_key:
            self.run(
                self.controller.execute(
                    self.current_key,
                    ex.tool_name,
                    ex.args_json,
                    request_id,
                    self.composer.deadline.value() * 1000,
                ),
                f"retry:{request_id}",
                "Retry",
            )

    def _cancel(self, request_id: str) -> None:
        if self.current_key:
            self.run(
                self.controller.cancel_operation(self.current_key, request_id),
                f"cancel:{request_id}",
                "Cancel",
            )

    def _save_file(self, request_id: str) -> None:
        ex = self.controller.execution(self.current_key or "", request_id)
        v = ex.file_verdict if ex else None
        if v is None or not v.content_path:
            return
        path, _ = QFileDialog.getSaveFileName(self, "Save the result", "result.bin")
        if path:
            self.save_result_to(request_id, path)

    def save_result_to(self, request_id: str, path: str) -> bool:
        ex = self.controller.execution(self.current_key or "", request_id)
        v = ex.file_verdict if ex else None
        if v is None or not v.content_path:
            return False
        import shutil

        shutil.copyfile(v.content_path, path)
        self._status.setText(f"Saved {bound(path, 200)}")
        return True

    def _transfer(self, request_id: str, done: int, total: int) -> None:
        if request_id == self.current_request_id:
            self.result.file_box.setVisible(True)
            self.result.set_transfer_progress(done, total)

    def _exchange(self, ex: Exchange) -> None:
        self.traffic.model.refresh(ex)
        entry = self.controller.entry(self.current_key or "")
        if (entry is not None and ex.target in (entry.declaration.authority,)) or (
            entry is not None and ex.package == entry.declaration.package
        ):
            self.provider_traffic.model.refresh(ex)

    def _confirmation(self, serial: str, request: ConfirmationRequest) -> None:
        dlg = ConfirmationDialog(request.model_dump(mode="json"), self)
        dlg.answered.connect(self.controller.answer)
        self.confirmation_dialog = dlg
        dlg.open()

    # ------------------------------------------------------------------ layout
    def restore_layout(self) -> None:
        geo = self.settings.value("geometry")
        if isinstance(geo, QByteArray | bytes):
            self.restoreGeometry(QByteArray(geo))
        state = self.settings.value("windowState")
        if isinstance(state, QByteArray | bytes):
            self.restoreState(QByteArray(state))
        split = self.settings.value("composerSplit")
        if isinstance(split, QByteArray | bytes):
            self.composer_split.restoreState(QByteArray(split))
        name = self.settings.value("theme", "light")
        app = QApplication.instance()
        if isinstance(app, QApplication) and name in theme.THEMES and name != theme.current():
            theme.apply_theme(app, str(name))
        self.act_theme.setText("Light theme" if theme.current() == "dark" else "Dark theme")

    def save_layout(self) -> None:
        self.settings.setValue("geometry", self.saveGeometry())
        self.settings.setValue("windowState", self.saveState())
        self.settings.setValue("composerSplit", self.composer_split.saveState())
        self.settings.setValue("theme", theme.current())
        self.settings.sync()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.save_layout()
        super().closeEvent(event)
        self.closed.emit()


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
