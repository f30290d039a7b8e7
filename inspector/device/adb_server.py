"""Where the adb server is, which adb binary runs it, and starting it when it is not running.

The port honours `ANDROID_ADB_SERVER_PORT` (as adb itself and adbutils do), so tests and
users with a private server never touch the default 5037. The binary is, in order:
`ADBUTILS_ADB_PATH`, an `adb` on PATH (Debian's package), the one inside the adbutils wheel.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from inspector.device.errors import ADB_MISSING, ADB_SERVER, DeviceError, bounded

DEFAULT_PORT = 5037
START_TIMEOUT_S = 20.0


class AdbEndpoint(BaseModel):
    """The adb server's address."""

    model_config = ConfigDict(frozen=True)

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT

    @classmethod
    def from_env(cls) -> AdbEndpoint:
        """The address adb itself would use (ANDROID_ADB_SERVER_HOST / _PORT)."""
        raw = os.environ.get("ANDROID_ADB_SERVER_PORT", "")
        try:
            port = int(raw) if raw else DEFAULT_PORT
        except ValueError:
            raise DeviceError(
                ADB_SERVER,
                f"ANDROID_ADB_SERVER_PORT is not a port number: {bounded(raw, 40)!r}.",
                "Unset it or set it to a number such as 5037.",
            ) from None
        return cls(host=os.environ.get("ANDROID_ADB_SERVER_HOST", "127.0.0.1"), port=port)

    def is_running(self, timeout: float = 0.5) -> bool:
        """True when something accepts connections on the server port."""
        try:
            with socket.create_connection((self.host, self.port), timeout=timeout):
                return True
        except OSError:
            return False


class AdbBinary(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    source: Literal["env", "system", "bundled"]


def find_adb() -> AdbBinary:
    """Pick the adb binary (see module docstring) or say how to get one."""
    env = os.environ.get("ADBUTILS_ADB_PATH")
    if env and os.access(env, os.X_OK):
        return AdbBinary(path=env, source="env")
    system = shutil.which("adb")
    if system:
        return AdbBinary(path=system, source="system")
    try:
        import adbutils

        bundled = Path(adbutils.__file__).parent / "binaries" / "adb"
        if bundled.is_file() and os.access(bundled, os.X_OK):
            return AdbBinary(path=str(bundled), source="bundled")
    except ImportError:  # pragma: no cover - adbutils is a hard dependency
        pass
    raise DeviceError(
        ADB_MISSING,
        "No adb binary was found (not on PATH, not in the adbutils package).",
        "Install it (Debian/Ubuntu: `sudo apt install adb`) or set ADBUTILS_ADB_PATH.",
    )


async def ensure_server(
    endpoint: AdbEndpoint | None = None, binary: AdbBinary | None = None
) -> bool:
    """Start the adb server on `endpoint` unless it runs; True when this call started it."""
    endpoint = endpoint or AdbEndpoint.from_env()
    if await asyncio.to_thread(endpoint.is_running):
        return False
    if endpoint.host not in ("127.0.0.1", "localhost"):
        raise DeviceError(
            ADB_SERVER,
            f"The adb server at {endpoint.host}:{endpoint.port} is not reachable.",
            "Start it on that host, or unset ANDROID_ADB_SERVER_HOST.",
        )
    binary = binary or find_adb()
    out = await _run_adb(binary, endpoint, "start-server")
    if not await asyncio.to_thread(endpoint.is_running, 2.0):
        raise DeviceError(
            ADB_SERVER,
            f"`adb start-server` on port {endpoint.port} did not start a server: {bounded(out)}",
            "Another program may hold the port; try `adb kill-server` or another "
            "ANDROID_ADB_SERVER_PORT.",
        )
    return True


async def kill_server(endpoint: AdbEndpoint | None = None, binary: AdbBinary | None = None) -> None:
    """`adb kill-server` on `endpoint` (used by tests and "restart adb" in the UI)."""
    endpoint = endpoint or AdbEndpoint.from_env()
    if await asyncio.to_thread(endpoint.is_running):
        await _run_adb(binary or find_adb(), endpoint, "kill-server")


async def _run_adb(binary: AdbBinary, endpoint: AdbEndpoint, *args: str) -> str:
    env = dict(os.environ, ANDROID_ADB_SERVER_PORT=str(endpoint.port))
    proc = await asyncio.create_subprocess_exec(
        binary.path,
        *args,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), START_TIMEOUT_S)
    except TimeoutError:
        proc.kill()
        raise DeviceError(
            ADB_SERVER,
            f"`adb {' '.join(args)}` did not finish in {START_TIMEOUT_S:g} s.",
            "Kill stray adb processes and retry.",
        ) from None
    return out.decode("utf-8", "replace")
