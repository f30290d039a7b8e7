"""The virtual device's screen: what a phone would show, as a PNG, and the taps it accepts.

It draws the top-most confirmation screen a provider put up (its title, target, action,
parameters, consequences and the Deny / Approve buttons), else the last activity an
extension started, else a home screen listing the installed apps. `tap(x, y)` on a button
answers the confirmation exactly as `answer_confirmation` does, and the Back key denies it
(the default when a person leaves a confirmation Activity). Served by the relay ops
`screencap` and `input` (virtual device only, docs/relay-protocol.md §4.3), mirroring a
phone's `adb exec-out screencap -p` and `adb shell input` (frameworks/base/cmds/screencap,
frameworks/base/cmds/input).

No Qt here: Pillow draws and encodes (the device runs headless in the CLI and in tests).
Text on the screen is provider text: control characters are dropped and every string is
cut before it is drawn. A frame is re-encoded only when what is shown changed.
"""

from __future__ import annotations

import asyncio
import io
import itertools
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from inspector.protocol.bundle import Bundle, Int
from inspector.relay.api import BAD_ARGS, RelayError

if TYPE_CHECKING:
    from inspector.virtual.device import ConfirmationRequest, VirtualDevice

log = logging.getLogger(__name__)

WIDTH = 360
HEIGHT = 640
STATUS_H = 24
BUTTON_H = 48
MAX_TEXT = 300
MAX_TEXT_INPUT = 1000
KEYS = ("BACK", "HOME", "ENTER", "DEL")
BG = (250, 250, 252)
INK = (28, 30, 36)
MUTED = (96, 102, 112)
ACCENT = (21, 101, 192)
DANGER = (198, 40, 40)
BAR = (33, 37, 43)


def _clean(text: Any, limit: int = MAX_TEXT) -> str:
    s = str(text)[: limit * 2]
    s = "".join(ch if ch.isprintable() else " " for ch in s)
    return s if len(s) <= limit else s[: limit - 1] + "…"


@dataclass(frozen=True)
class Button:
    name: str
    x0: int
    y0: int
    x1: int
    y1: int

    def hit(self, x: int, y: int) -> bool:
        return self.x0 <= x < self.x1 and self.y0 <= y < self.y1


@dataclass
class ScreenState:
    """What is on screen besides confirmations (which the device keeps itself)."""

    activity: tuple[str, str] | None = None  # (package, component) of the last start
    typed: str = ""
    events: list[str] = field(default_factory=list)  # input the screen received (bounded)


