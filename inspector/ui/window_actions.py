"""The main window's actions: menus, toolbar, shortcuts, theme and About."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QToolBar,
    QWidget,
)

from inspector.ui import theme
from inspector.ui.dialogs import AboutDialog
from inspector.ui.window_names import CONFORMANCE_SHORTCUT, PROVIDER_TRAFFIC_SHORTCUT, TABS


class WindowActions:
    """Mixin of MainWindow: every QAction, the menus and the toolbar."""

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
        self.act_provider_traffic = self._action(
            "Traffic of this provider",
            "traffic",
            PROVIDER_TRAFFIC_SHORTCUT,
            self.show_provider_traffic,
            "The traffic log filtered to the open provider",
        )
        self.act_conformance = self._action(
            "Conformance",
            "ok",
            CONFORMANCE_SHORTCUT,
            lambda: self.tabs.setCurrentWidget(self.conformance_holder),
            "Run the conformance suite against the open provider",
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
        self.act_export_bundle = self._action(
            "Export bug report…",
            "save",
            "Ctrl+E",
            self.export_bug_report,
            "Save this window's session as a bug-report bundle (secrets redacted by default)",
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
        for a in (self.act_sessions, self.act_export_bundle, self.act_open_bundle):
            menu.addAction(a)
        menu.addSeparator()
        menu.addAction(self.act_quit)
        view = self.view_menu = self.menuBar().addMenu("&View")
        for a in (self.act_rescan, self.act_reconnect, self.act_negotiate, self.act_theme):
            view.addAction(a)
        view.addAction(self.act_wake)
        view.addAction(self.act_provider_traffic)
        view.addAction(self.traffic_dock.toggleViewAction())
        view.addAction(self.nav_dock.toggleViewAction())
        self.menuBar().addMenu("&Help").addAction(self.act_about)
        self.side_windows: list[QWidget] = []  # sessions, bug reports, replays (kept alive)
        bar = QToolBar("Main")
        bar.setObjectName("mainToolbar")
        bar.setMovable(False)
        bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        for a in (self.act_rescan, self.act_reconnect, self.act_negotiate):
            bar.addAction(a)
        bar.addAction(self.act_export_bundle)
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


    def toggle_theme(self) -> None:
        name = "light" if theme.current() == "dark" else "dark"
        app = QApplication.instance()
        if isinstance(app, QApplication):
            theme.apply_theme(app, name)
        self.act_theme.setText("Light theme" if name == "dark" else "Dark theme")
        for ed in (
            self.traffic.detail,
            self.composer.raw,
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

