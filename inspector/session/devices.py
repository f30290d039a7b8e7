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
    android_rules: list[str] = Field(default_factory=list)
    """The in-process virtual device: ids of the Android rules its API profile enforces."""
    error: str = ""  # why its facts could not be read (it is listed all the same)
    #: what explains trouble on the phone now: [{code, message, hint}] (docs/devices.md)
    diagnostics: list[dict[str, str]] = Field(default_factory=list)

    def describe(self) -> str:
        """Serial, model and state for messages that name a device."""
        bits = [self.model] if self.model and self.model != self.serial else []
        if not self.usable:
            bits.append(self.state)
        return f"{self.serial} ({', '.join(bits)})" if bits else self.serial


class VirtualConfig(BaseModel):
    """How to reach the virtual device (or a standalone relay)."""

    state_dir: str | None = None
    plugins: list[str] = Field(default_factory=list)
    relay_socket: str | None = None  # unix:PATH | tcp:HOST:PORT
    token: str | None = None
    bundles: list[str] = Field(default_factory=list)
    """Bug-report bundles (or journals) whose recorded providers the in-process device
    serves instead of the reference apps (`--virtual-bundle`)."""
    android_api: int | None = None
    """The Android API profile of the in-process device (`--android-api`; None → 34)."""
    relay_in_front: bool = True
    """False plays a relay whose activity is not resumed (`--virtual-relay-background`)."""


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
                    android_api=self.config.android_api,
                    relay_in_front=self.config.relay_in_front,
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


def from_adb(d: Any, diagnostics: list[Any] | None = None) -> DeviceInfo:
    """`inspector.device.models.DeviceInfo` (+ `Diagnostic`s) → a device-list row."""
    return DeviceInfo(
        serial=d.serial, kind="adb", state=str(d.state.value), model=d.title,
        sdk=d.sdk_int, release=d.release or "", abi=d.abi or "",
        message=d.hint or d.error or "", usable=d.usable, error=d.error or "",
        diagnostics=[x.model_dump() for x in diagnostics or []],
    )


