"""A phone's screen over the real adb server (fake phone): screencap frames and input."""

from __future__ import annotations

import io

import adbutils
import pytest

from inspector.device.adb_server import AdbEndpoint
from inspector.device.errors import DeviceError
from inspector.device.screen import AdbScreen, input_command
from tests.device.fake_android_shell import android_of
from tests.device.fakephone import FakePhone


def png_bytes(w: int = 1080, h: int = 2400) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (w, h), "#224466").save(out, format="PNG")
    return out.getvalue()


def screen(endpoint: AdbEndpoint, phone: FakePhone) -> AdbScreen:
    client = adbutils.AdbClient(host=endpoint.host, port=endpoint.port)
    return AdbScreen(lambda: client.device(phone.serial))


async def test_screencap_returns_the_phones_png_byte_for_byte(
        adb_endpoint: AdbEndpoint, phone: FakePhone) -> None:
    frame = png_bytes() + b"\r\n\n\r"  # trailing bytes that a text pipe would mangle
    android_of(phone).screen_png = lambda: frame
    assert await screen(adb_endpoint, phone).capture() == frame


async def test_something_that_is_not_a_png_is_refused(
        adb_endpoint: AdbEndpoint, phone: FakePhone) -> None:
    android_of(phone).screen_png = lambda: b"screencap: permission denied\n"
    with pytest.raises(DeviceError) as exc:
        await screen(adb_endpoint, phone).capture()
    assert exc.value.code == "BAD_FRAME" and "not return a PNG" in exc.value.message


async def test_taps_swipes_text_and_keys_reach_input(
        adb_endpoint: AdbEndpoint, phone: FakePhone) -> None:
    s = screen(adb_endpoint, phone)
    await s.send_input("tap", x=540, y=2100)
    await s.send_input("swipe", x=540, y=2000, x2=540, y2=400, duration_ms=150)
    await s.send_input("text", text="hello world")
    await s.send_input("key", key="BACK")
    assert android_of(phone).inputs == [
        ["tap", "540", "2100"], ["swipe", "540", "2000", "540", "400", "150"],
        ["text", "hello%sworld"], ["keyevent", "KEYCODE_BACK"]]


def test_input_commands_are_checked() -> None:
    assert input_command("text", text="it's $HOME") == "input text 'it'\"'\"'s%s$HOME'"
    for kind, args in (("tap", {"x": -1, "y": 0}), ("tap", {"x": "1; reboot", "y": 0}),
                       ("key", {"key": "POWER"}), ("scroll", {})):
        with pytest.raises(ValueError):
            input_command(kind, **args)
