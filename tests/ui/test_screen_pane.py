"""The Device screen pane: the virtual device's screen in the window, answered by tapping."""

from __future__ import annotations

import io

import pytest
from PySide6.QtCore import QPoint, Qt

from inspector.consumer.execution import ExecState
from inspector.ui.screen_pane import ScreenPane
from tests.ui.fixtures import Harness

pytestmark = pytest.mark.gui


def widget_point(pane: ScreenPane, x: int, y: int) -> QPoint:
    """Device pixel → a point on the pane's view (where a person would click)."""
    r = pane.view.shown_rect()
    fs = pane.view.frame_size
    return QPoint(r.x() + x * r.width() // fs.width(), r.y() + y * r.height() // fs.height())


def test_approve_a_confirmation_by_tapping_the_virtual_screen(harness: Harness) -> None:
    harness.open_provider()
    w = harness.window
    pane = w.screen_pane
    assert not w.screen_dock.isVisible()
    harness.compose("create_alert", {"symbol": "ACME", "price": 12.5})
    rid = harness.send()
    harness.wait(lambda: (ex := harness.execution(rid)) is not None
                 and ex.state == ExecState.NEEDS_RESOLUTION)
    w.result.launch.click()
    # the pane opens by itself and shows the provider's confirmation screen
    harness.wait(lambda: w.screen_dock.isVisible() and pane.running)
    harness.wait(lambda: bool(harness.device.pending_confirmations))
    shown = pane.frames
    harness.wait(lambda: pane.frames > shown and bool(harness.device.screen.buttons))
    approve = next(b for b in harness.device.screen.buttons if b.name == "approve")
    center = widget_point(pane, (approve.x0 + approve.x1) // 2, (approve.y0 + approve.y1) // 2)
    w.screen_dock.grab().save("/tmp/i16_screen_pane.png")
    w.grab().save("/tmp/i16_window_screen.png")
    harness.qtbot.mouseClick(pane.view, Qt.MouseButton.LeftButton, pos=center)
    harness.wait(lambda: harness.execution(rid).state == ExecState.SUCCEEDED, timeout=15_000)
    assert pane.inputs[-1][0] == "tap"
    assert harness.device.screen.state.events[-1].startswith("tap ")
    # the dialog that asked the same question is gone: the screen answered it
    harness.wait(lambda: w.confirmation_dialog is None or not w.confirmation_dialog.isVisible())
    harness.wait(lambda: w.result.state.text() == "Success")


class FakeScreen:
    """A screen that counts captures and records input."""

    def __init__(self, png: bytes) -> None:
        self.png = png
        self.captures = 0
        self.sent: list[tuple[str, dict]] = []

    async def capture(self) -> bytes:
        self.captures += 1
        return self.png

    async def send_input(self, kind: str, **args: object) -> tuple[str, None]:
        self.sent.append((kind, args))
        return "", None


def png(w: int = 100, h: int = 200, color: str = "#336699") -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (w, h), color).save(out, format="PNG")
    return out.getvalue()


def test_pane_pauses_when_hidden_and_skips_unchanged_frames(qtbot, qloop) -> None:
    pane = ScreenPane(fps=20)
    qtbot.addWidget(pane)
    source = FakeScreen(png())
    pane.set_source(source, "fake")
    assert not pane.running  # not shown yet: no capture at all
    assert source.captures == 0
    pane.resize(300, 500)
    pane.show()
    qtbot.waitUntil(lambda: pane.frames == 1 and source.captures >= 4)
    assert pane.frames == 1  # the same frame again is captured but not decoded
    assert pane.view.frame_size.width() == 100
    pane.hide()
    assert not pane.running
    n = source.captures
    qtbot.wait(300)  # a hidden pane captures nothing (this wait is the point of the test)
    assert source.captures <= n + 1  # at most the one already in flight
    source.png = png(color="#993366")
    pane.show()
    qtbot.waitUntil(lambda: pane.frames == 2)


def test_clicks_drags_typing_and_keys_are_forwarded(qtbot, qloop) -> None:
    pane = ScreenPane(fps=10)
    qtbot.addWidget(pane)
    source = FakeScreen(png(100, 200))
    pane.set_source(source, "fake")
    pane.resize(300, 500)
    pane.show()
    qtbot.waitUntil(lambda: pane.frames == 1)
    view = pane.view
    qtbot.mouseClick(view, Qt.MouseButton.LeftButton, pos=widget_point(pane, 50, 100))
    qtbot.waitUntil(lambda: len(source.sent) == 1)
    kind, args = source.sent[0]
    assert kind == "tap" and abs(args["x"] - 50) <= 1 and abs(args["y"] - 100) <= 1
    a, b = widget_point(pane, 50, 180), widget_point(pane, 50, 20)
    qtbot.mousePress(view, Qt.MouseButton.LeftButton, pos=a)
    qtbot.mouseRelease(view, Qt.MouseButton.LeftButton, pos=b)
    qtbot.waitUntil(lambda: len(source.sent) == 2)
    kind, args = source.sent[1]
    assert kind == "swipe" and args["y"] > 150 and args["y2"] < 50
    qtbot.keyClicks(view, "hi")
    qtbot.keyClick(view, Qt.Key.Key_Backspace)
    pane.back.click()
    pane.home.click()
    qtbot.waitUntil(lambda: len(source.sent) == 7)
    assert source.sent[2:] == [("text", {"text": "h"}), ("text", {"text": "i"}),
                               ("key", {"key": "DEL"}), ("key", {"key": "BACK"}),
                               ("key", {"key": "HOME"})]
    # outside the frame (the letterbox) nothing is sent
    qtbot.mouseClick(view, Qt.MouseButton.LeftButton, pos=QPoint(1, 1))
    qtbot.wait(50)
    assert len(source.sent) == 7


def test_a_failing_capture_is_reported_and_retried(qtbot, qloop) -> None:
    class Broken(FakeScreen):
        async def capture(self) -> bytes:
            self.captures += 1
            raise RuntimeError("device unplugged")

    pane = ScreenPane(fps=20)
    qtbot.addWidget(pane)
    src = Broken(b"")
    pane.set_source(src, "broken")
    pane.show()
    qtbot.waitUntil(lambda: src.captures >= 2)
    assert "device unplugged" in pane.status.text() and "retrying" in pane.status.text()
    assert pane.frames == 0