class AdbLayerSource:
    """`AdbSource` over `inspector.device.layer.AdbDeviceLayer` (created on first use)."""

    def __init__(self, layer: Any = None, *, start_server: bool = True,
                 confirm_uninstall: Callable[[str], Awaitable[bool]] | None = None,
                 notify: Callable[[str], None] | None = None,
                 diagnose: bool = True) -> None:
        self._layer = layer
        #: start the adb server (quietly) when it is not running: listing and connecting
        #: behave the same, and adb's own "daemon not running; starting now" never leaks
        self.start_server = start_server
        #: asked (with the explanation) before an incompatible relay is uninstalled
        self.confirm_uninstall = confirm_uninstall
        self.notify = notify
        self.diagnose = diagnose  # run the phone diagnostics when listing
        if layer is not None and notify is not None:
            layer.lifecycle.notify = notify

    @property
    def layer(self) -> Any:
        if self._layer is None:
            from inspector.device.layer import AdbDeviceLayer

            self._layer = AdbDeviceLayer(notify=self.notify)
        return self._layer

    async def _ensure_server(self) -> None:
        devices = self.layer.devices
        # is_running() is a blocking socket connect (up to 0.5 s): keep it off the loop.
        if not await asyncio.to_thread(devices.endpoint.is_running):
            if not self.start_server:
                raise RuntimeError("the adb server is not running")
            await devices.start_server()  # output captured: nothing reaches the terminal

    async def list_devices(self) -> list[DeviceInfo]:
        """Every adb device; usable phones with their diagnostics, each phone on its own
        deadline (one slow phone never hides or delays another)."""
        await self._ensure_server()
        found = await self.layer.devices.list_devices()

        async def row(d: Any) -> DeviceInfo:
            if not (self.diagnose and d.usable and not d.error):
                return from_adb(d)
            try:
                diags = await self.layer.phone_diagnostics(d.serial, d.sdk_int)
            except Exception as exc:  # diagnostics are a bonus; the phone is still listed
                log.info("diagnostics of %s failed: %s", d.serial, exc)
                diags = []
            codes = {x.code for x in diags}  # + what the last connect found (grants refused)
            diags += [x for x in getattr(self.layer, "diagnostics", {}).get(d.serial, [])
                      if x.code not in codes]
            return from_adb(d, diags)

        return list(await asyncio.gather(*(row(d) for d in found)))

    async def app_diagnostics(self, serial: str, package: str) -> list[dict[str, str]]:
        """Why an app on `serial` may not answer (stopped, restricted standby bucket)."""
        found = await self.layer.app_diagnostics(serial, package)
        return [d.model_dump() for d in found]

    def diagnostics(self, serial: str) -> list[dict[str, str]]:
        """What the last connect to `serial` found (grants refused, locked, not foreground)."""
        found = getattr(self.layer, "diagnostics", {}).get(serial, [])
        return [d.model_dump() for d in found]

    def snapshot(self) -> list[DeviceInfo]:
        """The hot-plug tracker's current list (after `start_tracking`)."""
        rows = [from_adb(d) for d in self.layer.snapshot()]
        for r in rows:  # what the last connect found stays visible in the device view
            r.diagnostics = self.diagnostics(r.serial)
        return rows

    async def connect_relay(self, serial: str) -> RelayApi:
        from inspector.device.errors import DeviceError

        try:
            await self._ensure_server()
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
                 confirm_uninstall: Callable[[str], Awaitable[bool]] | None = None,
                 notify: Callable[[str], None] | None = None) -> None:
        self.virtual_config = virtual or VirtualConfig()
        self._notify = notify
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
            self._adb = AdbLayerSource(confirm_uninstall=self._confirm_uninstall,
                                       notify=self._notify)
        return self._adb

    def virtual_info(self) -> DeviceInfo:
        if self.virtual_config.relay_socket:
            return DeviceInfo(serial=VIRTUAL_SERIAL, kind="relay",
                              model=f"relay at {self.virtual_config.relay_socket}")
        from inspector.android.profiles import profile
        from inspector.android.rules import rules_in_force

        p = profile(self.virtual_config.android_api)
        return DeviceInfo(serial=VIRTUAL_SERIAL, kind="virtual", model="CETP virtual device",
                          sdk=p.api, release=p.release,
                          android_rules=[x.id for x in rules_in_force(p.api)])

    async def refresh(self) -> list[DeviceInfo]:
        """Re-list devices (virtual first) and notify listeners."""
        devices = [self.virtual_info()]
        src = self._adb_source()
        if src is not None:
            try:
                devices.extend(await asyncio.wait_for(src.list_devices(), 20))
            except Exception as exc:  # adb trouble must not hide the virtual device
                detail = ("the adb server did not answer within 20 s"
                          if isinstance(exc, TimeoutError) else str(exc) or type(exc).__name__)
                self.adb_error = f"cannot list adb devices: {detail}"
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

    async def choose_default(self) -> tuple[str, str]:
        """The device a command uses without -d, and a note when that is the virtual device.

        Never a silent fallback (issue 11): one usable phone → it; several → an error naming
        them; only unusable phones (unauthorized, offline …) → an error saying what to do;
        no phone at all → the virtual device, with a note saying so.
        """
        devices = self.devices or await self.refresh()
        if self._adb_source() is None:
            return VIRTUAL_SERIAL, ""  # adb switched off (CETP_INSPECTOR_NO_ADB): asked for
        adb = [d for d in devices if d.kind == "adb"]
        usable = [d for d in adb if d.usable]
        if len(usable) == 1:
            return usable[0].serial, ""
        if usable:
            names = ", ".join(d.describe() for d in usable)
            raise InspectorError(
                "TOO_MANY_DEVICES", f"{len(usable)} phones are attached: {names}",
                hint="pick one with -d SERIAL (e.g. -d " + usable[0].serial + "), or -d virtual "
                "for the virtual device", exit_code=ExitCode.USAGE)
        if adb:
            what = "; ".join(f"{d.describe()}: {d.message}" if d.message else d.describe()
                             for d in adb)
            raise InspectorError(
                "DEVICE_NOT_READY", f"no attached phone can be used yet: {what}",
                hint=adb[0].message or "reconnect the phone and retry; -d virtual uses the "
                "virtual device", exit_code=ExitCode.DEVICE)
        if self.adb_error:
            return VIRTUAL_SERIAL, (f"using the virtual device: no phone could be listed "
                                    f"({self.adb_error})")
        return VIRTUAL_SERIAL, "no phone is attached; using the virtual device"

    async def app_diagnostics(self, serial: str, package: str) -> list[dict[str, str]]:
        """Why `package` on an adb phone may not answer ([] for the virtual device)."""
        src = self._adb
        if serial == VIRTUAL_SERIAL or not isinstance(src, AdbLayerSource):
            return []
        return await src.app_diagnostics(serial, package)

    def diagnostics(self, serial: str) -> list[dict[str, str]]:
        """What the last connect to an adb phone found (none for the virtual device)."""
        src = self._adb
        if serial == VIRTUAL_SERIAL or not isinstance(src, AdbLayerSource):
            return []
        return src.diagnostics(serial)

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
        """Stop tracking, and end every relay session on a phone (forward removed, the
        relay's standby bucket and Doze allowlist put back: docs/devices.md)."""
        tracking, self._tracking = self._tracking, None
        if tracking is not None:
            await tracking.layer.stop()
        src = self._adb
        if isinstance(src, AdbLayerSource) and src is not tracking and src._layer is not None:
            await src._layer.stop()
        await self.virtual.close()
