"""The Device screen pane: the phone's (or the virtual device's) screen in the window.

Frames come from the session's `DeviceScreen` (`inspector.session.device_screen`: the
virtual device's `screencap` op, or `adb exec-out screencap -p` on a phone) a few times a
second while the pane is visible — the timer stops when it is hidden — and the capture
never runs on the UI thread: the capture is awaited (adb work sits in an executor), and
PNG decoding and scaling run in a UI worker thread with Pillow, which releases the GIL; an
unchanged frame is not decoded at all. A click is forwarded as a tap, a drag as a swipe,
typing as text, Back / Home as keys (`input`). The pane opens by itself when a
confirmation is launched on the device, so the
person (or an audience) answers it on the device's own screen.
"""

from __future__ import annotations

import io
import logging
import time
from typing import Any

from PySide6.QtCore import QPoint, QRect, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QImage, QKeyEvent, QMouseEvent, QPixmap
from PySide6.QtWidgets import (
    QDockWidget,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from inspector.tasks import spawn
from inspector.ui import workers
from inspector.ui.text import shrinkable

log = logging.getLogger(__name__)

DEFAULT_FPS = 4.0
TAP_SLOP_PX = 8
MAX_FRAME_PIXELS = 4096 * 4096  # a frame bigger than any phone screen is refused
MAX_STATUS = 200


def decode_scaled(png: bytes, width: int, height: int) -> tuple[bytes, int, int, int, int]:
    """PNG bytes → RGB pixels scaled to fit (width, height): (pixels, w, h, frame w, frame h).

    Runs in a worker thread with Pillow, which releases the GIL while it decodes and
    scales (QImage.fromData holds it: ~90 ms for a 1080×2400 frame, measured, a stall the
    UI thread would feel). Only the small scaled image crosses to the UI thread."""
    from PIL import Image, UnidentifiedImageError

    try:
        im = Image.open(io.BytesIO(png))
        if im.format != "PNG":
            raise ValueError(f"not a PNG frame ({im.format})")
        if im.width * im.height > MAX_FRAME_PIXELS:
            raise ValueError(f"frame too large ({im.width}×{im.height})")
        fw, fh = im.size
        im = im.convert("RGB")
    except (UnidentifiedImageError, OSError) as exc:
        raise ValueError(f"not a PNG frame ({len(png)} bytes): {exc}") from None
    im.thumbnail((max(1, width), max(1, height)), Image.Resampling.BILINEAR, reducing_gap=2.0)
    return im.tobytes(), im.width, im.height, fw, fh


def to_image(pixels: bytes, w: int, h: int) -> QImage:
    """RGB pixels → a QImage that owns its memory (cheap for a pane-sized frame)."""
    return QImage(pixels, w, h, 3 * w, QImage.Format.Format_RGB888).copy()


class ScreenView(QLabel):
    """Shows frames; turns mouse and keys into device coordinates and input."""

    tapped = Signal(int, int)
    swiped = Signal(int, int, int, int)
    typed = Signal(str)
    keyPressed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("deviceScreen")
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setMinimumSize(200, 300)  # a 700-px-high screen keeps room (issue 14)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.frame_size = QSize(0, 0)  # the device's pixels
        self._press: QPoint | None = None

    def shown_rect(self) -> QRect:
        pm = self.pixmap()
        if pm is None or pm.isNull():
            return QRect()
        x = (self.width() - pm.width()) // 2
        y = (self.height() - pm.height()) // 2
        return QRect(x, y, pm.width(), pm.height())

    def to_device(self, p: QPoint) -> tuple[int, int] | None:
        """A point on the widget → device pixels (None outside the frame)."""
        r = self.shown_rect()
        if r.isEmpty() or not r.contains(p) or self.frame_size.isEmpty():
            return None
        x = (p.x() - r.x()) * self.frame_size.width() // r.width()
        y = (p.y() - r.y()) * self.frame_size.height() // r.height()
        return x, y

    def mousePressEvent(self, ev: QMouseEvent) -> None:
        if ev.button() == Qt.MouseButton.LeftButton:
            self._press = ev.position().toPoint()
        self.setFocus()
        super().mousePressEvent(ev)

    def mouseReleaseEvent(self, ev: QMouseEvent) -> None:
        start, self._press = self._press, None
        if start is None or ev.button() != Qt.MouseButton.LeftButton:
            return
        end = ev.position().toPoint()
        a, b = self.to_device(start), self.to_device(end)
        if a is None:
            return
        if (end - start).manhattanLength() <= TAP_SLOP_PX or b is None:
            self.tapped.emit(*a)
        else:
            self.swiped.emit(a[0], a[1], b[0], b[1])

    def keyPressEvent(self, ev: QKeyEvent) -> None:
        key = ev.key()
        if key == Qt.Key.Key_Backspace:
            self.keyPressed.emit("DEL")
        elif key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.keyPressed.emit("ENTER")
        elif key == Qt.Key.Key_Escape:
            self.keyPressed.emit("BACK")
        elif ev.text() and ev.text().isprintable():
            self.typed.emit(ev.text())
        else:
            super().keyPressEvent(ev)


class ScreenPane(QWidget):
    """The device's screen, live while visible (see the module docstring)."""

    confirmationAnswered = Signal(str, bool)  # answered by a tap on the screen
    frameShown = Signal(int)  # frames shown so far

    def __init__(self, parent: QWidget | None = None, *, fps: float = DEFAULT_FPS) -> None:
        super().__init__(parent)
        self.setObjectName("screenPane")
        self.source: Any = None
        self.fps = fps
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        self.title = QLabel("No device")
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        shrinkable(self.title)  # a device's long name must not widen the window (issue 14)
        lay.addWidget(self.title)
        self.view = ScreenView()
        self.view.setText("The device's screen shows here while this pane is open.")
        lay.addWidget(self.view, 1)
        row = QHBoxLayout()
        self.back = QPushButton("Back")
        self.back.setObjectName("screenBack")
        self.home = QPushButton("Home")
        self.home.setObjectName("screenHome")
        row.addWidget(self.back)
        row.addWidget(self.home)
        lay.addLayout(row)
        self.status = QLabel("")
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setProperty("role", "muted")
        self.status.setWordWrap(True)
        shrinkable(self.status)  # a device's error text may be long and without spaces
        lay.addWidget(self.status)

        self.timer = QTimer(self)
        self.timer.setInterval(max(50, int(1000 / fps)))
        self.timer.timeout.connect(self._tick)
        self.back.clicked.connect(lambda: self.send("key", key="BACK"))
        self.home.clicked.connect(lambda: self.send("key", key="HOME"))
        self.view.tapped.connect(lambda x, y: self.send("tap", x=x, y=y))
        self.view.swiped.connect(
            lambda x, y, x2, y2: self.send("swipe", x=x, y=y, x2=x2, y2=y2))
        self.view.typed.connect(lambda t: self.send("text", text=t))
        self.view.keyPressed.connect(lambda k: self.send("key", key=k))
        self._busy = False
        self._last_png: bytes | None = None
        self.frames = 0  # frames shown
        self.captures = 0  # frames captured (shown or unchanged)
        self.errors = 0
        self.last_error = ""
        self.inputs: list[tuple[str, dict[str, Any]]] = []

    # --- binding ---------------------------------------------------------------------------
    def set_source(self, source: Any, title: str = "") -> None:
        """Show this device's screen (None: no screen available)."""
        self.source = source
        self._last_png = None
        self.title.setText(title[:MAX_STATUS] if source is not None
                           else "This device's screen is not available")
        if source is not None and self.isVisible():
            self._tick()

    @property
    def running(self) -> bool:
        return self.timer.isActive()

    def showEvent(self, ev: Any) -> None:
        super().showEvent(ev)
        self.timer.start()
        self._tick()

    def hideEvent(self, ev: Any) -> None:
        self.timer.stop()  # paused when hidden: no capture, no decode
        super().hideEvent(ev)

    # --- frames ------------------------------------------------------------------------------
    def _tick(self) -> None:
        if self._busy or self.source is None:
            return
        self._busy = True
        spawn(self._grab(), "screen-frame")

    async def _grab(self) -> None:
        try:
            png = await self.source.capture()
            self.captures += 1
            if png == self._last_png:
                return  # unchanged: nothing to decode
            size = self.view.size()
            pixels, w, h, fw, fh = await workers.run_in_thread(
                decode_scaled, png, size.width(), size.height())
            self._last_png = png
            self.view.frame_size = QSize(fw, fh)
            self.view.setPixmap(QPixmap.fromImage(to_image(pixels, w, h)))
            self.frames += 1
            self.status.setText(f"{fw}×{fh}  ·  {self.fps:g} fps  ·  frame {self.frames}")
            self.frameShown.emit(self.frames)
        except Exception as exc:  # a phone that went away, a locked secure screen …
            self.errors += 1
            self.last_error = f"{type(exc).__name__}: {exc}"[:MAX_STATUS]
            self.status.setText(f"no frame: {self.last_error} — retrying")
        finally:
            self._busy = False

    def resizeEvent(self, ev: Any) -> None:
        super().resizeEvent(ev)
        self._last_png = None  # re-scale the next frame to the new size

    # --- input --------------------------------------------------------------------------------
    def send(self, kind: str, **args: Any) -> None:
        if self.source is None:
            return
        self.inputs.append((kind, dict(args)))
        del self.inputs[:-100]
        spawn(self._send(kind, args), f"screen-input-{kind}")

    async def _send(self, kind: str, args: dict[str, Any]) -> None:
        try:
            result = await self.source.send_input(kind, **args)
        except Exception as exc:
            self.last_error = f"{type(exc).__name__}: {exc}"[:MAX_STATUS]
            self.status.setText(f"input failed: {self.last_error}")
            return
        if isinstance(result, tuple) and len(result) == 2 and result[1]:
            what, cid = result
            if what in ("approve", "deny"):
                self.confirmationAnswered.emit(str(cid), what == "approve")
        self._tick()  # show the effect at once


# --- the window hook (one call from MainWindow; issue 16) -----------------------------------
def install_screen_pane(window: Any, view_menu: QMenu) -> ScreenPane:
    """Add the Device screen dock to `window` (hidden until opened or a confirmation is
    launched), its View menu entry, and bind it to the current device's session."""
    from inspector.protocol.exchange import ExchangeKind, ExchangeStatus
    from inspector.session.device_screen import screen_for

    pane = ScreenPane()
    dock = QDockWidget("Device screen", window)
    dock.setObjectName("screenDock")
    dock.setWidget(pane)
    window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
    dock.hide()
    view_menu.addAction(dock.toggleViewAction())
    window.screen_pane, window.screen_dock = pane, dock
    c = window.controller

    def bind(serial: str | None) -> None:
        serial = serial or getattr(window, "current_serial", None) or "virtual"
        entry = c.device(serial)
        session = entry.session if entry is not None else None
        source = None
        if session is not None:
            source = screen_for(session, c.devices_manager.adb_device_getter(serial))
        pane.set_source(source, f"{serial} — {time.strftime('%H:%M')}")

    def open_for(serial: str | None) -> None:
        bind(serial)
        dock.show()
        dock.raise_()

    def on_exchange(ex: Any) -> None:
        if ex.kind == ExchangeKind.RESOLUTION and ex.status == ExchangeStatus.PENDING:
            open_for(ex.device or None)  # a confirmation is being launched on the device

    def answered(cid: str, approve: bool) -> None:
        c.answer(cid, approve)  # the dialog's pending answer, if one is open
        dlg = getattr(window, "confirmation_dialog", None)
        if dlg is not None and dlg.isVisible():
            dlg.close()

    c.exchangeRecorded.connect(on_exchange)
    pane.confirmationAnswered.connect(answered)
    dock.visibilityChanged.connect(lambda on: bind(None) if on and pane.source is None
                                   else None)
    return pane
