"""The main window: devices and providers on the left, the provider view in the centre
(Overview, Tools, Call composer, Operations, Conformance), the traffic log at the bottom.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from PySide6.QtCore import QSettings, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QDockWidget,
    QLabel,
    QMainWindow,
    QPushButton,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from inspector.ui import theme
from inspector.ui.composer import CallComposer
from inspector.ui.controller import Controller
from inspector.ui.dialogs import ConfirmationDialog
from inspector.ui.extension_view import ExtensionView
from inspector.ui.navigator import NavigatorPanel
from inspector.ui.operations_panel import OperationsPanel
from inspector.ui.overview_panel import OverviewPanel
from inspector.ui.result_panel import ResultPanel
from inspector.ui.tools_panel import ToolsPanel
from inspector.ui.traffic_panel import TrafficPanel
from inspector.ui.window_actions import WindowActions
from inspector.ui.window_calls import CallFlow
from inspector.ui.window_layout import WindowLayout
from inspector.ui.window_names import (
    BUG_REPORT_FILTER,
    HOTPLUG_MS,
    SETTINGS_APP,
    SETTINGS_ORG,
    TABS,
)
from inspector.ui.window_selection import ProviderSelection
from inspector.ui.window_side import SideWindows
from inspector.ui.window_virtual import VirtualDeviceMenu

__all__ = ["BUG_REPORT_FILTER", "TABS", "EmptyState", "MainWindow"]


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
        self.text.setMaximumWidth(560)  # narrower in a small window: it wraps
        self.text.setMinimumWidth(260)
        self.text.setMinimumHeight(self.text.heightForWidth(560))
        lay.addWidget(self.text, 0, Qt.AlignmentFlag.AlignHCenter)
        self.button = QPushButton(theme.icon("virtual", "#ffffff"), "Explore the virtual device")
        self.button.setObjectName("exploreVirtual")
        self.button.setProperty("primary", True)
        lay.addWidget(self.button, 0, Qt.AlignmentFlag.AlignHCenter)
        lay.addStretch(3)
        self.button.clicked.connect(self.exploreVirtual)



class MainWindow(
    WindowActions,
    ProviderSelection,
    CallFlow,
    SideWindows,
    VirtualDeviceMenu,
    WindowLayout,
    QMainWindow,
):
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
        self.initial_serial = "virtual"  # the device connected at start (`-d SERIAL`)
        self.current_request_id: str | None = None
        self.confirmation_dialog: ConfirmationDialog | None = None
        self.last_error = ""
        self.in_flight: dict[str, asyncio.Task] = {}  # calls not ended (closing asks first)
        self._force_close = False
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
        result_scroll = QScrollArea()  # a short window scrolls the result, not the window
        result_scroll.setObjectName("resultScroll")
        result_scroll.setWidgetResizable(True)
        result_scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        result_scroll.setWidget(self.result)
        comp.addWidget(result_scroll)
        comp.setStretchFactor(0, 3)  # the form needs the room; the result scrolls
        comp.setStretchFactor(1, 2)
        comp.setSizes([590, 410])
        self.composer_split = comp
        self.operations = OperationsPanel()
        for w, name, icon in (
            (self.overview, TABS[0], "negotiate"),
            (self.tools, TABS[1], "tool"),
            (comp, TABS[2], "composer"),
            (self.operations, TABS[3], "operation"),
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
        self._build_virtual_menu()
        self._register_extra_views()
        # both show provider-derived text (errors, names): plain text only (issue 12)
        self._status = QLabel("Starting…")
        self._status.setTextFormat(Qt.TextFormat.PlainText)
        self.statusBar().addWidget(self._status, 1)
        self._link_label = QLabel("")
        self._link_label.setTextFormat(Qt.TextFormat.PlainText)
        self.statusBar().addPermanentWidget(self._link_label)
        self._wire()
        self.navigator.setMinimumWidth(220)  # 1024 px screens keep room for the centre
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

    # ------------------------------------------------------------------ extra views
    def _register_extra_views(self) -> None:
        """The one place where further docks and side views are added (one line each,
        with `add_dock`), after the menus exist so their toggles land in the View menu."""
        from inspector.ui.bridge_view import install_bridge_action
        from inspector.ui.screen_pane import install_screen_pane

        install_screen_pane(self, self.view_menu)  # the Device screen dock (issue 16)
        self.act_bridge = install_bridge_action(self, self.view_menu)  # Bridge (MCP)… (15)

    def add_dock(
        self,
        widget: QWidget,
        title: str,
        object_name: str,
        area: Qt.DockWidgetArea = Qt.DockWidgetArea.RightDockWidgetArea,
        *,
        visible: bool = False,
    ) -> QDockWidget:
        """Dock `widget` (closable, movable), listed in the View menu; hidden unless asked."""
        dock = QDockWidget(title, self)
        dock.setObjectName(object_name)  # saveState/restoreState key
        dock.setWidget(widget)
        dock.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetMovable
            | QDockWidget.DockWidgetFeature.DockWidgetClosable
        )
        self.addDockWidget(area, dock)
        dock.setVisible(visible)
        self.view_menu.addAction(dock.toggleViewAction())
        return dock

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
        self.composer.cancelRequested.connect(self._cancel_in_flight)
        self.extension_view.composer.cancelRequested.connect(self._cancel_extension_call)
        self.result.launchResolution.connect(self._launch)
        self.result.saveFile.connect(self._save_file)
        self.result.retryRequested.connect(self._retry)
        self.operations.cancelRequested.connect(self._cancel)
        self.traffic.reopenRequested.connect(self.reopen_call)  # History: reopen / copy
        self.traffic.commandRequested.connect(self.copy_call_command)


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