class VirtualScreen:
    """The screen of one `VirtualDevice` (see the module docstring)."""

    def __init__(self, device: VirtualDevice) -> None:
        self.device = device
        self.state = ScreenState()
        self._version = itertools.count(1)
        self.version = next(self._version)
        self._png: tuple[tuple[Any, ...], bytes] | None = None
        self.buttons: list[Button] = []
        self.frames_encoded = 0

    # --- what is shown -----------------------------------------------------------------------
    def top_confirmation(self) -> ConfirmationRequest | None:
        pending = list(self.device.pending_confirmations.values())
        return pending[-1] if pending else None

    def activity_started(self, package: str, component: str) -> None:
        self.state.activity = (package, component)
        self.version = next(self._version)

    def _key(self) -> tuple[Any, ...]:
        top = self.top_confirmation()
        return (self.version, top.confirmation_id if top else None,
                tuple(sorted(self.device.apps)), time.strftime("%H:%M"))

    def png(self) -> bytes:
        """The current frame as PNG bytes (cached until the screen changes)."""
        key = self._key()
        if self._png is not None and self._png[0] == key:
            return self._png[1]
        data, buttons = render(self._snapshot())
        return self._keep(key, data, buttons)

    async def png_async(self) -> bytes:
        """`png()` with the drawing and encoding in a worker thread (Pillow releases the
        GIL there), so an embedded device never stalls the event loop it shares."""
        key = self._key()
        if self._png is not None and self._png[0] == key:
            return self._png[1]
        data, buttons = await asyncio.to_thread(render, self._snapshot())
        return self._keep(key, data, buttons)

    def _keep(self, key: tuple[Any, ...], data: bytes, buttons: list[Button]) -> bytes:
        self._png = (key, data)
        self.buttons = buttons
        self.frames_encoded += 1
        return data

    def _snapshot(self) -> Snapshot:
        """What to draw, copied on the loop (the drawing may run in another thread)."""
        return Snapshot(
            confirmation=self.top_confirmation(),
            activity=self.state.activity,
            typed=self.state.typed,
            apps=[(self.device.apps[p].label, p) for p in sorted(self.device.apps)[:20]],
        )

    # --- input --------------------------------------------------------------------------------
    def tap(self, x: int, y: int) -> str:
        """A tap at screen pixel (x, y); returns what it did ("approve", "deny" or "")."""
        self._note(f"tap {x} {y}")
        top = self.top_confirmation()
        if top is None:
            return ""
        self.png()  # buttons follow what is drawn
        for b in self.buttons:
            if b.hit(x, y):
                self.device.answer(top.confirmation_id, b.name == "approve")
                self.version = next(self._version)
                return b.name
        return ""

    def key(self, name: str) -> str:
        self._note(f"key {name}")
        top = self.top_confirmation()
        if name == "BACK" and top is not None:  # leaving a confirmation Activity denies it
            self.device.answer(top.confirmation_id, False)
            self.version = next(self._version)
            return "deny"
        if name in ("BACK", "HOME") and self.state.activity is not None:
            self.state.activity = None
            self.version = next(self._version)
            return "closed"
        return ""

    def text(self, text: str) -> str:
        self._note(f"text {len(text)} chars")
        self.state.typed = (self.state.typed + text)[-MAX_TEXT_INPUT:]
        self.version = next(self._version)
        return "typed"

    def _note(self, what: str) -> None:
        self.state.events.append(what)
        del self.state.events[:-100]

    # --- relay ops (§4.3) -----------------------------------------------------------------------
    async def op_screencap(self, args: Bundle) -> Bundle:
        return Bundle(png=await self.png_async(), width=Int(WIDTH), height=Int(HEIGHT),
                      version=Int(self.version & 0x7FFFFFFF))

    def op_input(self, args: Bundle) -> Bundle:
        kind = args.get("kind")

        def coord(key: str) -> int:
            v = args.get(key)
            if not isinstance(v, Int) or isinstance(v, bool) or not 0 <= v < 100_000:
                raise RelayError(BAD_ARGS, f"{key} must be an int in 0…99999")
            return int(v)

        top = self.top_confirmation()
        cid = top.confirmation_id if top is not None else ""
        if kind == "tap":
            did = self.tap(coord("x"), coord("y"))
        elif kind == "swipe":
            coords = [coord(k) for k in ("x", "y", "x2", "y2")]
            self._note("swipe " + " ".join(map(str, coords)))
            did = ""
        elif kind == "text":
            t = args.get("text")
            if not isinstance(t, str) or len(t) > MAX_TEXT_INPUT:
                raise RelayError(BAD_ARGS, f"text must be a String of at most {MAX_TEXT_INPUT}")
            did = self.text(t)
        elif kind == "key":
            k = args.get("key")
            if k not in KEYS:
                raise RelayError(BAD_ARGS, f"key must be one of {', '.join(KEYS)}")
            did = self.key(str(k))
        else:
            raise RelayError(BAD_ARGS, "kind must be 'tap', 'swipe', 'text' or 'key'")
        answered = did in ("approve", "deny")
        return Bundle(handled=bool(did), result=did,
                      confirmation_id=cid if answered else None)


@dataclass
class Snapshot:
    confirmation: Any
    activity: tuple[str, str] | None
    typed: str
    apps: list[tuple[str, str]]


def render(snap: Snapshot) -> tuple[bytes, list[Button]]:
    """Draw one frame (no device access: safe in a worker thread); PNG and buttons."""
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (WIDTH, HEIGHT), BG)
    d = ImageDraw.Draw(img)
    d.rectangle((0, 0, WIDTH, STATUS_H), fill=BAR)
    d.text((10, 5), time.strftime("%H:%M"), fill=(240, 240, 240), font=_font(13))
    d.text((WIDTH - 110, 5), "Virtual Device", fill=(200, 200, 200), font=_font(12))
    buttons: list[Button] = []
    if snap.confirmation is not None:
        buttons = _draw_confirmation(d, snap.confirmation)
    elif snap.activity is not None:
        _draw_activity(d, *snap.activity, typed=snap.typed)
    else:
        _draw_home(d, snap.apps)
    out = io.BytesIO()
    img.save(out, format="PNG", compress_level=1)
    return out.getvalue(), buttons


