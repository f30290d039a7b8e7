"""Follow a phone's logcat for a session: the lines of the packages it discovered.

The virtual device streams its log over the relay connection (`ProviderLogs.follow`); a
phone relay has no such op, so for an adb device the session reads `adb logcat`
(`inspector.device.logcat.LogcatReader`), watching the uids discovery reported (the relay
lists every package's uid) and feeding `session.provider_logs`. Logs help; they never fail
a session: any problem is logged and the session goes on without them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from inspector.device.logcat import LogcatReader, watch_from_declarations
from inspector.protocol.discovery import Discovery
from inspector.protocol.logs import LogLine

if TYPE_CHECKING:
    from inspector.session.session import Session

log = logging.getLogger(__name__)

#: how far apart the phone's and the desktop's idea of "now" may be after alignment
PHONE_TOLERANCE_MS = 250.0


class PhoneLogs:
    """One session's logcat reader (started by `start_phone_logs`)."""

    def __init__(self, session: Session, device: Any) -> None:
        self.session = session
        self.reader = LogcatReader(device, self._on_lines, watch=self._watch())
        session.add_discovery_listener(self._on_discovery)

    def _watch(self) -> dict[int, str]:
        return watch_from_declarations([*self.session.providers, *self.session.extensions])

    def _on_discovery(self, _d: Discovery) -> None:
        self.reader.watch_packages(self._watch())

    def _on_lines(self, batch: list[LogLine]) -> None:
        feed = self.session.provider_logs.feed
        for line in batch:
            feed(line)

    async def start(self) -> None:
        await self.reader.start()

    async def sync(self) -> bool:
        return await self.reader.sync()

    async def aclose(self) -> None:
        await self.reader.stop()


async def start_phone_logs(session: Session,
                           device_getter: Callable[[], Any] | None) -> PhoneLogs | None:
    """Start following the phone's logcat for `session` (None: not an adb device, or
    logcat could not be started — the reason is logged)."""
    if device_getter is None:
        return None
    try:
        phone = PhoneLogs(session, device_getter())
        await phone.start()
    except Exception as exc:
        log.info("not following the phone's log for %s: %s", session.serial, exc)
        return None
    session.provider_logs.tolerance_ms = PHONE_TOLERANCE_MS
    session.provider_logs.add_source(phone)
    return phone
