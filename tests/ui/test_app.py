"""The application shell as people start it: common options honoured, Ctrl+C quits."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from argparse import Namespace
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from inspector.relay.server import close_in_process_servers
from inspector.tasks import spawn
from inspector.ui.app import READY_LINE, device_manager
from inspector.ui.controller import Controller
from inspector.ui.main_window import MainWindow

pytestmark = pytest.mark.gui

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = Path(__file__).parent / "plugins" / "evolving_tools.py"


def _window(qtbot, tmp_path: Path, options: Namespace, *, autostart: bool = True):
    controller = Controller(device_manager(options))
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(controller, settings, autostart=autostart)
    window.confirm_close = lambda _running: True
    qtbot.addWidget(window)
    window.show()
    return window


def _close(qtbot, window: MainWindow) -> None:
    window.force_close()

    async def down() -> None:
        await window.controller.close()
        await close_in_process_servers()

    task = spawn(down(), "test-app-close")
    qtbot.waitUntil(task.done, timeout=10_000)


def test_virtual_plugin_and_state_options_reach_the_window(qtbot, qloop, tmp_path, monkeypatch):
    monkeypatch.setenv("CETP_INSPECTOR_NO_ADB", "1")
    opts = Namespace(virtual_plugin=[str(PLUGIN)], virtual_state=str(tmp_path / "state"),
                     virtual_bundle=[], relay_socket=None, token=None, device=None)
    w = _window(qtbot, tmp_path, opts)
    try:
        qtbot.waitUntil(lambda: (d := w.controller.discovery("virtual")) is not None
                        and any(x.package == "com.example.evolving" for x in d.cetp),
                        timeout=15_000)
        assert (tmp_path / "state").is_dir()
    finally:
        _close(qtbot, w)


def test_device_option_connects_that_device_and_says_why_not(qtbot, qloop, tmp_path,
                                                             monkeypatch):
    monkeypatch.setenv("CETP_INSPECTOR_NO_ADB", "1")
    opts = Namespace(virtual_plugin=[], virtual_state=None, virtual_bundle=[],
                     relay_socket=None, token=None, device="emulator-5554")
    w = _window(qtbot, tmp_path, opts, autostart=False)
    try:
        w.initial_serial = opts.device
        w.start()
        qtbot.waitUntil(lambda: w.last_error.startswith("Connecting to emulator-5554 failed"),
                        timeout=15_000)
        assert w.current_serial == "emulator-5554"
    finally:
        _close(qtbot, w)


def test_ctrl_c_in_the_terminal_quits_cleanly(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path),
               XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_DATA_HOME=str(tmp_path / "data"),
               XDG_STATE_HOME=str(tmp_path / "state"), CETP_INSPECTOR_NO_ADB="1")
    proc = subprocess.Popen([sys.executable, "-m", "inspector.cli"], cwd=ROOT, env=env,
                            stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        seen = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # a line-by-line wait for the ready line
            line = proc.stderr.readline()
            if not line:
                break
            seen.append(line)
            if READY_LINE in line:
                break
        assert any(READY_LINE in x for x in seen), "".join(seen)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = "".join(seen) + err
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
