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
import inspect
import logging
import secrets
import shutil
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from inspector.android.manifest import ManifestFacts
from inspector.android.rules import explain_broadcast_timeout
from inspector.protocol.bundle import (
    Bundle,
    BundleArray,
    FileDescriptorHandle,
    Int,
    Long,
    PendingIntentHandle,
)
from inspector.relay.api import (
    BAD_ARGS,
    IPC_FAILED,
    NOT_FOUND,
    SECURITY,
    TIMEOUT,
    TOO_LARGE,
    HelloInfo,
    RelayError,
    ServerConnection,
)
from inspector.relay.hello import OPS as RELAY_OPS
from inspector.tasks import Spawner
from inspector.virtual.android_platform import AndroidPlatform
from inspector.virtual.app import (
    RELAY_PACKAGE,
    RELAY_UID,
    CallContext,
    Caller,
    FileSource,
    PendingActivity,
    ProcessKilled,
    VirtualApp,
)
from inspector.virtual.faults import Faults
from inspector.virtual.logcat import LogChannel
from inspector.virtual.manifest import (
    EXT_META,
    TOOL_PROVIDER_ACTION,
    fake_cert_sha256,
)
from inspector.virtual.screen import VirtualScreen

log = logging.getLogger(__name__)

SERIAL = "virtual"
RELAY_VERSION_CODE = 1
RELAY_VERSION_NAME = "virtual-0.1.0"
# The virtual device serves every whitelisted relay op (docs/relay-protocol.md §4).
CAPABILITIES = tuple(sorted(RELAY_OPS))
EXTENSION_AUTHORITY_SUFFIX = ".andyclaw.extension"
FIRST_APP_UID = 10_100
RESULT_OK = -1
RESULT_CANCELED = 0


class ConfirmationRequest(BaseModel):
    """What the confirmation "screen" shows (the `confirmation_request` event, §5)."""

    model_config = ConfigDict(frozen=True)

    confirmation_id: str
    package: str
    title: str
    target: str
    action: str
    parameters: dict[str, str]
    consequences: str

    def to_event(self) -> Bundle:
        return Bundle(
            event="confirmation_request",
            confirmation_id=self.confirmation_id,
            package=self.package,
            title=self.title,
            target=self.target,
            action=self.action,
            parameters=Bundle(self.parameters),
            consequences=self.consequences,
        )


ConfirmationHandler = Callable[[ConfirmationRequest], Awaitable[bool | None] | bool | None]
"""Front-end policy: return True/False to answer, None to wait for `answer_confirmation`."""


@dataclass
class _Handle:
    connection_id: str
    target: PendingActivity | FileSource


def _str(args: Bundle, key: str, *, optional: bool = False) -> Any:
    v = args.get(key)
    if v is None and optional:
        return None
    if not isinstance(v, str):
        raise RelayError(BAD_ARGS, f"{key} must be a String")
    return v


def _int(args: Bundle, key: str, default: int | None = None) -> int:
    v = args.get(key)
    if v is None and default is not None:
        return default
    if not isinstance(v, Int | Long) or isinstance(v, bool):
        raise RelayError(BAD_ARGS, f"{key} must be an int")
    return int(v)


def _bundle(args: Bundle, key: str, *, optional: bool = True) -> Bundle:
    v = args.get(key)
    if v is None and optional:
        return Bundle()
    if not isinstance(v, Bundle):
        raise RelayError(BAD_ARGS, f"{key} must be a Bundle")
    return v


