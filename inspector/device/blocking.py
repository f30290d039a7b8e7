"""Run blocking adbutils calls off the event loop, with a deadline and readable errors.

adbutils is synchronous; a stuck adb server or device must never freeze the GUI's loop,
so every call goes through `run_blocking` (a dedicated thread pool + `asyncio.wait_for`).
A timed-out call keeps its worker thread until the socket timeout adbutils was given ends.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from adbutils.errors import AdbConnectionError, AdbError, AdbTimeout

from inspector.device.errors import (
    ADB_SERVER,
    DEVICE_NOT_FOUND,
    DEVICE_NOT_READY,
    TIMEOUT,
    DeviceError,
    bounded,
    redact,
)

T = TypeVar("T")

_executor = ThreadPoolExecutor(max_workers=8, thread_name_prefix="adb-call")


async def run_blocking(
    fn: Callable[..., T],
    *args: Any,
    timeout: float,
    what: str,
    secrets: Sequence[str] = (),
) -> T:
    """Run `fn(*args)` in the adb thread pool; adb failures become `DeviceError`.

    `secrets` (the relay token) are blanked out of the error text before it is cut to
    length, and the original exception (adbutils puts the command line in some) is then
    not chained, so no piece of a secret survives in a message or traceback.
    """
    loop = asyncio.get_running_loop()
    future = loop.run_in_executor(_executor, functools.partial(fn, *args))
    try:
        return await asyncio.wait_for(future, timeout)
    except TimeoutError:
        raise DeviceError(
            TIMEOUT,
            f"{what} did not finish within {timeout:g} s.",
            "Check the cable and that the device is awake, then retry.",
        ) from None
    except DeviceError:
        raise
    except (AdbError, OSError, EOFError) as exc:
        err = translate_adb_error(exc, what, secrets)
        if not any(secrets):
            raise err from exc
    # Raised outside the `except` block so that not even __context__ keeps the original.
    raise err


def describe_exception(exc: BaseException) -> str:
    """An exception as text; adbutils raises some with no message at all (a bare
    `AdbError()` when the adb server closes a request), which says nothing to a user."""
    text = str(exc).strip()
    if text:
        return text
    if isinstance(exc, AdbError | EOFError):
        return (
            f"{type(exc).__name__} with no message: the adb server closed the request, "
            "usually because the device went away"
        )
    return type(exc).__name__


def translate_adb_error(
    exc: BaseException, what: str, secrets: Sequence[str] = ()
) -> DeviceError:
    """Map adbutils/socket errors to a specific DeviceError (secrets redacted first)."""
    text = bounded(redact(describe_exception(exc), secrets), 200)
    low = text.lower()
    if "shell output invalid" in low:  # adbutils: the shell stream ended without an answer
        return DeviceError(
            DEVICE_NOT_FOUND,
            f"{what}: the connection to the phone ended before the command answered.",
            "The cable may have come out or the phone rebooted: check it and retry.",
        )
    if isinstance(exc, AdbTimeout | TimeoutError):
        return DeviceError(
            TIMEOUT,
            f"{what} timed out ({text}).",
            "Check the cable and that the device is awake, then retry.",
        )
    if isinstance(exc, AdbConnectionError | ConnectionRefusedError):
        return DeviceError(
            ADB_SERVER,
            f"{what}: cannot reach the adb server ({text}).",
            "Start it with `adb start-server` or let the inspector start it.",
        )
    if "not found" in low and "device" in low:
        return DeviceError(
            DEVICE_NOT_FOUND,
            f"{what}: the device is not connected ({text}).",
            "Plug it in again (or `adb connect` it) and refresh.",
        )
    if "unauthorized" in low:
        return DeviceError(
            DEVICE_NOT_READY,
            f"{what}: the device has not authorised this computer.",
            "Unlock the phone and accept the USB debugging prompt.",
        )
    if "offline" in low:
        return DeviceError(
            DEVICE_NOT_READY,
            f"{what}: the device is offline.",
            "Reconnect the cable; if it stays offline run `adb kill-server`.",
        )
    return DeviceError(ADB_SERVER, f"{what} failed: {text}", "Retry; if it persists restart adb.")
