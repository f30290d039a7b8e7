"""Application shell: QApplication, theme, the one qasync event loop, the main window.

`run_gui(argv)` is what `cetp-inspector` runs without a subcommand. There is exactly one
asyncio loop (qasync's, driving Qt); background work goes through `inspector.tasks.spawn`
because qasync keeps no strong references to tasks; on quit every task is cancelled before
the loop closes.
"""

from __future__ import annotations

import asyncio
import logging
import sys

from PySide6.QtCore import QCoreApplication, QSettings
from PySide6.QtWidgets import QApplication

from inspector.ui import theme, workers

log = logging.getLogger(__name__)


def make_app(argv: list[str] | None = None) -> QApplication:
    """The QApplication (reused if one exists), named and themed."""
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        app = QApplication(list(argv or sys.argv[:1]))
    QCoreApplication.setOrganizationName("cetp-inspector")
    QCoreApplication.setApplicationName("CETP Inspector")
    app.setWindowIcon(theme.icon("app"))
    name = QSettings("cetp-inspector", "CETP Inspector").value("theme", "light")
    theme.apply_theme(app, str(name) if name in theme.THEMES else "light")
    return app


def run_gui(argv: list[str] | None = None) -> int:
    """Open the inspector window; returns the process exit code."""
    import qasync

    from inspector.relay.server import close_in_process_servers
    from inspector.tasks import spawner
    from inspector.ui.main_window import MainWindow

    app = make_app(argv)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    from inspector.ui.controller import Controller

    window = MainWindow(Controller(journal=True))
    window.show()
    # The loop must outlive the window to close the device sessions cleanly, so the app
    # does not quit on its own; the window's close (or a quit request) starts the shutdown.
    app.setQuitOnLastWindowClosed(False)
    closing = asyncio.Event()
    window.closed.connect(closing.set)
    app.aboutToQuit.connect(closing.set)

    async def main() -> None:
        await closing.wait()
        try:  # links first, so nothing reconnects while the tasks are cancelled
            await asyncio.wait_for(window.controller.close(), 5)
        except TimeoutError:
            log.warning("closing the device sessions took too long")
        await spawner().cancel_all()
        await close_in_process_servers()  # the embedded virtual device's server halves

    try:
        with loop:
            loop.run_until_complete(main())
    except RuntimeError as exc:  # the loop stops as the app quits; nothing left to do
        log.debug("event loop ended: %s", exc)
    finally:
        workers.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(run_gui(sys.argv))
