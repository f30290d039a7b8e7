#!/usr/bin/env python3
"""Device screen pane: frame rate, CPU cost and the longest UI-thread stall while it runs.

The pane shows the virtual device's screen (a confirmation is up, so every frame is the
full 360×640 confirmation screen) through the real relay protocol over a socketpair, for
DURATION seconds at each frame rate. A 5 ms "heartbeat" timer on the UI thread measures how
late the loop runs: the longest lateness is the worst stall a person would feel. Two frame
sources: the virtual device's own (cached PNG when nothing changed: most frames are not
decoded) and a phone-sized 1080×2400 frame that changes every time (every frame decoded and
scaled), the worst case.

Prints figures; not a timed test.  .venv/bin/python benchmarks/screen_pane.py [SECONDS]
"""

from __future__ import annotations

import asyncio
import io
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import qasync  # noqa: E402
from PySide6.QtCore import QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from inspector.ui import workers  # noqa: E402
from inspector.ui.screen_pane import ScreenPane  # noqa: E402


class PhoneSized:
    """A 1080×2400 frame that changes on every capture (a video playing, say)."""

    def __init__(self) -> None:
        from PIL import Image, ImageDraw

        self.frames = []
        for i in range(8):
            img = Image.new("RGB", (1080, 2400), (20 * i, 40, 90))
            ImageDraw.Draw(img).rectangle((100, 200 + 50 * i, 900, 600 + 50 * i),
                                          fill=(240, 240, 240))
            out = io.BytesIO()
            img.save(out, format="PNG", compress_level=1)
            self.frames.append(out.getvalue())
        self.i = 0

    async def capture(self) -> bytes:
        self.i += 1
        await asyncio.sleep(0.01)  # an adb round trip, in effect
        return self.frames[self.i % len(self.frames)]

    async def send_input(self, kind: str, **args: object) -> tuple[str, None]:
        return "", None


async def measure(pane: ScreenPane, source: object, fps: float, seconds: float) -> dict:
    pane.timer.setInterval(max(50, int(1000 / fps)))
    pane.fps = fps
    pane.set_source(source, "bench")
    lateness: list[float] = []
    expected = [time.perf_counter() + 0.005]

    def beat() -> None:
        now = time.perf_counter()
        lateness.append(max(0.0, now - expected[0]))
        expected[0] = now + 0.005

    hb = QTimer()
    hb.setInterval(5)
    hb.timeout.connect(beat)
    frames0, caps0 = pane.frames, pane.captures
    cpu0, wall0 = time.process_time(), time.perf_counter()
    pane.show()
    hb.start()
    await asyncio.sleep(seconds)
    hb.stop()
    pane.hide()
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    await asyncio.sleep(0.2)
    return {
        "fps_target": fps,
        "captures_per_s": (pane.captures - caps0) / wall,
        "frames_shown_per_s": (pane.frames - frames0) / wall,
        "cpu_percent": 100.0 * cpu / wall,
        "max_stall_ms": 1000.0 * max(lateness or [0.0]),
        "p99_stall_ms": 1000.0 * sorted(lateness)[int(len(lateness) * 0.99)] if lateness else 0,
    }


async def main(seconds: float) -> None:
    from inspector.consumer.engine import ProviderSession
    from inspector.session.device_screen import RelayScreen
    from inspector.virtual import VirtualDevice
    from inspector.virtual.inprocess import connect_virtual_device

    device = VirtualDevice()
    client = await connect_virtual_device(device)
    ps = ProviderSession(client, "com.example.pricealerts.clawseed.tools",
                         package="com.example.pricealerts")
    await ps.negotiate()
    created = await ps.execute_tool("create_alert", {"symbol": "ACME", "price": 101.25})
    ex = await ps.execute_tool("delete_alert", {"alert_id": created.value["alert_id"]})
    launch = asyncio.ensure_future(ps.launch_resolution(ex))  # the confirmation stays up
    while not device.pending_confirmations:
        await asyncio.sleep(0.01)

    class Link:  # RelayScreen over the plain client
        screencap = client.screencap
        input = client.input

    pane = ScreenPane()
    pane.resize(360, 700)
    idle_cpu0, idle_wall0 = time.process_time(), time.perf_counter()
    await asyncio.sleep(1.0)  # hidden: nothing should run
    idle = 100.0 * (time.process_time() - idle_cpu0) / (time.perf_counter() - idle_wall0)
    print(f"hidden pane: {idle:.1f} % CPU (paused)")
    rows = []
    for name, source in (("virtual device 360x640", RelayScreen(Link())),  # type: ignore[arg-type]
                         ("phone-sized 1080x2400, changing", PhoneSized())):
        for fps in (2.0, 4.0, 10.0):
            r = await measure(pane, source, fps, seconds)
            rows.append((name, r))
            print(f"{name:34} target {fps:4.0f} fps: {r['captures_per_s']:5.1f} captures/s, "
                  f"{r['frames_shown_per_s']:5.1f} frames shown/s, {r['cpu_percent']:5.1f} % "
                  f"CPU, UI stall max {r['max_stall_ms']:5.1f} ms (p99 "
                  f"{r['p99_stall_ms']:4.1f} ms)")
    worst = max(r["max_stall_ms"] for _, r in rows)
    print(f"worst UI-thread stall: {worst:.1f} ms ({'OK' if worst <= 50 else 'OVER'} the "
          "50 ms budget)")
    device.answer(next(iter(device.pending_confirmations)), False)
    await launch
    await client.close()
    await device.aclose()
    workers.shutdown()


if __name__ == "__main__":
    secs = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    app = QApplication(sys.argv)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        loop.run_until_complete(main(secs))
