"""Device-layer failures: a code for programs, a message and a "what to do" hint for people."""

from __future__ import annotations

from collections.abc import Iterable

ADB_MISSING = "ADB_MISSING"
ADB_SERVER = "ADB_SERVER"
TIMEOUT = "TIMEOUT"
DEVICE_NOT_FOUND = "DEVICE_NOT_FOUND"
DEVICE_NOT_READY = "DEVICE_NOT_READY"
SHELL_FAILED = "SHELL_FAILED"
RELAY_NOT_SHIPPED = "RELAY_NOT_SHIPPED"
INSTALL_FAILED = "INSTALL_FAILED"
INSTALL_NEEDS_CONFIRMATION = "INSTALL_NEEDS_CONFIRMATION"
RELAY_START_FAILED = "RELAY_START_FAILED"
RELAY_UNREACHABLE = "RELAY_UNREACHABLE"
APP_CONTROL_FAILED = "APP_CONTROL_FAILED"
RELAY_NOT_OURS = "RELAY_NOT_OURS"
DEVICE_BOOTING = "DEVICE_BOOTING"


class DeviceError(Exception):
    """Something on the adb path failed; `hint` tells the user what to try."""

    def __init__(self, code: str, message: str, hint: str = "") -> None:
        super().__init__(f"{message} {hint}".strip())
        self.code = code
        self.message = message
        self.hint = hint


def bounded(text: str, limit: int = 400) -> str:
    """Device output is untrusted: keep it to one bounded, printable snippet."""
    clean = "".join(ch if ch.isprintable() or ch == "\n" else "?" for ch in text.strip())
    return clean if len(clean) <= limit else clean[:limit] + "…"


SECRET_MARK = "<secret>"


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """Blank every secret (the relay token) out of `text`.

    Always redact BEFORE cutting text to a length: a token cut in half no longer matches
    and its first half would survive (issue 11).
    """
    for s in secrets:
        if s:
            text = text.replace(s, SECRET_MARK)
    return text
