"""AndyClaw bridges of the virtual device: `bind_transact` by service action, `broadcast`
by receiver action (with the Java relay's timeout facts) and `start_activity` by activity
action, each under the Android rules (inspector/virtual/android_platform.py)."""

from __future__ import annotations

import asyncio
import time

from inspector.android.rules import explain_broadcast_timeout
from inspector.protocol.bundle import (
    Bundle,
)
from inspector.relay.api import (
    NOT_FOUND,
    SECURITY,
    RelayError,
    ServerConnection,
)
from inspector.virtual.app import (
    VirtualApp,
)
from inspector.virtual.device_args import arg_bundle, arg_int, arg_str


class BridgeOpsMixin:
    """Mixed into `VirtualDevice` (inspector.virtual.device)."""

    def _component_app(self, package: str) -> VirtualApp:
        return self.app(package)

    async def _op_bind_transact(self, args: Bundle, conn: ServerConnection) -> Bundle:
        package = arg_str(args, "package")
        action = arg_str(args, "action")
        descriptor = arg_str(args, "descriptor")
        code = arg_int(args, "code")
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
            verdict = self.android.null_binding(arg_int(args, "timeout_ms", 30_000))
            if self.android.api < 28:
                await asyncio.sleep(arg_int(args, "timeout_ms", 30_000) / 1000.0 * 0.9)
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
        package = arg_str(args, "package")
        action = arg_str(args, "action")
        extras = arg_bundle(args, "extras")
        reply_action = arg_str(args, "reply_action")
        timeout_s = arg_int(args, "timeout_ms", 30_000) / 1000.0
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
        package = arg_str(args, "package")
        action = arg_str(args, "action")
        extras = arg_bundle(args, "extras")
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
