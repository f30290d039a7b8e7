"""The Device screen pane over the real adb server: a fake phone's frames, taps to `input`."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterator

import adbutils
import pytest
from PySide6.QtCore import Qt

from inspector.device.adb_server import AdbEndpoint, ensure_server, kill_server
from inspector.device.screen import AdbScreen
from inspector.ui.screen_pane import ScreenPane
from tests.device.conftest import phone  # noqa: F401  (fixture)
from tests.device.fake_android_shell import android_of
from tests.device.fakephone import FakePhone, free_port
from tests.device.test_screen import png_bytes
from tests.ui.test_screen_pane import widget_point

pytestmark = [pytest.mark.gui, pytest.mark.adb]


def _in_thread(coro_fn, *args):  # type: ignore[no-untyped-def]
    """asyncio.run in a thread of its own: the GUI tests' qasync loop counts as running."""
    out: list[object] = []
    t = threading.Thread(target=lambda: out.append(asyncio.run(coro_fn(*args))))
    t.start()
    t.join(60)
    return out[0] if out else None


@pytest.fixture(scope="module")
def adb_endpoint() -> Iterator[AdbEndpoint]:
    """tests/device's private adb server, started off the GUI loop."""
    old = os.environ.get("ANDROID_ADB_SERVER_PORT")
    endpoint = AdbEndpoint(port=free_port())
    os.environ["ANDROID_ADB_SERVER_PORT"] = str(endpoint.port)
    _in_thread(ensure_server, endpoint)
    try:
        yield endpoint
    finally:
        _in_thread(kill_server, endpoint)
        if old is None:
            os.environ.pop("ANDROID_ADB_SERVER_PORT", None)
        else:
            os.environ["ANDROID_ADB_SERVER_PORT"] = old


def test_phone_frames_are_shown_and_a_tap_reaches_input(
        qtbot, qloop, adb_endpoint: AdbEndpoint, phone: FakePhone) -> None:  # noqa: F811
    android = android_of(phone)
    android.screen_png = lambda: png_bytes(1080, 2400)
    client = adbutils.AdbClient(host=adb_endpoint.host, port=adb_endpoint.port)
    pane = ScreenPane(fps=5)
    qtbot.addWidget(pane)
    pane.set_source(AdbScreen(lambda: client.device(phone.serial)), phone.serial)
    pane.resize(320, 640)
    pane.show()
    qtbot.waitUntil(lambda: pane.frames == 1, timeout=10_000)
    assert (pane.view.frame_size.width(), pane.view.frame_size.height()) == (1080, 2400)
    qtbot.mouseClick(pane.view, Qt.MouseButton.LeftButton, pos=widget_point(pane, 540, 1200))
    qtbot.waitUntil(lambda: any(i[0] == "tap" for i in android.inputs), timeout=10_000)
    tap = next(i for i in android.inputs if i[0] == "tap")
    assert abs(int(tap[1]) - 540) < 10 and abs(int(tap[2]) - 1200) < 10
    pane.hide()
