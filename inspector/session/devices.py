"""Devices a session can inspect: the virtual device (always there) and adb devices.

`DeviceManager` is the one list the GUI's device pane and the CLI's `devices` command show.
The virtual device (serial `virtual`) is started in-process on first connect — or, with a
relay socket configured, reached on that socket (a standalone virtual device or relay).
adb devices come from `inspector.device` (imported lazily: listing them needs an adb
server, which the virtual-only paths must never require).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, Field

from inspector.relay.api import RelayApi
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
    bundles: list[str] = Field(default_factory=list)
    """Bug-report bundles (or journals) whose recorded providers the in-process device
    serves instead of the reference apps (`--virtual-bundle`)."""


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
    if kind == "unix":
        return await RelayClient.open_unix(where, token, events=events)
    return await RelayClient.open_tcp(where, port, token, events=events)


class VirtualDeviceHost:
    """Owns the in-process virtual device (created once, shared by reconnects)."""

    def __init__(self, config: VirtualConfig) -> None:
        self.config = config
        self.device: Any = None  # inspector.virtual.device.VirtualDevice

    def ensure_device(self) -> Any:
        """The in-process `VirtualDevice` (bad plugins are a usage error)."""
        if self.device is None:
            from inspector.virtual.device import VirtualDevice
            from inspector.virtual.plugins import PluginError

            try:
                self.device = VirtualDevice(
                    Path(self.config.state_dir) if self.config.state_dir else None,
                    plugins=[Path(p) for p in self.config.plugins],
                    apps=[] if self.config.bundles else None,
                )
            except PluginError as exc:
                raise InspectorError(
                    "BAD_PLUGIN", str(exc),
                    hint="check the file against docs/virtual-device.md",
                    exit_code=ExitCode.USAGE,
                ) from exc
            if self.config.bundles:
                self._install_bundles(self.device)
        return self.device

    def _install_bundles(self, device: Any) -> None:
        """Replay as a virtual provider (docs/sessions.md): only the recorded providers."""
        from inspector.virtual.apps.replayed import ReplayLoadError, install_bundle

        for b in self.config.bundles:
            try:
                install_bundle(device, b, notify=False)
            except ReplayLoadError as exc:
                raise InspectorError(
                    "BAD_BUNDLE", str(exc),
                    hint="give a .cetpbundle file (cetp-inspector bundle create) or a "
                    "session journal",
                    exit_code=ExitCode.USAGE,
                ) from exc

    async def connect(self) -> RelayApi:
        if self.config.relay_socket:
            return await connect_socket(self.config.relay_socket, self.config.token or "")
        from inspector.virtual.inprocess import connect_virtual_device

        return await connect_virtual_device(self.ensure_device())

    async def close(self) -> None:
        if self.device is not None:
            device, self.device = self.device, None
            await device.aclose()


def from_adb(d: Any) -> DeviceInfo:
    """`inspector.device.models.DeviceInfo` → a device-list row."""
    return DeviceInfo(
        serial=d.serial, kind="adb", state=str(d.state.value), model=d.title,
        sdk=d.sdk_int, release=d.release or "", abi=d.abi or "", message=d.hint,
        usable=d.usable,
    )


class AdbLayerSource:
    """`AdbSource` over `inspector.device.layer.AdbDeviceLayer` (created on first use)."""

    def __init__(self, layer: Any = None, *, start_server: bool = False,
                 confirm_uninstall: Callable[[str], Awaitable[bool]] | None = None) -> None:
        self._layer = layer
        self.start_server = start_server
        #: asked (with the explanation) before an incompatible relay is uninstalled
        self.confirm_uninstall = confirm_uninstall

    @property
    def layer(self) -> Any:
        if self._layer is None:
            from inspector.device.layer import AdbDeviceLayer

            self._layer = AdbDeviceLayer()
        return self._layer

    async def list_devices(self) -> list[DeviceInfo]:
        devices = self.layer.devices
        # is_running() is a blocking socket connect (up to 0.5 s): keep it off the loop.
        if not await asyncio.to_thread(devices.endpoint.is_running):
            if not self.start_server:
                raise RuntimeError("the adb server is not running")
            await devices.start_server()
        return [from_adb(d) for d in await devices.list_devices()]

    def snapshot(self) -> list[DeviceInfo]:
        """The hot-plug tracker's current list (after `start_tracking`)."""
        return [from_adb(d) for d in self.layer.snapshot()]

    async def connect_relay(self, serial: str) -> RelayApi:
        from inspector.device.errors import DeviceError

        try:
            if serial in getattr(self.layer, "links", {}):
                return await self.layer.reconnect_relay(
                    serial, confirm_uninstall=self.confirm_uninstall)
            return await self.layer.connect_relay(serial,
                                                  confirm_uninstall=self.confirm_uninstall)
        except DeviceError as exc:
            raise InspectorError(exc.code, exc.message, hint=exc.hint,
                                 exit_code=ExitCode.DEVICE) from exc


class DeviceManager:
    """The merged device list and a connector per serial."""

    def __init__(self, virtual: VirtualConfig | None = None, adb: AdbSource | None = None,
                 *, use_adb: bool = True,
                 confirm_uninstall: Callable[[str], Awaitable[bool]] | None = None) -> None:
        self.virtual_config = virtual or VirtualConfig()
        self.virtual = VirtualDeviceHost(self.virtual_config)
        self._adb = adb
        self._use_adb = use_adb
        self._listeners: list[DeviceListener] = []
        self.devices: list[DeviceInfo] = []
        self.adb_error: str = ""
        self._tracking: AdbLayerSource | None = None
        self._confirm_uninstall = confirm_uninstall

    def add_listener(self, listener: DeviceListener) -> None:
        self._listeners.append(listener)

    def _adb_source(self) -> AdbSource | None:
        if self._adb is None and self._use_adb:
            self._adb = AdbLayerSource(confirm_uninstall=self._confirm_uninstall)
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

    def start_tracking(self) -> bool:
        """Follow adb hot-plug events (the GUI): each change re-lists and notifies.
        Returns False when there is no adb layer to follow."""
        src = self._adb_source()
        if not isinstance(src, AdbLayerSource):
            return False
        try:
            src.layer.add_listener(lambda _change: self._on_hotplug(src))
            src.layer.start()
        except Exception as exc:  # no adb binary/server: the virtual device still works
            self.adb_error = f"cannot follow adb devices: {exc}"
            return False
        self._tracking = src
        return True

    def _on_hotplug(self, src: AdbLayerSource) -> None:
        self.devices = [self.virtual_info(), *src.snapshot()]
        for listener in list(self._listeners):
            listener(self.devices)

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

    def adb_device_getter(self, serial: str) -> Callable[[], Any] | None:
        """The adbutils device behind `serial` (None for the virtual device or without adb):
        the phone's logcat and screen are read through it (issue 16)."""
        if serial == VIRTUAL_SERIAL or self.virtual_config.relay_socket:
            return None
        src = self._adb_source()
        if src is None:
            return None
        return lambda: src.layer.devices.device(serial)

    async def close(self) -> None:
        tracking, self._tracking = self._tracking, None
        if tracking is not None:
            await tracking.layer.stop()
        await self.virtual.close()
