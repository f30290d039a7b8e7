"""The screen of a session's device, whichever it is (issue 16).

`screen_for(session, adb_device_getter)` gives the virtual device's screen (relay ops
`screencap` / `input`, docs/relay-protocol.md §4.3) when the relay serves them, else the
phone's over adb (`inspector.device.screen.AdbScreen`), else None. Both answer
`capture() -> PNG bytes` and `send_input(kind, **args)`; the GUI's Device screen pane uses
nothing else.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from inspector.relay.api import RelayError
from inspector.session.relay_link import RelayLink


class DeviceScreen(Protocol):
    async def capture(self) -> bytes: ...

    async def send_input(self, kind: str, **args: Any) -> Any: ...


class RelayScreen:
    """The virtual device's screen through the relay connection."""

    def __init__(self, link: RelayLink) -> None:
        self.link = link

    async def capture(self) -> bytes:
        r = await self.link.screencap()
        png = r.get("png")
        if not isinstance(png, bytes):
            raise RelayError("BAD_FRAME", "screencap returned no PNG bytes")
        return png

    async def send_input(self, kind: str, **args: Any) -> Any:
        """Returns `(result, confirmation_id)`: what the tap did ("approve", "deny", "")
        and the confirmation it answered, if any."""
        r = await self.link.input(kind, **args)
        return str(r.get("result") or ""), r.get("confirmation_id")


def screen_for(session: Any, adb_device_getter: Callable[[], Any] | None) -> DeviceScreen | None:
    try:
        caps = session.link.hello_info.capabilities
    except RelayError:
        caps = ()
    if "screencap" in caps and "input" in caps:
        return RelayScreen(session.link)
    if adb_device_getter is not None:
        from inspector.device.screen import AdbScreen

        return AdbScreen(adb_device_getter)
    return None
