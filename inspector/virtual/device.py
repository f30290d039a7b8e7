"""The virtual device: a `RelayBackend` that behaves like a phone with apps installed.

It answers the same whitelisted operations as the relay APK (docs/relay-protocol.md §4),
routing each IPC to the installed `VirtualApp` that owns the component, as Android would:
`call` by authority, `bind_transact` by service action, `broadcast` by receiver action,
`start_activity` by activity action. PendingIntents and file descriptors become per-
connection handles; a PendingIntent that shows a screen becomes a `confirmation_request`
EVENT (and/or a front-end callback) answered by `answer_confirmation`.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from inspector.android.manifest import ManifestFacts
from inspector.protocol.bundle import Bundle
from inspector.relay.api import (
    NOT_FOUND,
    HelloInfo,
    RelayError,
    ServerConnection,
)
from inspector.tasks import Spawner
from inspector.virtual.android_platform import AndroidPlatform
from inspector.virtual.app import RELAY_PACKAGE, RELAY_UID, Caller, VirtualApp
from inspector.virtual.device_ipc import IpcMixin
from inspector.virtual.device_ops_bridges import BridgeOpsMixin
from inspector.virtual.device_ops_cetp import CetpOpsMixin
from inspector.virtual.device_ops_confirm import ConfirmationOpsMixin
from inspector.virtual.device_ops_packages import PackageOpsMixin
from inspector.virtual.device_ops_system import SystemOpsMixin
from inspector.virtual.device_types import (  # re-exported: callers import them from here
    CAPABILITIES,
    EXTENSION_AUTHORITY_SUFFIX,
    FIRST_APP_UID,
    RELAY_VERSION_CODE,
    RELAY_VERSION_NAME,
    RESULT_CANCELED,
    RESULT_OK,
    SERIAL,
    ConfirmationHandler,
    ConfirmationRequest,
    Handle,
)
from inspector.virtual.faults import Faults
from inspector.virtual.logcat import LogChannel
from inspector.virtual.manifest import fake_cert_sha256
from inspector.virtual.screen import VirtualScreen

__all__ = [
    "CAPABILITIES",
    "EXTENSION_AUTHORITY_SUFFIX",
    "FIRST_APP_UID",
    "RELAY_VERSION_CODE",
    "RELAY_VERSION_NAME",
    "RESULT_CANCELED",
    "RESULT_OK",
    "SERIAL",
    "ConfirmationHandler",
    "ConfirmationRequest",
    "VirtualDevice",
]


class VirtualDevice(
    CetpOpsMixin,
    ConfirmationOpsMixin,
    BridgeOpsMixin,
    PackageOpsMixin,
    SystemOpsMixin,
    IpcMixin,
):
    """A phone in a box. Implements `inspector.relay.api.RelayBackend`.

    This class holds the device's state: installed apps, connections and their callers,
    handles and pending confirmations. The relay ops live in the mixins by family:
    CETP provider calls and files (device_ops_cetp), PendingIntents and confirmations
    (device_ops_confirm), AndyClaw bridges (device_ops_bridges), packages and discovery
    (device_ops_packages), logcat/screen/faults (device_ops_system); running app code
    inside its process is device_ipc."""

    def __init__(
        self,
        state_dir: Path | str | None = None,
        *,
        apps: Iterable[VirtualApp] | None = None,
        plugins: Iterable[Path | str] = (),
        confirmation_handler: ConfirmationHandler | None = None,
        serial: str = SERIAL,
        confirmation_ttl_ms: int | None = None,
        android_api: int | None = None,
        relay_manifest: ManifestFacts | None = None,
        relay_in_front: bool = True,
    ) -> None:
        """`confirmation_ttl_ms` shortens (or lengthens) how long every CETP provider's
        confirmations and resume tokens stay valid (default: each provider's own, 300 s),
        e.g. so a conformance run can test an expired token without waiting minutes.

        `android_api` picks the Android profile whose rules the device enforces (default
        34; `inspector.android.profiles`); `relay_manifest` the relay app's manifest
        (default: the shipped APK's), which decides the relay's permissions;
        `relay_in_front=False` plays a relay whose activity is not resumed (background
        activity starts are then blocked from API 29)."""
        if confirmation_ttl_ms is not None and (
            isinstance(confirmation_ttl_ms, bool)
            or not isinstance(confirmation_ttl_ms, int)
            or confirmation_ttl_ms <= 0
        ):
            raise ValueError(
                f"confirmation_ttl_ms must be a positive int, got {confirmation_ttl_ms!r}"
            )
        self.confirmation_ttl_ms = confirmation_ttl_ms
        # Android rules under one API profile (inspector/virtual/android_platform.py);
        # apps installed while the device is built count as used before (not stopped)
        self.android = AndroidPlatform(android_api, relay_manifest,
                                       relay_in_front=relay_in_front)
        self._booting = True
        self._tmp: str | None = None
        if state_dir is None:
            self._tmp = tempfile.mkdtemp(prefix="cetp-virtual-")
            state_dir = self._tmp
        self.state_dir = Path(state_dir)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.serial = serial
        self.spawner = Spawner()
        self.faults = Faults(self)
        self.logcat = LogChannel(self)  # the device's logcat and crash fault (issue 16)
        self.screen = VirtualScreen(self)  # its screen: screencap / input ops (issue 16)
        self.apps: dict[str, VirtualApp] = {}
        self.confirmation_handler = confirmation_handler
        self._next_uid = FIRST_APP_UID
        self._handles: dict[str, Handle] = {}
        self._connections: dict[str, ServerConnection] = {}
        # the app a connection acts as (inspector.virtual.callers); default: the relay app
        self._callers: dict[str, Caller] = {}
        self._confirmations: dict[str, asyncio.Future[bool]] = {}
        self.pending_confirmations: dict[str, ConfirmationRequest] = {}
        if apps is None:
            from inspector.virtual.apps import default_apps

            apps = default_apps()
        for app in apps:
            self.install(app, notify=False)
        for p in plugins:
            self.load_plugin(p, notify=False)
        self._booting = False

    # --- packages -------------------------------------------------------------------------------
    def install(self, app: VirtualApp, *, notify: bool = True, stopped: bool | None = None) -> None:
        """Install (or replace) an app; connected desktops get `package_changed`.

        A fresh install is in the stopped state (rule stopped_state) unless the device is
        still being built or the install is silent (`notify=False`: setting up plugins,
        bundles, tests; those apps count as used before), or `stopped` says otherwise."""
        replaced = app.package in self.apps
        if replaced:
            old = self.apps.pop(app.package)
            uid = old.uid
            old.close()
        else:
            uid = self._next_uid
            self._next_uid += 1
        if self.confirmation_ttl_ms is not None and hasattr(app, "confirmation_ttl_ms"):
            app.confirmation_ttl_ms = self.confirmation_ttl_ms
        app.attach(self, uid, self.state_dir / "apps" / app.package)
        self.apps[app.package] = app
        if stopped is None:
            stopped = notify and not self._booting
        self.android.installed(app.package, stopped=stopped)
        if notify:
            self._package_event("replaced" if replaced else "added", app.package)

    def uninstall(self, package: str, *, notify: bool = True) -> None:
        app = self.apps.pop(package, None)
        if app is None:
            raise KeyError(f"package {package!r} is not installed")
        app.close()
        if notify:
            self._package_event("removed", package)

    def load_plugin(self, path: Path | str, *, notify: bool = True) -> list[str]:
        """Load a plugin file (docs/virtual-device.md); returns the packages it installed."""
        from inspector.virtual.plugins import load_plugin

        return load_plugin(self, Path(path), notify=notify)

    def app(self, package: str) -> VirtualApp:
        try:
            return self.apps[package]
        except KeyError:
            raise RelayError(NOT_FOUND, f"package {package!r} is not installed") from None

    def _package_event(self, change: str, package: str) -> None:
        self.emit_all(Bundle(event="package_changed", change=change, package=package))

    def emit_all(self, event: Bundle) -> None:
        for conn in list(self._connections.values()):
            if not conn.is_closed():
                with contextlib.suppress(Exception):
                    conn.emit(event)

    # --- RelayBackend ---------------------------------------------------------------------------
    def reinstall_relay(self) -> None:
        """Reinstall the relay app now: it is granted what the installed apps define now
        (rule install_time_grant; what `adb install -r` of the relay does on a phone)."""
        self.android.install_relay(self.apps.values())

    def platform(self) -> AndroidPlatform:
        """The Android rules, with the relay installed on first use (first connection)."""
        self.android.ensure_installed(self.apps.values())
        return self.android

    def hello_info(self, client: str) -> HelloInfo:
        android = self.platform()
        return HelloInfo(
            protocol_version=1,
            relay_version_code=RELAY_VERSION_CODE,
            relay_version_name=RELAY_VERSION_NAME,
            capabilities=CAPABILITIES,
            caller_package=RELAY_PACKAGE,
            caller_uid=RELAY_UID,
            caller_cert_sha256=(fake_cert_sha256(RELAY_PACKAGE),),
            device={
                "serial": self.serial,
                "manufacturer": "CETP Inspector",
                "model": "Virtual Device",
                "sdk_int": android.api,
                "release": android.profile.release,
                "abi": "x86_64",
                # virtual device only: the Android rules it enforces and the relay's grants
                "android_rules": ",".join(x.id for x in android.rules_in_force()),
                "granted_permissions": ",".join(sorted(android.granted(RELAY_PACKAGE))),
            },
            requested_permissions=tuple(android.relay_manifest.uses_permissions),
            held_permissions=android.relay_held_permissions(),
        )

    def connection_opened(self, conn: ServerConnection) -> None:
        self._connections[conn.connection_id] = conn

    def bind_caller(self, conn: ServerConnection, caller: Caller) -> None:
        """Make every IPC on `conn` arrive as `caller` (Binder.getCallingUid(), §7.1)."""
        self._callers[conn.connection_id] = caller

    def caller_of(self, conn: ServerConnection) -> Caller:
        """The identity providers see for calls on `conn` (the relay app unless bound)."""
        return self._callers.get(conn.connection_id) or Caller()

    def connection_closed(self, conn: ServerConnection) -> None:
        self._connections.pop(conn.connection_id, None)
        self._callers.pop(conn.connection_id, None)
        for hid in [h for h, v in self._handles.items() if v.connection_id == conn.connection_id]:
            del self._handles[hid]

    async def handle(self, op: str, args: Bundle, conn: ServerConnection) -> Any:
        self.connection_opened(conn)
        handler = getattr(self, f"_op_{op}", None)
        if handler is None:
            raise RelayError("UNKNOWN_OP", f"the virtual device does not offer {op!r:.60}")
        result: Any = await handler(args, conn)
        return result

    async def aclose(self) -> None:
        """Stop every app and background task; remove a temporary state dir."""
        for app in self.apps.values():
            app.close()
        await self.spawner.cancel_all()
        if self._tmp:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
