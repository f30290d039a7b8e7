#!/usr/bin/env python3
"""Render the inspector's main screens offscreen into docs/screenshots/*.png.

Drives the real window against the in-process virtual device (no phone), the same way the
GUI tests do, and saves `grab()` images:  .venv/bin/python scripts/screenshots.py [OUT_DIR]
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import qasync  # noqa: E402
from PySide6.QtCore import QSettings  # noqa: E402
from PySide6.QtWidgets import QApplication, QWidget  # noqa: E402

from inspector.consumer.execution import ExecState  # noqa: E402
from inspector.session.devices import DeviceManager, VirtualConfig  # noqa: E402
from inspector.tasks import spawner  # noqa: E402
from inspector.ui import theme  # noqa: E402
from inspector.ui.app import make_app  # noqa: E402
from inspector.ui.controller import Controller  # noqa: E402
from inspector.ui.main_window import MainWindow  # noqa: E402
from inspector.virtual import VirtualDevice  # noqa: E402
from inspector.virtual.inprocess import connect_virtual_device  # noqa: E402

SIZE = (1440, 900)


async def until(pred: Callable[[], object], timeout: float = 15.0) -> None:
    end = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > end:
            raise TimeoutError("the screen did not reach the expected state")
        await asyncio.sleep(0.05)


async def settle(app: QApplication, seconds: float = 0.3) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:  # the qasync loop processes Qt events meanwhile
        await asyncio.sleep(0.03)


def shot(widget: QWidget, out: Path, name: str) -> None:
    path = out / f"{name}.png"
    widget.grab().save(str(path))
    print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")


async def drive(app: QApplication, out: Path, tmp: Path) -> None:
    device = VirtualDevice(tmp / "device")

    async def connect():
        return await connect_virtual_device(device, events=True)

    controller = Controller(
        DeviceManager(VirtualConfig(), use_adb=False), connectors={"virtual": connect}
    )
    settings = QSettings(str(tmp / "settings.ini"), QSettings.Format.IniFormat)
    w = MainWindow(controller, settings)
    w.resize(*SIZE)
    w.show()
    await until(lambda: controller.discovery("virtual") is not None)
    await settle(app)
    shot(w, out, "01-start")

    d = controller.discovery("virtual")
    decl = next(x for x in d.cetp if x.package == "com.example.pricealerts")
    w.navigator.select("virtual", decl.key)
    await until(lambda: (e := controller.entry(w.current_key or "")) is not None and e.loaded)
    await settle(app)
    shot(w, out, "02-overview-negotiation")

    w.tabs.setCurrentIndex(1)
    w.tools.select("create_alert")
    await settle(app)
    shot(w, out, "03-tools")

    w.tools.compose.click()
    w.composer.set_args({"symbol": "acme", "price": -5, "direction": "above"})
    await until(lambda: w.composer.verdict is not None and w.composer.verdict.issues)
    await settle(app)
    shot(w, out, "04-composer-validation")

    w.tools.select("get_quote")
    w.tools.compose.click()
    w.composer.form.field("symbol").edit.setText("ACME")
    await until(
        lambda: w.composer.send.isEnabled() and w.composer.verdict and w.composer.verdict.ok
    )
    w.composer.submit()
    await until(lambda: w.result.state.text() == "Success")
    await settle(app)
    shot(w, out, "05-result")

    w.tools.select("create_alert")
    w.tools.compose.click()
    w.composer.set_args({"symbol": "ACME", "price": 250, "direction": "above"})
    await until(lambda: w.composer.send.isEnabled())
    req = w.composer.submit()
    assert req is not None
    await until(
        lambda: (
            (ex := controller.execution(w.current_key or "", req.request_id)) is not None
            and ex.state == ExecState.NEEDS_RESOLUTION
        )
    )
    w.result.launch.click()
    await until(lambda: w.confirmation_dialog is not None and w.confirmation_dialog.isVisible())
    await settle(app)
    shot(w.confirmation_dialog, out, "06-confirmation-dialog")
    w.confirmation_dialog.approve.click()
    await until(lambda: w.result.state.text() == "Success")
    await settle(app)
    shot(w, out, "07-confirmation-approved")

    w.tools.select("sync_watchlist")
    w.tools.compose.click()
    w.composer.set_args({"symbols": ["ACME", "GLOBX", "INITECH", "UMBRL", "STARK"], "step_ms": 700})
    await until(lambda: w.composer.send.isEnabled())
    w.composer.submit()
    await until(lambda: w.operations.model.rowCount() == 1)
    await asyncio.sleep(1.6)
    w.tabs.setCurrentIndex(3)
    await settle(app)
    shot(w, out, "08-operations")
    await until(lambda: w.operations.model.rows[0].final, 20)

    w.tools.select("export_history")
    w.tools.compose.click()
    w.composer.set_args({"rows": 5000})
    await until(lambda: w.composer.send.isEnabled())
    w.composer.submit()
    w.tabs.setCurrentIndex(2)
    await until(lambda: w.result.file_verdict.text().startswith(("✓", "✗")), 30)
    await settle(app)
    shot(w, out, "09-large-result")

    await controller.fault("virtual", "corrupt_digest", package="com.example.pricealerts")
    w.composer.submit()
    await until(lambda: w.result.file_verdict.text().startswith("✗"), 30)
    await settle(app)
    shot(w, out, "10-large-result-corrupted")

    row = w.traffic.model.rowCount() - 1
    w.traffic.table.selectRow(row)
    await settle(app)
    shot(w, out, "11-traffic-detail")

    w.navigator.select("virtual", "unit_converter")
    await until(lambda: w.extension_view.host is not None and w.extension_view.host.functions)
    w.extension_view.select_function("convert_length")
    w.extension_view.composer.set_args({"value": 5, "from": "km", "to": "mi"})
    await until(lambda: w.extension_view.composer.send.isEnabled())
    w.extension_view.composer.submit()
    await until(lambda: "via" in w.extension_view.outcome.text())
    await settle(app)
    shot(w, out, "12-extension")

    w.toggle_theme()
    w.navigator.select("virtual", decl.key)
    w.tabs.setCurrentIndex(0)
    await settle(app, 0.6)
    shot(w, out, "13-dark-theme")
    w.toggle_theme()

    w.close()
    await controller.close()
    await device.aclose()
    for t in spawner().tasks:
        t.cancel()


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else ROOT / "docs" / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    app = make_app(argv[:1])
    theme.apply_theme(app, "light")
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with tempfile.TemporaryDirectory(prefix="cetp-shots-") as tmp, loop:
        loop.run_until_complete(drive(app, out, Path(tmp)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
