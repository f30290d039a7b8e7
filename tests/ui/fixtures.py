"""The real window against an in-process virtual device, and helpers to drive it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from inspector.consumer.options import EngineOptions
from inspector.session.devices import AdbSource, DeviceManager, VirtualConfig
from inspector.tasks import spawn, spawner
from inspector.ui.controller import Controller
from inspector.ui.main_window import MainWindow
from inspector.virtual import VirtualDevice
from inspector.virtual.inprocess import connect_virtual_device

PRICEALERTS = "com.example.pricealerts"


@dataclass
class Harness:
    window: MainWindow
    device: VirtualDevice
    qtbot: object

    @property
    def controller(self) -> Controller:
        return self.window.controller

    def wait(self, predicate, timeout: int = 10_000) -> None:
        self.qtbot.waitUntil(predicate, timeout=timeout)

    def open_provider(self, package: str = PRICEALERTS) -> None:
        """Click the provider in the navigator and wait until it is loaded."""
        w = self.window
        self.wait(lambda: w.controller.discovery("virtual") is not None)
        d = w.controller.discovery("virtual")
        decl = next(x for x in d.cetp if x.package == package)
        assert w.navigator.select("virtual", decl.key)
        self.wait(lambda: (e := w.controller.entry(w.current_key or "")) is not None and e.loaded)

    def compose(self, tool: str, args: dict | None = None) -> None:
        w = self.window
        assert w.tools.select(tool)
        w.tools.compose.click()
        assert w.tabs.currentIndex() == 2
        assert w.composer.target is not None and w.composer.target.name == tool
        if args is not None:
            w.composer.set_args(args)
        self.wait(lambda: w.composer.verdict is not None and w.composer.send.isEnabled())

    def send(self) -> str:
        w = self.window
        w.composer.confirm = lambda _t, _x: True
        req = w.composer.submit()
        assert req is not None
        return req.request_id

    def execution(self, request_id: str):
        return self.controller.execution(self.window.current_key or "", request_id)

    def args(self) -> dict:
        return json.loads(self.window.composer.raw.toPlainText())


@pytest.fixture
def journal_dir(tmp_path: Path) -> Path | None:
    """Where the window journals its sessions; None = no journal (override per test)."""
    return None


@pytest.fixture
def adb_source() -> AdbSource | None:
    """The adb device layer the window lists devices from; None = virtual device only."""
    return None


@pytest.fixture
def harness(
    qtbot, qloop, tmp_path: Path, journal_dir: Path | None, adb_source: AdbSource | None
) -> Iterator[Harness]:
    device = VirtualDevice(tmp_path / "device")

    async def connect():
        return await connect_virtual_device(device, events=True)

    controller = Controller(
        DeviceManager(VirtualConfig(), adb_source, use_adb=False),
        EngineOptions(max_auto_wait_ms=2_000),
        connectors={"virtual": connect},
        journal=journal_dir is not None,
        journal_dir=journal_dir,
    )
    controller.virtual_device = lambda: device  # bug reports are served on this device
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(controller, settings)
    # qtbot closes its widgets before this fixture's teardown; a failed test may leave a
    # call running, and the real "close anyway?" box would then wait for a click forever
    window.confirm_close = lambda _running: True
    qtbot.addWidget(window)
    window.show()
    h = Harness(window, device, qtbot)
    h.wait(lambda: controller.discovery("virtual") is not None)
    yield h
    window.force_close()  # a test may leave a call running: no "close anyway?" question
    closing = spawn(controller.close(), "test-close")  # links first: no reconnects after
    qtbot.waitUntil(closing.done, timeout=10_000)
    for task in spawner().tasks:  # a test may leave a call or a poll running
        task.cancel()
    try:
        qtbot.waitUntil(spawner().is_idle, timeout=10_000)
    except Exception:
        names = [t.get_name() for t in spawner().tasks]
        raise AssertionError(f"background tasks did not end: {names}") from None
    spawn(device.aclose(), "test-device-close")
    qtbot.waitUntil(spawner().is_idle, timeout=10_000)