class VirtualDevice:
    """A phone in a box. Implements `inspector.relay.api.RelayBackend`."""

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
        self._handles: dict[str, _Handle] = {}
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

    # --- helpers for apps -----------------------------------------------------------------------
    def register_pending_intent(
        self, ctx: CallContext, activity: PendingActivity
    ) -> PendingIntentHandle:
        hid = "pi_" + secrets.token_hex(8)
        self._handles[hid] = _Handle(ctx.connection_id, activity)
        # PendingIntent.isImmutable()/isActivity() exist from API 31: below, the relay
        # cannot tell, and reports both as unknown (docs/relay-protocol.md)
        flags = 0
        if self.android.api >= 31:
            flags = PendingIntentHandle.IMMUTABLE_KNOWN | PendingIntentHandle.KIND_KNOWN
            if activity.kind == "activity":
                flags |= PendingIntentHandle.ACTIVITY
            if activity.immutable:
                flags |= PendingIntentHandle.IMMUTABLE
        return PendingIntentHandle(hid, activity.package, flags)

    def register_file(self, ctx: CallContext, source: FileSource) -> FileDescriptorHandle:
        source = self.faults.wrap_file(ctx.app.package, source)
        hid = "fd_" + secrets.token_hex(8)
        self._handles[hid] = _Handle(ctx.connection_id, source)
        return FileDescriptorHandle(hid, source.size)

    def _handle(self, args: Bundle, conn: ServerConnection, kind: type) -> Any:
        hid = _str(args, "handle")
        h = self._handles.get(hid)
        if h is None or h.connection_id != conn.connection_id or not isinstance(h.target, kind):
            raise RelayError(NOT_FOUND, f"no such handle {hid[:40]!r} on this connection")
        return h.target

    async def _in_process(
        self, app: VirtualApp, coro: Coroutine[Any, Any, Any], what: str, conn: ServerConnection
    ) -> Any:
        """Run app code inside its process: a kill during the call is a dead binder.

        `coro` is always either awaited or closed: a request cancelled during an injected
        delay (or an app that cannot start) must not leave a never-awaited coroutine."""
        try:
            if self.faults.delays:
                await self.faults.before_ipc(app.package)
            app.ensure_process()
            self.logcat.crash_if_armed(app, what)
        except BaseException:
            coro.close()
            raise
        # The app code runs inline in this request's task (no extra task per IPC: small calls
        # stay cheap); the task is registered with the app so a process kill interrupts it.
        # Background work an app starts (operations) lives in its own tasks and outlives a
        # cancelled request, as on Android.
        task = asyncio.current_task()
        assert task is not None
        app.ipc_tasks.add(task)
        try:
            result = await coro
        except asyncio.CancelledError:
            if task not in app.killed_ipc:
                raise
            app.killed_ipc.discard(task)
            task.uncancel()
            raise RelayError(
                IPC_FAILED, f"{app.package} died during {what} (DeadObjectException)"
            ) from None
        except ProcessKilled:
            raise RelayError(
                IPC_FAILED, f"{app.package} died during {what} (DeadObjectException)"
            ) from None
        except RelayError:
            raise
        except NotImplementedError:
            raise RelayError(NOT_FOUND, f"{app.package} has no component for {what}") from None
        except Exception as exc:
            log.warning("virtual app %s crashed in %s: %r", app.package, what, exc)
            raise RelayError(
                IPC_FAILED, f"{app.package} crashed during {what}: {type(exc).__name__}"
            ) from None
        finally:
            app.ipc_tasks.discard(task)
        if self.faults.take_drop():
            close = getattr(conn, "close", None)
            if close is not None:
                close()
            raise RelayError(IPC_FAILED, "connection dropped by fault injection")
        return result

    def _ctx(self, app: VirtualApp, conn: ServerConnection) -> CallContext:
        return CallContext(self, app, self.caller_of(conn), conn.connection_id)

    def _provider_app(self, authority: str, conn: ServerConnection | None = None) -> VirtualApp:
        """The app serving `authority`, acquired as the connection's caller would: package
        visibility, exported and permission rules (inspector/android/rules.py)."""
        for app in self.apps.values():
            for p in app.manifest.providers:
                if p.authority == authority and p.enabled:
                    caller = self.caller_of(conn) if conn is not None else Caller()
                    self.platform().check_provider(caller, app, p)
                    return app
        raise RelayError(NOT_FOUND, f"Unknown authority {authority[:120]}")

    # --- operations -----------------------------------------------------------------------------
    async def _op_discover(self, args: Bundle, conn: ServerConnection) -> Bundle:
        only = _str(args, "package", optional=True)
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

    async def _op_call(self, args: Bundle, conn: ServerConnection) -> Bundle:
        authority = _str(args, "authority")
        method = _str(args, "method")
        arg = _str(args, "arg", optional=True)
        extras = args.get("extras")
        if extras is not None and not isinstance(extras, Bundle):
            raise RelayError(BAD_ARGS, "extras must be a Bundle or null")
        app = self._provider_app(authority, conn)
        self.faults.check_cold(app, authority)
        ctx = self._ctx(app, conn)
        reply = await self._in_process(
            app, app.call(ctx, authority, method, arg, extras), f"call {method[:40]}", conn
        )
        return Bundle(reply=reply)

    async def _op_read_file(self, args: Bundle, conn: ServerConnection) -> AsyncIterator[bytes]:
        source: FileSource = self._handle(args, conn, FileSource)
        max_bytes = _int(args, "max_bytes")
        chunk = _int(args, "chunk_size", 262_144)
        if source.size > max_bytes:
            raise RelayError(
                TOO_LARGE, f"the file is {source.size} bytes, more than max_bytes ({max_bytes})"
            )
        return source.read(chunk)

    async def _op_close_handle(self, args: Bundle, conn: ServerConnection) -> Bundle:
        hid = _str(args, "handle")
        h = self._handles.get(hid)
        closed = h is not None and h.connection_id == conn.connection_id
        if closed:
            del self._handles[hid]
        return Bundle(closed=closed)

    async def _op_launch_pending_intent(self, args: Bundle, conn: ServerConnection) -> Bundle:
        activity: PendingActivity = self._handle(args, conn, PendingActivity)
        launch = self.platform().pending_intent(
            _str(args, "handle"), kind=activity.kind, new_task=activity.new_task)
        if launch.outcome == "cancelled":
            raise self.android.error(launch.verdict)
        if launch.outcome == "no_result":
            # a service/broadcast PendingIntent runs, but the relay's onActivityResult never
            # comes: the phone relay waits out its timeout (rule pending_intent_non_activity)
            self.android.started(activity.package)
            raise self.android.error(launch.verdict, TIMEOUT)
        self.android.started(activity.package)
        if launch.outcome == "cancelled_new_task":
            # the screen shows in its own task; the result was RESULT_CANCELED at once
            self.spawner.spawn(self._answer_later(activity), name="new-task-confirmation")
            return Bundle(result_code=Int(RESULT_CANCELED), data=None)
        approved = True
        if activity.screen is not None:
            approved = await self.show_confirmation(activity)
        app = self.app(activity.package)
        app.ensure_process()
        code, data = await activity.on_result(approved)
        return Bundle(result_code=Int(code), data=data)

    async def _answer_later(self, activity: PendingActivity) -> None:
        """A NEW_TASK confirmation: the user still answers it, the relay never hears."""
        approved = True if activity.screen is None else await self.show_confirmation(activity)
        self.app(activity.package).ensure_process()
        await activity.on_result(approved)

    async def show_confirmation(self, activity: PendingActivity) -> bool:
        """Put the provider's confirmation screen up and wait for the user's answer."""
        assert activity.screen is not None
        s = activity.screen
        req = ConfirmationRequest(
            confirmation_id="cr_" + secrets.token_hex(8),
            package=activity.package,
            title=s.title,
            target=s.target,
            action=s.action,
            parameters=dict(s.parameters),
            consequences=s.consequences,
        )
        fut: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._confirmations[req.confirmation_id] = fut
        self.pending_confirmations[req.confirmation_id] = req
        try:
            self.emit_all(req.to_event())
            if self.confirmation_handler is not None:
                answer = self.confirmation_handler(req)
                if inspect.isawaitable(answer):
                    answer = await answer
                if answer is not None and not fut.done():
                    fut.set_result(bool(answer))
            return await fut
        finally:
            self._confirmations.pop(req.confirmation_id, None)
            self.pending_confirmations.pop(req.confirmation_id, None)

    def answer(self, confirmation_id: str, approve: bool) -> bool:
        """Answer a confirmation screen (in-process front ends call this directly)."""
        fut = self._confirmations.get(confirmation_id)
        if fut is None or fut.done():
            return False
        fut.set_result(approve)
        return True

    async def _op_answer_confirmation(self, args: Bundle, conn: ServerConnection) -> Bundle:
        cid = _str(args, "confirmation_id")
        approve = args.get("approve")
        if not isinstance(approve, bool):
            raise RelayError(BAD_ARGS, "approve must be a boolean")
        return Bundle(accepted=self.answer(cid, approve))

    def _component_app(self, package: str) -> VirtualApp:
        return self.app(package)

    async def _op_bind_transact(self, args: Bundle, conn: ServerConnection) -> Bundle:
        package = _str(args, "package")
        action = _str(args, "action")
        descriptor = _str(args, "descriptor")
        code = _int(args, "code")
        strings = args.get("strings") or ()
        app = self.app(package)
        services = [s for s in app.manifest.services if action in s.actions and s.enabled]
        if not services:
            raise RelayError(NOT_FOUND, f"{package} has no service for action {action[:100]}")
        if not services[0].exported:
            raise RelayError(SECURITY, f"the service {services[0].name} is not exported")
        self.platform().started(package)
        if action in app.null_binding_actions:
            # onBind returned null (rule null_binding): onNullBinding from API 28, else
            # silence until the bind times out (then a "likely null binding" IPC_FAILED)
            verdict = self.android.null_binding(_int(args, "timeout_ms", 30_000))
            if self.android.api < 28:
                await asyncio.sleep(_int(args, "timeout_ms", 30_000) / 1000.0 * 0.9)
            raise self.android.error(verdict)
        ctx = self._ctx(app, conn)
        r = await self._in_process(
            app, app.transact(ctx, action, descriptor, code, list(strings)), "bind_transact", conn
        )
        exc = None
        if r.exception_class is not None:
            exc = Bundle({"class": r.exception_class, "message": r.exception_message})
        return Bundle(exception=exc, reply=r.reply)

    async def _op_broadcast(self, args: Bundle, conn: ServerConnection) -> Bundle:
        package = _str(args, "package")
        action = _str(args, "action")
        extras = _bundle(args, "extras")
        reply_action = _str(args, "reply_action")
        timeout_s = _int(args, "timeout_ms", 30_000) / 1000.0
        include_stopped = args.get("include_stopped") is True
        app = self.app(package)
        receivers = [r for r in app.manifest.receivers if action in r.actions]
        started = time.monotonic()
        reply: tuple[str, Bundle] | None = None
        # rule stopped_package_broadcast: a stopped package's receivers are skipped unless
        # the broadcast includes stopped packages (FLAG_INCLUDE_STOPPED_PACKAGES)
        target_stopped = package in self.platform().stopped
        delivered = self.platform().check_broadcast(package, include_stopped).allowed
        if delivered and receivers and receivers[0].exported and receivers[0].enabled:
            self.android.started(package)
            sent = Bundle(extras)
            sent["response_action"] = reply_action
            ctx = self._ctx(app, conn)
            reply = await self._in_process(
                app, app.on_broadcast(ctx, action, sent), "broadcast", conn
            )
        # the fields the Java relay (versionCode 3+) adds, so a timeout explains itself
        facts = Bundle(reply_action=reply_action, include_stopped=include_stopped,
                       target_stopped=target_stopped)
        if reply is not None and reply[0] == reply_action:
            return Bundle(reply=reply[1], timed_out=False, **facts)
        # nobody answered on reply_action: wait out the timeout, as the relay does (finishing
        # a little early so the server's own per-op timeout does not pre-empt the answer)
        remaining = timeout_s * 0.9 - (time.monotonic() - started)
        if remaining > 0:
            await asyncio.sleep(remaining)
        return Bundle(reply=None, timed_out=True, **facts, detail=explain_broadcast_timeout(
            target_stopped, include_stopped, int(timeout_s * 1000)))

    async def _op_start_activity(self, args: Bundle, conn: ServerConnection) -> Bundle:
        package = _str(args, "package")
        action = _str(args, "action")
        extras = _bundle(args, "extras")
        app = self.app(package)
        m = app.manifest
        acts = [a for a in m.activities if action in a.actions and a.enabled]
        if not acts:
            return Bundle(launched=False, component=None)
        if not acts[0].exported:
            raise RelayError(SECURITY, f"the activity {acts[0].name} is not exported")
        self.platform().check_activity_start()  # rule background_activity_start
        self.android.started(package)
        ctx = self._ctx(app, conn)
        await self._in_process(
            app, app.on_activity_start(ctx, action, extras), "start_activity", conn
        )
        self.screen.activity_started(package, m.qualify(acts[0].name))
        return Bundle(launched=True, component=f"{package}/{m.qualify(acts[0].name)}")

    async def _op_read_resource(self, args: Bundle, conn: ServerConnection) -> Bundle:
        app = self.app(_str(args, "package"))
        rid = _int(args, "resource_id")
        max_bytes = _int(args, "max_bytes")
        res = app.raw_resources().get(rid)
        if res is None:
            raise RelayError(NOT_FOUND, f"{app.package} has no resource 0x{rid & 0xFFFFFFFF:08x}")
        name, data = res
        if len(data) > max_bytes:
            raise RelayError(TOO_LARGE, f"the resource is {len(data)} bytes (max {max_bytes})")
        return Bundle(data=data, name=f"{app.package}:{name}")

    async def _op_wake_provider(self, args: Bundle, conn: ServerConnection) -> Bundle:
        authority = _str(args, "authority")
        package = _str(args, "package")
        mode = _str(args, "mode")
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
        package = _str(args, "package")
        self.app(package).kill_process()
        # rule stopped_state (and, on API 35, force_stop_cancels_pending_intents)
        self.platform().force_stopped(package, {
            hid: h.target.package for hid, h in self._handles.items()
            if isinstance(h.target, PendingActivity)})
        return Bundle(stopped=True)

    async def _op_logcat(self, args: Bundle, conn: ServerConnection) -> Bundle:
        return self.logcat.op_logcat(args, conn)

    async def _op_screencap(self, args: Bundle, conn: ServerConnection) -> Bundle:
        return await self.screen.op_screencap(args)

    async def _op_input(self, args: Bundle, conn: ServerConnection) -> Bundle:
        return self.screen.op_input(args)

    async def _op_fault(self, args: Bundle, conn: ServerConnection) -> Bundle:
        self.faults.arm(args)
        return Bundle(armed=True)
