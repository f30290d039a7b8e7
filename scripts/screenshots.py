#!/usr/bin/env python3
"""Render the inspector's main screens offscreen into docs/screenshots/*.png.

Drives the real window against the in-process virtual device (no phone), the same way the
GUI tests do, and saves `grab()` images:  .venv/bin/python scripts/screenshots.py [OUT_DIR]

Small screens and HiDPI (issue 14): `--size 1024x700 --prefix small- --only 01,02,04,05,09,12,15`
renders a subset at that window size; run it with QT_SCALE_FACTOR=2 (and another prefix) for
200 % scaling — the images then have twice the pixels of the logical size.
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
from inspector.relay.api import RelayApi  # noqa: E402
from inspector.relay.server import close_in_process_servers  # noqa: E402
from inspector.session.devices import DeviceInfo, DeviceManager, VirtualConfig  # noqa: E402
from inspector.session.journal import list_sessions, read_journal  # noqa: E402
from inspector.tasks import spawner  # noqa: E402
from inspector.ui import theme  # noqa: E402
from inspector.ui.app import make_app  # noqa: E402
from inspector.ui.controller import Controller  # noqa: E402
from inspector.ui.main_window import MainWindow  # noqa: E402
from inspector.virtual import VirtualDevice  # noqa: E402
from inspector.virtual.inprocess import connect_virtual_device  # noqa: E402

SIZE = (1440, 900)
PREFIX = ""  # --prefix: names of the files written
ONLY: set[str] | None = None  # --only: screen numbers to write (all when None)
PLUGIN = ROOT / "tests" / "ui" / "plugins" / "evolving_tools.py"  # a tool list that changes


class ScriptedAdb:
    """An adb device list the script edits (the hot-plug screenshot); nothing connects."""

    def __init__(self) -> None:
        self.listed: list[DeviceInfo] = []

    async def list_devices(self) -> list[DeviceInfo]:
        return list(self.listed)

    async def connect_relay(self, serial: str) -> RelayApi:
        raise RuntimeError(f"{serial} is not usable")


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
    if ONLY is not None and name.split("-")[0] not in ONLY:
        return
    path = out / f"{PREFIX}{name}.png"
    widget.grab().save(str(path))
    print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")


async def drive(app: QApplication, out: Path, tmp: Path) -> None:
    device = VirtualDevice(tmp / "device")

    async def connect():
        return await connect_virtual_device(device, events=True)

    adb = ScriptedAdb()
    journals = tmp / "journals"
    controller = Controller(
        DeviceManager(VirtualConfig(), adb, use_adb=False),
        connectors={"virtual": connect},
        journal=True,
        journal_dir=journals,
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
    w.overview.caps["cancellation"].setChecked(False)  # an unticked box must stay visible
    await settle(app, 0.6)
    shot(w, out, "13-dark-theme")
    w.overview.caps["cancellation"].setChecked(True)
    w.toggle_theme()

    # the tool list changes between negotiations: the diff (added / removed / changed)
    device.load_plugin(PLUGIN)
    await until(lambda: any(x.package == "com.example.evolving"
                            for x in controller.discovery("virtual").cetp))
    evolving = next(x for x in controller.discovery("virtual").cetp
                    if x.package == "com.example.evolving")
    w.navigator.select("virtual", evolving.key)
    await until(lambda: (e := controller.entry(w.current_key or "")) is not None and e.loaded)
    first = w.tools.revision.text()
    w.overview.negotiate.click()
    await until(lambda: w.tools.revision.text() != first)
    w.tabs.setCurrentIndex(1)
    w.tools.select("get_quote")
    await settle(app)
    shot(w, out, "14-tools-revision-diff")

    # the conformance suite on the same session, with results
    w.navigator.select("virtual", decl.key)
    await until(lambda: w.current_key is not None and w.current_key.endswith(decl.key))
    w.tabs.setCurrentWidget(w.conformance_holder)
    panel = w.conformance_panel
    assert panel is not None
    await until(lambda: panel.plan is not None or panel.error is not None, 30)
    panel.use_preset()  # the reference scenarios, and the two mutations they need allowed
    for tool in ("create_alert", "sync_watchlist"):
        panel.permission(tool).setChecked(True)
    await until(lambda: panel.plan is not None and len(panel.plan.mutating_tools) == 2, 30)
    panel.confirm_mutations = lambda _tools: True
    panel.start()
    await until(lambda: panel.report is not None, 120)
    failing = [r for r in panel.report.results if not r.outcome.ok]
    panel.results.select((failing or panel.report.results)[0].check_id)
    await settle(app)
    shot(w, out, "15-conformance-results")

    # recorded sessions and a bug report made from this one
    sessions = w.show_sessions()
    assert sessions is not None
    sessions.resize(1100, 620)
    await until(lambda: sessions.model.rowCount() == 1)
    sessions.table.selectRow(0)  # its actions light up
    await settle(app)
    shot(sessions, out, "16-sessions")
    sessions.close()
    from inspector.session.bundle_file import create_bundle

    [session] = list_sessions(journals)
    bundle = create_bundle(tmp / "price-alerts-bug.cetpbundle", read_journal(session.path))
    viewer = w.open_bug_report(str(bundle))
    assert viewer is not None
    viewer.resize(1200, 760)
    await settle(app, 0.6)
    shot(viewer, out, "17-bug-report")
    viewer.close()

    # a phone plugged in that still waits for the USB-debugging prompt
    adb.listed = [DeviceInfo(
        serial="R58M12ABCDE", kind="adb", state="unauthorized", usable=False,
        message="accept the 'Allow USB debugging?' prompt on the phone, then press F5",
    )]
    await controller.refresh_devices()
    w.tabs.setCurrentIndex(0)
    w.navigator.select_device("R58M12ABCDE")  # says what to do instead of connecting
    await settle(app)
    shot(w, out, "18-device-unauthorized")

    w.close()
    await controller.close()
    await device.aclose()
    for t in spawner().tasks:
        t.cancel()
    await until(spawner().is_idle, 5)  # let cancelled tasks finish before the loop stops
    await close_in_process_servers()


def main(argv: list[str]) -> int:
    global SIZE, PREFIX, ONLY
    import argparse

    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("out", nargs="?", default=str(ROOT / "docs" / "screenshots"))
    p.add_argument("--size", default=f"{SIZE[0]}x{SIZE[1]}", help="window size WxH")
    p.add_argument("--prefix", default="", help="file name prefix")
    p.add_argument("--only", default="", help="comma-separated screen numbers (01,05,…)")
    a = p.parse_args(argv[1:])
    w, _, h = a.size.partition("x")
    SIZE, PREFIX = (int(w), int(h)), a.prefix
    ONLY = {x.strip() for x in a.only.split(",") if x.strip()} or None
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    app = make_app(argv[:1])
    app.setQuitOnLastWindowClosed(False)  # the loop must outlive the windows to shut down
    theme.apply_theme(app, "light")
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with tempfile.TemporaryDirectory(prefix="cetp-shots-") as tmp, loop:
        loop.run_until_complete(drive(app, out, Path(tmp)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
