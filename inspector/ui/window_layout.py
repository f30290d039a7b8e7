"""Window state: the status line, saved geometry/dock state/theme, and closing."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from PySide6.QtCore import QByteArray, QRect, Qt
from PySide6.QtGui import QCloseEvent, QGuiApplication
from PySide6.QtWidgets import QApplication, QMessageBox

from inspector.tasks import spawn
from inspector.ui import theme
from inspector.ui.controller import describe_error
from inspector.ui.text import bound, tooltip


def clamp_to(rect: QRect, screen: QRect) -> QRect:
    """`rect` moved and shrunk so it lies inside `screen` (a saved geometry from a bigger
    monitor must not restore the window half off-screen or larger than the screen)."""
    w = min(rect.width(), screen.width())
    h = min(rect.height(), screen.height())
    x = min(max(rect.x(), screen.x()), screen.x() + screen.width() - w)
    y = min(max(rect.y(), screen.y()), screen.y() + screen.height() - h)
    return QRect(x, y, w, h)


class WindowLayout:
    """Mixin of MainWindow: status messages, the layout saved in QSettings, and closing."""

    def run(self, coro: Coroutine[Any, Any, Any], name: str, what: str) -> asyncio.Task:
        """Spawn a controller coroutine; failures become a readable status message, and a
        later success of the same action clears that message (it would mislead)."""

        async def guarded() -> None:
            try:
                await coro
            except Exception as exc:
                self.report(f"{what} failed", describe_error(exc))
            else:
                if self.last_error.startswith(f"{what} failed:"):
                    self.last_error = ""
                    self._status.setText(f"{what}: done.")
                    self._status.setToolTip("")

        return spawn(guarded(), name)

    def report(self, title: str, message: str) -> None:
        self.last_error = f"{title}: {message}"
        self._status.setText(bound(self.last_error, 300))
        self._status.setToolTip(tooltip(self.last_error, 2000))

    # ------------------------------------------------------------------ geometry
    def restore_layout(self) -> None:
        geo = self.settings.value("geometry")
        if isinstance(geo, QByteArray | bytes):
            self.restoreGeometry(QByteArray(geo))
        self.clamp_to_screen()
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

    def clamp_to_screen(self) -> None:
        """Fit the window into the available area of its screen (or the primary one)."""
        screen = self.screen() or QGuiApplication.primaryScreen()
        if screen is None:
            return
        avail = screen.availableGeometry()
        if self.isMaximized() or self.isFullScreen():
            return
        frame = self.frameGeometry()
        extra_w = frame.width() - self.width()
        extra_h = frame.height() - self.height()
        inner = QRect(
            avail.x(), avail.y(), avail.width() - extra_w, avail.height() - extra_h
        )
        fitted = clamp_to(self.geometry(), inner)
        if fitted != self.geometry():
            self.setGeometry(fitted)

    def save_layout(self) -> None:
        self.settings.setValue("geometry", self.saveGeometry())
        self.settings.setValue("windowState", self.saveState())
        self.settings.setValue("composerSplit", self.composer_split.saveState())
        self.settings.setValue("theme", theme.current())
        self.settings.sync()

    # ------------------------------------------------------------------ closing
    def calls_in_flight(self) -> list[str]:
        """request_ids (or extension function names) of calls that have not ended."""
        return [rid for rid, task in self.in_flight.items() if not task.done()]

    def confirm_close(self, running: list[str]) -> bool:
        """Ask before closing with calls in flight (their outcome would stay unknown)."""
        box = QMessageBox(
            QMessageBox.Icon.Warning,
            "Calls are still running",
            f"{len(running)} call(s) have not finished. Closing stops waiting for them: "
            "their outcome on the device stays unknown (the traffic log and the session "
            "journal keep what was sent).\n\nClose anyway?",
            QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setTextFormat(Qt.TextFormat.PlainText)
        go = box.addButton("Close anyway", QMessageBox.ButtonRole.AcceptRole)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        return box.clickedButton() is go

    def force_close(self) -> None:
        """Close without asking (Ctrl+C in the terminal, the app quitting)."""
        self._force_close = True
        self.close()

    def closeEvent(self, event: QCloseEvent) -> None:
        running = self.calls_in_flight()
        if running and not self._force_close and not self.confirm_close(running):
            event.ignore()
            return
        self.save_layout()
        super().closeEvent(event)
        self.closed.emit()
