"""Screenshots of confirmation screens, kept with a recorded session (issue 16).

When a confirmation is launched on the device (a RESOLUTION exchange starts), the screen
is captured once the confirmation is up and saved next to the session's journal as
`<journal>.screens/<exchange id>.png`, so a bug report can show what the person saw.
Nothing is captured unless the session is being recorded, and a bundle includes the
screenshots only when the reporter opts in (`bundle create --screenshots`). A capture that
fails costs the screenshot, never the call.
"""

from __future__ import annotations

import asyncio
import logging
import re
from pathlib import Path
from typing import Any

from inspector.protocol.exchange import Exchange, ExchangeKind, ExchangeStatus

log = logging.getLogger(__name__)

#: how long after the launch the confirmation is assumed to be on screen
SETTLE_S = 0.4
MAX_SCREENSHOTS = 32
MAX_SCREENSHOT_BYTES = 8 * 1024 * 1024
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
_ID = re.compile(r"^[0-9a-f]{32}$")


def screens_dir(journal_path: Path | str) -> Path:
    return Path(str(journal_path) + ".screens")


def saved_screenshots(journal_path: Path | str) -> dict[str, bytes]:
    """exchange id → PNG bytes saved for a recorded session (bounded, PNGs only)."""
    d = screens_dir(journal_path)
    out: dict[str, bytes] = {}
    if not d.is_dir():
        return out
    for p in sorted(d.glob("*.png"))[:MAX_SCREENSHOTS]:
        if not _ID.match(p.stem) or p.stat().st_size > MAX_SCREENSHOT_BYTES:
            continue
        data = p.read_bytes()
        if data.startswith(PNG_MAGIC):
            out[p.stem] = data
    return out


class ConfirmationScreenshots:
    """Captures the device's screen when a confirmation is launched (see module doc)."""

    def __init__(self, session: Any, screen: Any, directory: Path, *,
                 settle_s: float = SETTLE_S) -> None:
        self.session = session
        self.screen = screen
        self.directory = directory
        self.settle_s = settle_s
        self.saved: dict[str, Path] = {}
        self._launching: str | None = None  # the RESOLUTION exchange in flight
        self._tasks: set[asyncio.Task[Any]] = set()
        # the virtual device announces its confirmation screen: draw exactly that frame
        # at once (a front end may answer it before any capture could see it)
        self.from_events = getattr(screen, "link", None) is not None
        session.add_exchange_listener(self._on_exchange)
        session.add_event_listener(self._on_event)

    def _on_exchange(self, ex: Exchange) -> None:
        if ex.kind != ExchangeKind.RESOLUTION or ex.status != ExchangeStatus.PENDING:
            return
        self._launching = ex.id
        if (not self.from_events and len(self.saved) < MAX_SCREENSHOTS
                and ex.id not in self.saved):
            self._keep(self.session.spawner.spawn(self.capture(ex.id),
                                                  f"screenshot-{ex.id[:8]}"))

    def _on_event(self, event: Any) -> None:
        xid = self._launching
        if (not self.from_events or event.get("event") != "confirmation_request" or xid is None
                or xid in self.saved or len(self.saved) >= MAX_SCREENSHOTS):
            return
        from inspector.session.confirmations import ConfirmationRequest

        req = ConfirmationRequest.from_event(event)
        self._keep(self.session.spawner.spawn(self._draw(xid, req), f"screenshot-{xid[:8]}"))

    def _keep(self, task: asyncio.Task[Any]) -> None:
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def aclose(self) -> None:
        """Let screenshots in progress finish (a short CLI command ends right after the
        confirmation); called when the session closes."""
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=5.0)

    async def _draw(self, exchange_id: str, req: Any) -> Path | None:
        from inspector.virtual.screen import Snapshot, render

        snap = Snapshot(confirmation=req, activity=None, typed="", apps=[])
        png, _buttons = await asyncio.to_thread(render, snap)
        return self._save(exchange_id, png)

    async def capture(self, exchange_id: str) -> Path | None:
        await asyncio.sleep(self.settle_s)
        try:
            png = await self.screen.capture()
        except Exception as exc:
            log.info("no screenshot of the confirmation: %s", exc)
            return None
        return self._save(exchange_id, png)

    def _save(self, exchange_id: str, png: bytes) -> Path | None:
        if not png.startswith(PNG_MAGIC) or len(png) > MAX_SCREENSHOT_BYTES:
            return None
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            path = self.directory / f"{exchange_id}.png"
            path.write_bytes(png)
        except OSError as exc:
            log.info("cannot save the confirmation screenshot: %s", exc)
            return None
        self.saved[exchange_id] = path
        return path


def keep_confirmation_screenshots(session: Any, adb_device_getter: Any,
                                  journal_path: Path | str) -> ConfirmationScreenshots | None:
    """Start keeping confirmation screenshots for a recorded session (None: no screen)."""
    from inspector.session.device_screen import screen_for

    screen = screen_for(session, adb_device_getter)
    if screen is None:
        return None
    keeper = ConfirmationScreenshots(session, screen, screens_dir(journal_path))
    session.provider_logs.add_source(keeper)  # closed (finished) with the session
    return keeper
