"""Devices a session can inspect: the virtual device (always there) and adb devices.

`DeviceManager` is the one list the GUI's device pane and the CLI's `devices` command show.
The virtual device (serial `virtual`) is started in-process on first connect — or, with a
relay socket configured, reached on that socket (a standalone virtual device or relay).
adb devices come from `inspector.device` (imported lazily: listing them needs an adb
server, which the virtual-only paths must never require).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, Field

from inspector.relay.api import RelayApi, RelayError
from inspector.session.errors import ExitCode, InspectorError

log = logging.getLogger(__name__)

VIRTUAL_SERIAL = "virtual"


class DeviceInfo(BaseModel):
    """One row of the device list."""

    serial: str
    kind: str  # "virtual" | "adb" | "relay"
    state: str = "device"  # adb states: device, unauthorized, offline, no permissions …
    model: str = ""
    sdk: int | None = None
    release: str = ""
    abi: str = ""
    message: str = ""  # what to do when the state is not usable
    usable: bool = True


class VirtualConfig(BaseModel):
    """How to reach the virtual device (or a standalone relay)."""

    state_dir: str | None = None
    plugins: list[str] = Field(default_factory=list)
    relay_socket: str | None = None  # unix:PATH | tcp:HOST:PORT
    token: str | None = None


class AdbSource(Protocol):
    """What the session needs from the adb device layer."""

    async def list_devices(self) -> list[DeviceInfo]: ...

    async def connect_relay(self, serial: str) -> RelayApi: ...


DeviceListener = Callable[[list[DeviceInfo]], None]


def parse_socket_spec(spec: str) -> tuple[str, str, int]:
    """`unix:PATH` → ("unix", PATH, 0); `tcp:HOST:PORT` → ("tcp", HOST, PORT)."""
    kind, _, rest = spec.partition(":")
    if kind == "unix" and rest:
        return "unix", rest, 0
    if kind == "tcp":
        host, _, port = rest.rpartition(":")
        if host and port.isdigit():
            return "tcp", host, int(port)
    raise InspectorError(
        "BAD_SOCKET", f"cannot read socket address {spec!r}",
        hint="use unix:/path/to/socket or tcp:127.0.0.1:PORT", exit_code=ExitCode.USAGE,
    )


async def connect_socket(spec: str, token: str, *, events: bool = True) -> RelayApi:
    """Connect a relay client to a standalone relay or virtual device."""
    from inspector.relay.client import RelayClient

    kind, where, port = parse_socket_spec(spec)
    try:
        if kind == "unix":
            return await RelayClient.open_unix(where, token, events=events)
        return await RelayClient.open_tcp(where, port, token, events=events)
    except OSError as exc:
        raise RelayError("DISCONNECTED", f"cannot connect to {spec}: {exc.strerror or exc}") from exc


class VirtualDeviceHost:
    """Owns the in-process virtual device (created once, shared by reconnects)."""

    def __init__(self, config: VirtualConfig) -> None:
        self.config = config
        self.device: Any = None  # inspector.virtual's device object
        self._tmp: Any = None

    def _ensure_device(self) -> Any:
        if self.device is None:
            from inspector.virtual import create_virtual_device  # type: ignore[attr-defined]

            state_dir = self.config.state_dir
            if state_dir is None:
                import tempfile

                self._tmp = tempfile.TemporaryDirectory(prefix="cetp-virtual-")
                state_dir = self._tmp.name
            self.device = create_virtual_device(
                state_dir=Path(state_dir), plugins=[Path(p) for p in self.config.plugins]
            )
        return self.device

    async def connect(self) -> RelayApi:
        if self.config.relay_socket:
            return await connect_socket(self.config.relay_socket, self.config.token or "")
        from inspector.virtual import connect_in_process  # type: ignore[attr-defined]

        return await connect_in_process(self._ensure_device())

    async def close(self) -> None:
        if self.device is not None:
            closer = getattr(self.device, "close", None)
            if closer is not None:
                result = closer()
                if asyncio.iscoroutine(result):
                    await result
            self.device = None
        if self._tmp is not None:
            with contextlib.suppress(OSError):
                self._tmp.cleanup()
            self._tmp = None


class DeviceManager:
    """The merged device list and a connector per serial."""

    def __init__(self, virtual: VirtualConfig | None = None, adb: AdbSource | None = None,
                 *, use_adb: bool = True) -> None:
        self.virtual_config = virtual or VirtualConfig()
        self.virtual = VirtualDeviceHost(self.virtual_config)
        self._adb = adb
        self._use_adb = use_adb
        self._listeners: list[DeviceListener] = []
        self.devices: list[DeviceInfo] = []
        self.adb_error: str = ""

    def add_listener(self, listener: DeviceListener) -> None:
        self._listeners.append(listener)

    def _adb_source(self) -> AdbSource | None:
        if self._adb is None and self._use_adb:
            try:
                from inspector.device import adb_source  # type: ignore[attr-defined]

                self._adb = adb_source()
            except Exception as exc:  # no adb layer / no adb binary: virtual only
                self.adb_error = f"adb unavailable: {exc}"
                self._use_adb = False
        return self._adb

    def virtual_info(self) -> DeviceInfo:
        if self.virtual_config.relay_socket:
            return DeviceInfo(serial=VIRTUAL_SERIAL, kind="relay",
                              model=f"relay at {self.virtual_config.relay_socket}")
        return DeviceInfo(serial=VIRTUAL_SERIAL, kind="virtual", model="CETP virtual device")

    async def refresh(self) -> list[DeviceInfo]:
        """Re-list devices (virtual first) and notify listeners."""
        devices = [self.virtual_info()]
        src = self._adb_source()
        if src is not None:
            try:
                devices.extend(await asyncio.wait_for(src.list_devices(), 10))
            except Exception as exc:  # adb trouble must not hide the virtual device
                self.adb_error = f"cannot list adb devices: {exc}"
                log.info(self.adb_error)
        self.devices = devices
        for listener in list(self._listeners):
            listener(devices)
        return devices

    async def default_serial(self) -> str:
        """The only usable adb device, else the virtual device (issue 3)."""
        devices = self.devices or await self.refresh()
        adb = [d for d in devices if d.kind == "adb" and d.usable]
        return adb[0].serial if len(adb) == 1 else VIRTUAL_SERIAL

    def connector(self, serial: str) -> Callable[[], Awaitable[RelayApi]]:
        """A function connecting a fresh relay client to `serial` (used by RelayLink)."""
        if serial == VIRTUAL_SERIAL:
            return self.virtual.connect
        src = self._adb_source()
        if src is None:
            raise InspectorError(
                "NO_DEVICE", f"device {serial!r} is not available: {self.adb_error or 'no adb'}",
                hint="list devices with `cetp-inspector devices`, or use -d virtual",
                exit_code=ExitCode.DEVICE,
            )

        async def connect() -> RelayApi:
            return await src.connect_relay(serial)

        return connect

    async def close(self) -> None:
        await self.virtual.close()
