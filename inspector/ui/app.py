"""Application shell: QApplication, theme, the one qasync event loop, the main window.

`run_gui(argv)` is what `cetp-inspector` runs without a subcommand. There is exactly one
asyncio loop (qasync's, driving Qt); background work goes through `inspector.tasks.spawn`
because qasync keeps no strong references to tasks; on quit every task is cancelled before
the loop closes.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, QSettings, QTimer
from PySide6.QtWidgets import QApplication

from inspector.ui import theme, workers
from inspector.ui.heap import freeze_heap

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


NO_ADB_ENV = "CETP_INSPECTOR_NO_ADB"  # the same switch as the CLI's (inspector.cli.context)
READY_LINE = "CETP Inspector: window open (Ctrl+C here quits)"


def device_manager(options: Any = None) -> Any:
    """The device layer from the common options (`--virtual-plugin`, `--virtual-bundle`,
    `--virtual-state`, `--relay-socket`/`--token`), as the CLI builds it."""
    from inspector.session.devices import DeviceManager, VirtualConfig

    def opt(name: str, default: Any = None) -> Any:
        return getattr(options, name, default) if options is not None else default

    config = VirtualConfig(
        state_dir=opt("virtual_state"),
        plugins=list(opt("virtual_plugin") or []),
        relay_socket=opt("relay_socket"),
        token=opt("token"),
        bundles=list(opt("virtual_bundle") or []),
    )
    use_adb = os.environ.get(NO_ADB_ENV, "") not in ("1", "true", "yes")
    return DeviceManager(config, use_adb=use_adb and not config.relay_socket)


def quit_on_sigint(window: Any, parent: QObject) -> QTimer:
    """Ctrl+C in the terminal closes the window as Quit does (no question, no traceback);
    a second Ctrl+C during a stuck shutdown ends the process at once.

    Python runs signal handlers only between bytecodes, and Qt's loop runs in C++: the
    returned timer wakes the interpreter so the handler runs within 200 ms."""
    pressed = []

    def handler(_sig: int, _frame: Any) -> None:
        if pressed:
            os._exit(130)
        pressed.append(True)
        sys.stderr.write("Closing (Ctrl+C again to force)…\n")
        QTimer.singleShot(0, window.force_close)

    signal.signal(signal.SIGINT, handler)
    wake = QTimer(parent)
    wake.setInterval(200)
    wake.timeout.connect(lambda: None)
    wake.start()
    return wake


def run_gui(argv: list[str] | None = None, options: Any = None) -> int:
    """Open the inspector window; returns the process exit code. `options` are the CLI's
    parsed common options (None: defaults)."""
    import qasync

    from inspector.relay.server import close_in_process_servers
    from inspector.tasks import spawner
    from inspector.ui import xcb_check
    from inspector.ui.main_window import MainWindow

    if xcb_check.uses_xcb() and (missing := xcb_check.missing_packages()):
        sys.stderr.write(xcb_check.explain(missing) + "\n")  # instead of Qt's abort (134)
        return 3
    app = make_app(argv)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    from inspector.ui.controller import Controller

    window = MainWindow(Controller(device_manager(options), journal=True))
    window.initial_serial = getattr(options, "device", None) or "virtual"
    window.show()
    freeze_heap()  # start-up objects live as long as the app: no full GC walks them again
    quit_on_sigint(window, app)
    sys.stderr.write(READY_LINE + "\n")
    sys.stderr.flush()
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
