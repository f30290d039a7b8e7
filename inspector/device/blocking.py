"""Run blocking adbutils calls off the event loop, with a deadline and readable errors.

adbutils is synchronous; a stuck adb server or device must never freeze the GUI's loop,
so every call goes through `run_blocking` (a dedicated thread pool + `asyncio.wait_for`).
A timed-out call keeps its worker thread until the socket timeout adbutils was given ends.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
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
)

T = TypeVar("T")

_executor = ThreadPoolExecutor(max_workers=8, thread_name_prefix="adb-call")


async def run_blocking(fn: Callable[..., T], *args: Any, timeout: float, what: str) -> T:
    """Run `fn(*args)` in the adb thread pool; adb failures become `DeviceError`."""
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
        raise translate_adb_error(exc, what) from exc


def translate_adb_error(exc: BaseException, what: str) -> DeviceError:
    """Map adbutils/socket errors to a specific DeviceError."""
    text = bounded(str(exc) or type(exc).__name__, 200)
    low = text.lower()
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
