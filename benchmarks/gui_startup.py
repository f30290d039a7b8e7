#!/usr/bin/env python3
"""Window start-up to first paint (offscreen), and to "virtual device discovered".

Prints figures; not a timed test.  .venv/bin/python benchmarks/gui_startup.py [RUNS]
Each run is a fresh process so imports are counted as a user would feel them.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import os, sys, time, json, asyncio, tempfile
t0 = time.perf_counter()
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, sys.argv[1])
from PySide6.QtCore import QEvent, QObject, QSettings
import qasync
from inspector.ui.app import make_app
from inspector.ui.main_window import MainWindow
from inspector.ui.controller import Controller
from inspector.session.devices import DeviceManager, VirtualConfig
from inspector.virtual import VirtualDevice
from inspector.virtual.inprocess import connect_virtual_device
t_import = time.perf_counter()
app = make_app([])
loop = qasync.QEventLoop(app)
asyncio.set_event_loop(loop)
marks = {}

class FirstPaint(QObject):
    def eventFilter(self, obj, ev):
        if ev.type() == QEvent.Type.Paint and "paint" not in marks:
            marks["paint"] = time.perf_counter()
        return False

tmp = tempfile.mkdtemp()
device = VirtualDevice(os.path.join(tmp, "dev"))
async def connect():
    return await connect_virtual_device(device, events=True)
ctl = Controller(DeviceManager(VirtualConfig(), use_adb=False), connectors={"virtual": connect})
w = MainWindow(ctl, QSettings(os.path.join(tmp, "s.ini"), QSettings.Format.IniFormat))
f = FirstPaint()
w.installEventFilter(f)
w.show()
w.repaint()

async def main():
    while "paint" not in marks or ctl.discovery("virtual") is None:
        await asyncio.sleep(0.005)
    marks["discovered"] = time.perf_counter()

with loop:
    loop.run_until_complete(main())
print(json.dumps({"imports_ms": (t_import - t0) * 1000,
                  "first_paint_ms": (marks["paint"] - t0) * 1000,
                  "virtual_device_ready_ms": (marks["discovered"] - t0) * 1000}))
"""


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    rows = []
    for _ in range(runs):
        t = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(ROOT)], capture_output=True, text=True, timeout=120
        )
        if out.returncode != 0:
            print(out.stderr[-2000:], file=sys.stderr)
            return 1
        line = [x for x in out.stdout.splitlines() if x.startswith("{")][-1]
        r = json.loads(line)
        r["process_ms"] = (time.perf_counter() - t) * 1000
        rows.append(r)
    print(f"window start-up over {runs} fresh processes (offscreen, median):")
    for key, label in (
        ("imports_ms", "imports (PySide6, qasync, inspector)"),
        ("first_paint_ms", "start → first paint of the main window"),
        ("virtual_device_ready_ms", "start → virtual device discovered"),
    ):
        vals = [r[key] for r in rows]
        print(f"  {label:42s} {statistics.median(vals):8.1f} ms  (min {min(vals):.1f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
