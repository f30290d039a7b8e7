"""Picking and calling a tool whose schemas are hostile never stalls the UI thread for more
than 100 ms (issue 12): the composer validates in a worker thread, output validation runs
in one too, and both stop at the validation budget with a clear verdict."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from PySide6.QtCore import QTimer

from inspector.consumer.execution import ExecState
from inspector.protocol import schema as schemas
from tests.ui.fixtures import Harness

pytestmark = pytest.mark.gui

PLUGIN = Path(__file__).parent / "plugins" / "hostile_schemas.py"
HOSTILE = "com.example.hostileschemas"
MAX_STALL_MS = 100.0


class StallMeter:
    """Ticks every 5 ms on the UI thread; the longest gap between ticks is the worst stall."""

    def __init__(self) -> None:
        self.last = time.monotonic()
        self.worst_ms = 0.0
        self.timer = QTimer()
        self.timer.setInterval(5)
        self.timer.timeout.connect(self._tick)

    def _tick(self) -> None:
        now = time.monotonic()
        self.worst_ms = max(self.worst_ms, (now - self.last) * 1000)
        self.last = now

    def start(self) -> None:
        self.last = time.monotonic()
        self.worst_ms = 0.0
        self.timer.start()

    def stop(self) -> float:
        self.timer.stop()
        return self.worst_ms


def test_picking_and_calling_a_hostile_tool_never_stalls_the_ui(harness: Harness):
    w = harness.window
    harness.device.load_plugin(PLUGIN)
    harness.wait(lambda: any(d.package == HOSTILE
                             for d in harness.controller.discovery("virtual").cetp))
    harness.open_provider(HOSTILE)
    meter = StallMeter()
    meter.start()
    assert w.tools.select("get_quote")
    w.tools.compose.click()  # pre-fills the evil default; validation starts
    harness.wait(lambda: w.composer.verdict is not None
                 and any(schemas.TOO_COSTLY in i.message for i in w.composer.verdict.issues),
                 timeout=20_000)
    picked_ms = meter.stop()
    assert w.composer.send.isEnabled()  # the verdict informs; the user may still send

    meter.start()
    rid = harness.send()
    harness.wait(lambda: (ex := harness.execution(rid)) is not None
                 and ex.state == ExecState.SUCCEEDED and bool(ex.output_findings),
                 timeout=20_000)
    called_ms = meter.stop()
    ex = harness.execution(rid)
    print(f"worst UI-thread stall: picking {picked_ms:.0f} ms, calling {called_ms:.0f} ms")
    assert any(schemas.TOO_COSTLY in f.message for f in ex.output_findings if not f.ok)
    assert picked_ms < MAX_STALL_MS, f"UI thread stalled {picked_ms:.0f} ms picking the tool"
    assert called_ms < MAX_STALL_MS, f"UI thread stalled {called_ms:.0f} ms calling the tool"
