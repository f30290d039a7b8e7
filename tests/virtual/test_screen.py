"""The virtual device's screen: frames as PNG, confirmations answered by tapping."""

from __future__ import annotations

import asyncio
import io
from typing import Any

import pytest
from PIL import Image

from inspector.protocol.bundle import Bundle, Int
from inspector.relay.api import BAD_ARGS, RelayError
from inspector.virtual.app import ConfirmationScreen, PendingActivity
from inspector.virtual.device import VirtualDevice
from inspector.virtual.screen import HEIGHT, WIDTH
from tests.virtual.phones import FakeConnection

PRICE = "com.example.pricealerts"


async def op(device: VirtualDevice, name: str, **args: Any) -> Bundle:
    return await device.handle(name, Bundle(args), FakeConnection())


def image(b: Bundle) -> Image.Image:
    return Image.open(io.BytesIO(bytes(b["png"])))


async def confirm(device: VirtualDevice, title: str = "Delete price alert") -> asyncio.Task[bool]:
    async def on_result(ok: bool) -> tuple[int, Bundle | None]:
        return -1, None

    screen = ConfirmationScreen(title=title, target="Price Alerts", action="delete_alert",
                                parameters={"alert_id": "al_1\u202e"},
                                consequences="Deletes the alert permanently")
    act = PendingActivity(PRICE, ".Confirm", screen, on_result)
    task = asyncio.ensure_future(device.show_confirmation(act))
    for _ in range(100):
        if device.pending_confirmations:
            break
        await asyncio.sleep(0)
    return task


async def test_home_screen_is_a_png_of_the_declared_size(device: VirtualDevice) -> None:
    r = await op(device, "screencap")
    img = image(r)
    assert (img.width, img.height) == (int(r["width"]), int(r["height"])) == (WIDTH, HEIGHT)
    again = await op(device, "screencap")
    assert again["png"] == r["png"] and device.screen.frames_encoded == 1  # cached


async def test_tapping_approve_answers_the_confirmation(device: VirtualDevice) -> None:
    task = await confirm(device)
    shot = await op(device, "screencap")
    assert device.screen.frames_encoded == 1 and not task.done()
    approve = next(b for b in device.screen.buttons if b.name == "approve")
    # the button is really drawn there: its centre is the accent colour
    px = image(shot).convert("RGB").getpixel(((approve.x0 + approve.x1) // 2, approve.y0 + 4))
    assert px == (21, 101, 192)
    miss = await op(device, "input", kind="tap", x=Int(5), y=Int(300))
    assert miss["handled"] is False and not task.done()
    hit = await op(device, "input", kind="tap", x=Int(approve.x0 + 5), y=Int(approve.y0 + 5))
    assert hit["result"] == "approve" and hit["confirmation_id"]
    assert await task is True
    assert device.pending_confirmations == {}


async def test_back_denies_and_deny_button_denies(device: VirtualDevice) -> None:
    task = await confirm(device)
    r = await op(device, "input", kind="key", key="BACK")
    assert r["result"] == "deny" and await task is False
    task = await confirm(device)
    await op(device, "screencap")
    deny = next(b for b in device.screen.buttons if b.name == "deny")
    await op(device, "input", kind="tap", x=Int(deny.x0 + 3), y=Int(deny.y0 + 3))
    assert await task is False


async def test_extension_activity_is_shown_and_text_typed(device: VirtualDevice) -> None:
    before = (await op(device, "screencap"))["png"]
    device.screen.activity_started("com.example.ext", "com.example.ext.MainActivity")
    shown = (await op(device, "screencap"))["png"]
    assert shown != before
    r = await op(device, "input", kind="text", text="hello")
    assert r["result"] == "typed" and device.screen.state.typed == "hello"
    await op(device, "input", kind="key", key="HOME")
    assert device.screen.state.activity is None


@pytest.mark.parametrize("args", [
    {}, {"kind": "tap"}, {"kind": "tap", "x": Int(-1), "y": Int(0)},
    {"kind": "tap", "x": "1", "y": Int(0)}, {"kind": "key", "key": "POWER"},
    {"kind": "text", "text": "x" * 2000}, {"kind": "swipe", "x": Int(1), "y": Int(1)}])
async def test_bad_input_is_bad_args(device: VirtualDevice, args: dict[str, Any]) -> None:
    with pytest.raises(RelayError) as exc:
        await op(device, "input", **args)
    assert exc.value.code == BAD_ARGS