def _draw_confirmation(d: Any, req: ConfirmationRequest) -> list[Button]:
    y = STATUS_H + 16
    y = _wrapped(d, 16, y, _clean(req.title, 120), _font(20), INK, WIDTH - 32, 3)
    y = _wrapped(d, 16, y + 4, _clean(req.package, 120), _font(12), MUTED, WIDTH - 32, 1)
    y += 10
    for label, value in (("Target", req.target), ("Action", req.action)):
        d.text((16, y), label.upper(), fill=MUTED, font=_font(11))
        y = _wrapped(d, 16, y + 14, _clean(value), _font(15), INK, WIDTH - 32, 2) + 6
    if req.parameters:
        d.text((16, y), "PARAMETERS", fill=MUTED, font=_font(11))
        y += 14
        for k, v in list(req.parameters.items())[:8]:
            y = _wrapped(d, 24, y, f"{_clean(k, 40)}: {_clean(v, 120)}", _font(13), INK,
                         WIDTH - 40, 2)
        y += 6
    if req.consequences:
        d.text((16, y), "CONSEQUENCES", fill=MUTED, font=_font(11))
        _wrapped(d, 16, y + 14, _clean(req.consequences, 400), _font(13), DANGER,
                 WIDTH - 32, 6)
    by = HEIGHT - BUTTON_H - 24
    deny = Button("deny", 16, by, WIDTH // 2 - 8, by + BUTTON_H)
    approve = Button("approve", WIDTH // 2 + 8, by, WIDTH - 16, by + BUTTON_H)
    d.rounded_rectangle((deny.x0, deny.y0, deny.x1, deny.y1), 8, outline=ACCENT, width=2)
    d.rounded_rectangle((approve.x0, approve.y0, approve.x1, approve.y1), 8, fill=ACCENT)
    d.text((deny.x0 + 48, by + 14), "Deny", fill=ACCENT, font=_font(16))
    d.text((approve.x0 + 36, by + 14), "Approve", fill=(255, 255, 255), font=_font(16))
    return [deny, approve]


def _draw_activity(d: Any, package: str, component: str, *, typed: str) -> None:
    y = STATUS_H + 16
    d.text((16, y), "Activity", fill=MUTED, font=_font(12))
    y = _wrapped(d, 16, y + 16, _clean(component, 200), _font(17), INK, WIDTH - 32, 3)
    _wrapped(d, 16, y + 8, f"started in {_clean(package, 120)}", _font(13), MUTED,
             WIDTH - 32, 2)
    if typed:
        _wrapped(d, 16, y + 48, f"typed: {_clean(typed, 200)}", _font(13), INK,
                 WIDTH - 32, 3)


def _draw_home(d: Any, apps: list[tuple[str, str]]) -> None:
    y = STATUS_H + 20
    d.text((16, y), "Installed apps", fill=MUTED, font=_font(12))
    y += 20
    for label, pkg in apps:
        d.text((16, y), _clean(label, 40), fill=INK, font=_font(15))
        d.text((16, y + 18), _clean(pkg, 60), fill=MUTED, font=_font(11))
        y += 40


_FONTS: dict[int, Any] = {}


_FONTS_LOCK = threading.Lock()  # frames may be drawn in worker threads


def _font(size: int) -> Any:
    with _FONTS_LOCK:
        f = _FONTS.get(size)
        if f is None:
            from PIL import ImageFont

            try:
                f = ImageFont.load_default(size=size)
            except (TypeError, OSError):  # Pillow without FreeType: the fixed bitmap font
                f = ImageFont.load_default()
            _FONTS[size] = f
        return f


def _wrapped(d: Any, x: int, y: int, text: str, font: Any, fill: Any, width: int,
             max_lines: int) -> int:
    """Draw `text` word-wrapped to `width` px, at most `max_lines`; returns the next y."""
    words = text.split()
    line = ""
    lines: list[str] = []
    for w in words:
        trial = f"{line} {w}".strip()
        if d.textlength(trial, font=font) <= width or not line:
            line = trial
        else:
            lines.append(line)
            line = w
        if len(lines) >= max_lines:
            break
    if line and len(lines) < max_lines:
        lines.append(line)
    size = getattr(font, "size", 12)
    for ln in lines:
        while ln and d.textlength(ln, font=font) > width:
            ln = ln[:-2] + "…"
        d.text((x, y), ln, fill=fill, font=font)
        y += int(size * 1.3) + 1
    return y
