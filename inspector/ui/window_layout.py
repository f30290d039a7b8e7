"""Window state: the status line, saved geometry/dock state/theme, and closing."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

from PySide6.QtCore import QByteArray
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QApplication,
)

from inspector.tasks import spawn
from inspector.ui import theme
from inspector.ui.controller import describe_error
from inspector.ui.text import bound


class WindowLayout:
    """Mixin of MainWindow: status messages and the layout saved in QSettings."""

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


