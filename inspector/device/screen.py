"""A phone's screen over adb: frames from `screencap -p`, input through `input`.

`adb exec-out screencap -p` writes one PNG of the current screen to stdout
(frameworks/base/cmds/screencap); `exec:` (not `shell:`) keeps the bytes binary-safe on
every Android release (old `shell:` pipes translated LF to CRLF). `input tap X Y`,
`input swipe X1 Y1 X2 Y2 MS`, `input text TEXT` and `input keyevent KEY`
(frameworks/base/cmds/input) forward the person's clicks, drags, typing and Back/Home.
Every call is blocking adbutils work and runs through `run_blocking` (an executor with a
timeout), never on the event loop. A frame is at most `MAX_FRAME_BYTES`.
"""

from __future__ import annotations

import shlex
from typing import Any

from inspector.device.blocking import run_blocking
from inspector.device.errors import DeviceError

MAX_FRAME_BYTES = 32 * 1024 * 1024
KEYCODES = {"BACK": "KEYCODE_BACK", "HOME": "KEYCODE_HOME", "ENTER": "KEYCODE_ENTER",
            "DEL": "KEYCODE_DEL"}
MAX_TEXT = 1000
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _exec_out(device: Any, command: str, timeout: float) -> bytes:
    """`adb exec-out COMMAND` (blocking): the raw stdout bytes, bounded."""
    c = device.open_transport(timeout=timeout)
    try:
        c.send_command("exec:" + command)
        c.check_okay()
        out = bytearray()
        sock = c.conn
        sock.settimeout(timeout)
        while True:
            chunk = sock.recv(256 * 1024)
            if not chunk:
                break
            out += chunk
            if len(out) > MAX_FRAME_BYTES:
                raise DeviceError("TOO_LARGE", f"`{command}` sent more than "
                                  f"{MAX_FRAME_BYTES} bytes", "This is not a screenshot.")
        return bytes(out)
    finally:
        c.close()


def input_command(kind: str, **args: Any) -> str:
    """The `input …` shell command for a tap / swipe / text / key (arguments checked)."""
    def n(key: str) -> int:
        v = args.get(key)
        if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < 100_000:
            raise ValueError(f"{key} must be an int in 0…99999")
        return v

    if kind == "tap":
        return f"input tap {n('x')} {n('y')}"
    if kind == "swipe":
        ms = args.get("duration_ms", 200)
        ms = ms if isinstance(ms, int) and 1 <= ms <= 10_000 else 200
        return f"input swipe {n('x')} {n('y')} {n('x2')} {n('y2')} {ms}"
    if kind == "text":
        text = str(args.get("text", ""))[:MAX_TEXT]
        # `input text` reads %s as a space; quote for the device shell
        return "input text " + shlex.quote(text.replace(" ", "%s"))
    if kind == "key":
        code = KEYCODES.get(str(args.get("key")))
        if code is None:
            raise ValueError(f"key must be one of {', '.join(KEYCODES)}")
        return f"input keyevent {code}"
    raise ValueError("kind must be 'tap', 'swipe', 'text' or 'key'")


class AdbScreen:
    """The screen of one adb device (an adbutils device or a getter returning one)."""

    def __init__(self, device: Any, *, timeout: float = 10.0) -> None:
        self._device = device
        self.timeout = timeout

    def device(self) -> Any:
        return self._device() if callable(self._device) else self._device

    async def capture(self) -> bytes:
        data = await run_blocking(_exec_out, self.device(), "screencap -p", self.timeout,
                                  timeout=self.timeout + 2, what="adb exec-out screencap")
        if not data.startswith(PNG_MAGIC):
            raise DeviceError("BAD_FRAME", "screencap did not return a PNG "
                              f"({len(data)} bytes)", "Unlock the phone and retry; some "
                              "secure screens cannot be captured.")
        return data

    async def send_input(self, kind: str, **args: Any) -> str:
        cmd = input_command(kind, **args)
        await run_blocking(self.device().shell, cmd, timeout=self.timeout,
                           what="adb shell input")
        return cmd
