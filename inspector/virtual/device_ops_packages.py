"""Package ops of the virtual device: `discover` (what PackageManager shows the caller),
`read_resource`, `wake_provider` and `force_stop`."""

from __future__ import annotations

from inspector.protocol.bundle import (
    Bundle,
    BundleArray,
)
from inspector.relay.api import (
    BAD_ARGS,
    NOT_FOUND,
    TOO_LARGE,
    RelayError,
    ServerConnection,
)
from inspector.virtual.app import (
    PendingActivity,
)
from inspector.virtual.device_args import arg_int, arg_str
from inspector.virtual.device_types import (
    EXTENSION_AUTHORITY_SUFFIX,
)
from inspector.virtual.manifest import EXT_META, TOOL_PROVIDER_ACTION


class PackageOpsMixin:
    """Mixed into `VirtualDevice` (inspector.virtual.device)."""

    async def _op_discover(self, args: Bundle, conn: ServerConnection) -> Bundle:
        only = arg_str(args, "package", optional=True)
        records = []
        caller = self.caller_of(conn)
        for app in self.apps.values():
            if only is not None and app.package != only:
                continue
            if not self.platform().visible(caller, app).allowed:
                continue  # rule package_visibility: PackageManager does not return it
            m = app.manifest
            listed = (
                any(TOOL_PROVIDER_ACTION in s.actions for s in m.services)
                or m.app_meta_data.get(EXT_META) is True
                or any(
                    a.startswith("org.ethereumphone.andyclaw.")
                    for s in m.services
                    for a in s.actions
                )
                or any(
                    a.startswith("org.ethereumphone.andyclaw.")
                    for c in m.receivers
                    for a in c.actions
                )
                or any(
                    a.startswith("org.ethereumphone.andyclaw.")
                    for c in m.activities
                    for a in c.actions
                )
                or any(p.authority.endswith(EXTENSION_AUTHORITY_SUFFIX) for p in m.providers)
            )
            if listed:
                records.append(m.to_record())
        return Bundle(packages=BundleArray(records))

    async def _op_read_resource(self, args: Bundle, conn: ServerConnection) -> Bundle:
        app = self.app(arg_str(args, "package"))
        rid = arg_int(args, "resource_id")
        max_bytes = arg_int(args, "max_bytes")
        res = app.raw_resources().get(rid)
        if res is None:
            raise RelayError(NOT_FOUND, f"{app.package} has no resource 0x{rid & 0xFFFFFFFF:08x}")
        name, data = res
        if len(data) > max_bytes:
            raise RelayError(TOO_LARGE, f"the resource is {len(data)} bytes (max {max_bytes})")
        return Bundle(data=data, name=f"{app.package}:{name}")

    async def _op_wake_provider(self, args: Bundle, conn: ServerConnection) -> Bundle:
        authority = arg_str(args, "authority")
        package = arg_str(args, "package")
        mode = arg_str(args, "mode")
        if mode not in ("acquire", "launch"):
            raise RelayError(BAD_ARGS, "mode must be 'acquire' or 'launch'")
        app = self.apps.get(package)
        if app is None:
            return Bundle(ok=False, detail=f"package {package} is not installed")
        if authority not in app.manifest.authorities():
            return Bundle(ok=False, detail=f"{package} declares no provider {authority}")
        provider = next(p for p in app.manifest.providers if p.authority == authority)
        try:
            self.platform().check_provider(self.caller_of(conn), app, provider)
            if mode == "launch":
                self.android.check_activity_start()
        except RelayError as exc:
            return Bundle(ok=False, detail=exc.message)
        if not self.faults.wakes(package, mode):
            # the cold_start fault in launch mode: acquireContentProviderClient returns null,
            # which the phone relay reports with this detail (AndroidPlatform.wakeProvider)
            return Bundle(ok=False, detail=f"no provider with authority '{authority[:120]}'")
        was_running = app.process_running
        app.ensure_process()
        how = ("provider acquired (its process is running)" if mode == "acquire"
               else f"launched {package} (its launch intent)")
        state = "it was already running" if was_running else "its process started"
        return Bundle(ok=True, detail=f"{how}; {state}")

    async def _op_force_stop(self, args: Bundle, conn: ServerConnection) -> Bundle:
        package = arg_str(args, "package")
        self.app(package).kill_process()
        # rule stopped_state (and, on API 35, force_stop_cancels_pending_intents)
        self.platform().force_stopped(package, {
            hid: h.target.package for hid, h in self._handles.items()
            if isinstance(h.target, PendingActivity)})
        return Bundle(stopped=True)
